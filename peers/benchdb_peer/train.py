"""benchdb_peer.train: a user's nn.Module training step as a peer of benchdb's `e2e` suite.

    from benchdb_peer import train_peer
    def make(case):                       # the case's parameters: case.batch_size, case.d_model, ...
        model = MyModel(...)
        x, y = case.randint(V, (B, T)), case.randint(V, (B, T))
        return model, lambda m: loss_of(m(x), y)   # or Training(model, loss, optimizer, work)
    train_peer(make)

The kit moves the model to the case's device, then times the case's pass, per iteration:

    forward           fwd: the loss under torch.no_grad()
    forward_backward  fwd with autograd, then bwd: loss.backward()
    train_step        fwd, bwd, then opt: optimizer.step()

Gradients are reset (zero_grad(set_to_none=True)) before each iteration, outside the timed phases.
dtype float32 runs as built; bfloat16 is torch.autocast(bfloat16) over the float32 weights (as
benchdb's mixed precision), float16 autocast(float16) on CUDA only. The optimizer is the one the
factory gives, else AdamW with benchdb's settings. A peer parameter `compile` (bool), when the
sweep declares it, runs the loss through torch.compile(model): the compiled module is what the
validation below runs (a graph that differs from eager mode is caught, not timed), and its first
call there compiles it, before the first timed iteration (also where the check is skipped: an
untimed forward and backward); a dynamo or inductor failure while it compiles makes the case
unsupported with the reason.

Validation, before anything is timed: the loss of the model as it is timed (compiled or not), and
for a pass with a backward the gradients' global norm, against a float64 copy of the model, in
eager mode, on the same inputs (the loss function is handed the copy; one that computes with none
of its parameters or buffers, a model it captured, is an error) (e2e rule: |x − ref| <=
atol·|ref|); in float32 (without TF32) also every parameter's gradient, element by element
(<= atol·max |ref| of that parameter's gradient, as benchdb checks its own model's), which
catches a backward of the right norm and the wrong sign. Not under autocast or TF32: benchdb
holds its own model to that rule on a 2-layer model of d_model 64, while the kit checks the
case's own; at d_model 256-512, 4 layers, bfloat16 autocast's worst gradient tensor was already
1.4-1.8e-2 of its largest value (bound 4e-2) and float16's 2.3-4.3e-2 (the Q and K weights). The copy needs 8 (16 with gradients) bytes per parameter; when that is over a quarter
of the device's memory (the GPU's, else the case's mem_limit or the host's available memory) the
check is skipped and the case stays unvalidated (`check_skipped` in impl_info says why). For
train_step, the optimizer's step on those gradients: every parameter with a nonzero gradient must
be one the optimizer holds (CheckFailed otherwise), and a fresh Adam/AdamW's every update is
checked against the float64 step of its own settings (check opt_step); the weights and
optimizer state are restored.

Work: none by default (a report shows no FLOP rate for the case); `work="benchdb"` when the model is
benchdb's own transformer (its FLOPs apply), or {"fwd": (flops, bytes), ...} per phase.
"""
import contextlib
import copy
import sys

from .measure import Memory, run_iterations
from .protocol import CheckFailed, Unsupported, serve
from . import check as chk
from . import torchinfo

#: benchdb's AdamW (kernels/model/model.c), the optimizer when the factory gives none.
ADAMW = dict(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.01)


class Training:
    """What a factory returns: model (nn.Module), loss (callable(model) -> scalar tensor on the
    case's inputs), optimizer (None: AdamW with benchdb's settings, for train_step), work (None,
    "benchdb", or {phase: (flops, bytes)})."""

    def __init__(self, model, loss, optimizer=None, work=None):
        self.model, self.loss, self.optimizer, self.work = model, loss, optimizer, work


def _memory_budget(torch, case):
    if case.device == "cuda":
        return torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    if case.mem_limit > 0:
        return case.mem_limit
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _grad_norm(torch, model):
    total = 0.0
    for p in model.parameters():
        if p.grad is not None:
            total += float(p.grad.double().pow(2).sum().item())
    return total ** 0.5


def _grads(model):
    """name -> gradient of each parameter that takes one (None where the backward left none)."""
    return [(name, p.grad) for name, p in model.named_parameters() if p.requires_grad]


def reference_unfit(torch, case, model):
    """Why the float64 reference of model does not fit (a reason), or None."""
    n = sum(p.numel() for p in model.parameters())
    need = n * 8 * (2 if "bwd" in case.phases else 1)
    if "opt" in case.phases:   # the step's check: the saved weights and the float64 updates
        need += n * 16
    budget = _memory_budget(torch, case)
    if not budget or need > budget // 4:
        return ("the float64 reference needs %d bytes, over a quarter of the %d bytes this device "
                "has" % (need, budget))
    return None


def _adam_reference(torch, optimizer):
    """The float64 first step of a fresh torch.optim.Adam or AdamW from the gradients params hold,
    as PyTorch defines it: per parameter, the update p' - p; None where the optimizer is another
    or not fresh (its own state, amsgrad, maximize: no reference is kept for those)."""
    if type(optimizer) not in (torch.optim.Adam, torch.optim.AdamW) or optimizer.state:
        return None
    updates = {}
    for group in optimizer.param_groups:
        if group.get("amsgrad") or group.get("maximize") or torch.is_tensor(group["lr"]):
            return None
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            w, g = p.detach().double(), p.grad.detach().double()
            # AdamW, and Adam(decoupled_weight_decay=True), decay the weights; Adam adds an L2 term
            if type(optimizer) is torch.optim.AdamW or group.get("decoupled_weight_decay"):
                decayed = w * (1 - lr * wd)
            else:
                g = g + wd * w
                decayed = w
            # step 1: the bias-corrected moments are g and g^2
            updates[id(p)] = decayed - lr * g / (g.abs() + eps) - w
    return updates


def _compare_step(torch, out, case, named, saved, reference):
    """Each parameter's update against the float64 step: an element passes when
    |update - ref| <= atol * max |ref| of that parameter's update + 2 * eps(dtype) * |p| (the
    rounding of the updated parameter, and of the decayed one, to its own dtype). One check line
    (stage opt_step), the worst element of all."""
    best = None
    for (name, p), before in zip(named, saved):
        ref = reference.get(id(p))
        if ref is None or ref.numel() == 0:
            continue
        got = p.detach().double() - before.double()
        scale = float(ref.abs().max())
        # atol * this = atol * max |ref| + 2 * eps(dtype) * |p|, element by element
        scale = (scale if scale > 0 else 1.0) + \
            2 * torch.finfo(p.dtype).eps * before.double().abs() / case.atol
        r, diff, bound, idx = chk.worst(got, ref, case.atol, 0.0, scale)
        if best is None or r > best[0]:
            where = "%s[%s]" % (name, ", ".join(map(str, idx))) if idx else name
            best = (r, diff, bound, where)
    if best is not None:
        out.check("opt_step", best[1], best[2], "update of " + best[3])


def check_step(torch, case, setup, optimizer, out):
    """The optimizer's step on the validated gradients, before anything is timed. Every parameter
    of the model with a nonzero gradient must be one the optimizer holds (one left out, or an
    optimizer over another model's parameters, trains nothing and times less: CheckFailed); for
    a fresh Adam or AdamW, every update is checked against the float64 step (stage opt_step, the
    e2e rule with scale max |ref| of the parameter's update, plus the rounding of the stored
    weight). The parameters (the model's and any other the optimizer holds) and the optimizer's
    state are restored afterwards, so the timed steps start where they would have."""
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    named = [(n, p) for n, p in setup.model.named_parameters() if p.requires_grad]
    graded = [n for n, p in named if p.grad is not None and bool((p.grad != 0).any())]
    left_out = [n for n, p in named if n in graded and id(p) not in held]
    if left_out:
        raise CheckFailed("peer check failed: the optimizer does not hold %d of the %d parameters "
                          "with a gradient (%s%s): optimizer.step() would not train them; freeze "
                          "one with requires_grad_(False)"
                          % (len(left_out), len(graded), ", ".join(left_out[:3]),
                             ", ..." if len(left_out) > 3 else ""))
    ours = {id(p) for _, p in named}
    others = [p for group in optimizer.param_groups for p in group["params"] if id(p) not in ours]
    restore = [p for _, p in named] + others
    saved = [p.detach().clone() for p in restore]
    state = copy.deepcopy(optimizer.state_dict())
    reference = _adam_reference(torch, optimizer)
    try:
        optimizer.step()
        if reference is not None:
            _compare_step(torch, out, case, named, saved[:len(named)], reference)
    finally:
        with torch.no_grad():
            for p, before in zip(restore, saved):
                p.copy_(before)
        optimizer.load_state_dict(state)


def _uses(torch, model):
    """A context whose .seen says whether any torch function was handed one of model's parameters
    or buffers in it (True from the start where nothing can tell: a model without any, or one that
    holds TorchScript, whose ops run in its interpreter without torch functions)."""
    owned = {id(t) for t in list(model.parameters()) + list(model.buffers())}
    if any(isinstance(m, torch.jit.ScriptModule) for m in model.modules()):
        owned = set()

    class Uses(torch.overrides.TorchFunctionMode):
        seen = not owned

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if not self.seen:
                for arg in list(args) + list(kwargs.values()):
                    items = arg if isinstance(arg, (list, tuple)) else (arg,)
                    if any(id(t) in owned for t in items if isinstance(t, torch.Tensor)):
                        self.seen = True
                        break
            return func(*args, **kwargs)
    return Uses()


def validate(torch, case, setup, autocast, out, optimizer=None, run_model=None,
             compiling=contextlib.nullcontext):
    """The loss (and gradients, and the optimizer's step) of run_model — what is timed: the
    torch.compile'd module under `compile`, else setup.model — against a float64 copy of
    setup.model, in eager mode, on the same inputs. compiling: the context that runs run_model's
    first call (where it compiles); CheckFailed on a failure."""
    backward = "bwd" in case.phases
    run_model = setup.model if run_model is None else run_model
    reference = copy.deepcopy(setup.model).double()
    seed = case.seed + 7
    torch.manual_seed(seed)
    with torch.set_grad_enabled(backward):
        with _uses(torch, reference) as uses:
            ref_loss = setup.loss(reference)
        if not uses.seen:
            raise ValueError("the loss function did not compute with the model it was given: "
                             "loss(m) must use m (m(x)), not a model it captured (the check would "
                             "compare that model with itself, and compile would not reach it)")
        if backward:
            ref_loss.backward()
    ref_norm = _grad_norm(torch, reference) if backward else None
    per_tensor = backward and case.dtype == "float32" and not case.tf32
    ref_grads = _grads(reference) if per_tensor else None
    ref_loss = float(ref_loss.item())
    del reference
    torch.manual_seed(seed)
    with compiling(True):
        with torch.set_grad_enabled(backward), autocast():
            loss = setup.loss(run_model)
        if backward:
            loss.backward()
    value = float(loss.float().item())
    norm = _grad_norm(torch, setup.model) if backward else None
    grads = _grads(setup.model) if per_tensor else None
    chk.scalar(out, "loss", value, ref_loss, case.atol)
    if backward:
        chk.scalar(out, "grad_norm", norm, ref_norm, case.atol)
    if per_tensor:
        chk.gradients(out, "grad", grads, ref_grads, case.atol, case.rtol)
    ref_grads = grads = None   # the float64 gradients: not held through the step's check
    if optimizer is not None and "opt" in case.phases:
        check_step(torch, case, setup, optimizer, out)
    setup.model.zero_grad(set_to_none=True)


class _Step:
    def __init__(self, torch, case, setup, run_model, optimizer, autocast, compiling):
        self.torch, self.case, self.setup = torch, case, setup
        self.run_model, self.optimizer, self.autocast = run_model, optimizer, autocast
        self.grad = "bwd" in case.phases
        self.compiling = compiling
        self.first = True
        self.loss = None

    def prepare(self):
        if self.grad:
            self.setup.model.zero_grad(set_to_none=True)

    def phase(self, name):
        return getattr(self, name)

    def fwd(self):
        with self.compiling(self.first), self.torch.set_grad_enabled(self.grad), self.autocast():
            self.loss = self.setup.loss(self.run_model)

    def bwd(self):
        with self.compiling(self.first):   # the backward graph compiles here
            self.loss.backward()
        self.first = False

    def opt(self):
        self.optimizer.step()


def run_case(factory, case, out, validate_first=True, info_extra=None, compile_model=None):
    """One e2e case of factory's training step. compile_model: True/False overrides the case's
    `compile` peer parameter (None: the parameter, default false)."""
    if case.suite != "e2e":
        raise Unsupported("this peer runs suite e2e, not %s" % case.suite)
    if case.pass_ not in ("forward", "forward_backward", "train_step"):
        raise Unsupported("pass %s is not an e2e pass (forward, forward_backward, train_step)" % case.pass_)
    torch = torchinfo.prepare(case)
    amp = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}
    if case.dtype not in amp:
        raise Unsupported("dtype %s (valid: float32, bfloat16, float16)" % case.dtype)
    if case.dtype == "float16" and case.device != "cuda":
        raise Unsupported("float16 autocast runs on cuda only")
    if compile_model is None:
        compile_model = torchinfo.compile_asked(case)
    if compile_model and not hasattr(torch, "compile"):
        raise Unsupported("compile needs torch.compile (torch >= 2.0; this is torch %s)" % torch.__version__)
    if case.device == "cuda":   # per case: a persistent peer's earlier case may have set another
        total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
        torch.cuda.set_per_process_memory_fraction(
            min(1.0, case.mem_limit / total) if case.mem_limit > 0 else 1.0)

    def autocast():
        if amp[case.dtype] is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=case.device, dtype=amp[case.dtype])

    memory = Memory(case)
    torch.manual_seed(case.seed)
    made = factory(case)
    setup = made if isinstance(made, Training) else Training(*made)
    setup.model = setup.model.to(case.device)
    params = list(setup.model.parameters())
    extra = dict(info_extra or {}, compile=compile_model, params=sum(p.numel() for p in params))
    if case.device == "cpu" and case.mem_limit > 0:
        # A lower bound (activations not counted): weights, gradients, AdamW's two moments.
        need = sum(p.numel() * p.element_size() for p in params) * (
            1 + ("bwd" in case.phases) + 2 * ("opt" in case.phases))
        if need > case.mem_limit:
            out.info_json(torchinfo.info(torch, case, **extra))
            raise MemoryError("parameters, gradients and optimizer state alone need %d bytes, beyond "
                              "the memory limit of %d bytes" % (need, case.mem_limit))
    out.memory("param", sum(p.numel() * p.element_size() for p in params))
    optimizer = setup.optimizer
    if optimizer is None and "opt" in case.phases:
        optimizer = torch.optim.AdamW(params, **ADAMW)
    if compile_model and case.device == "cpu":
        extra.update(torchinfo.compile_isa(torch))
    unfit = reference_unfit(torch, case, setup.model) if validate_first else "check=False"
    if unfit:
        extra["check_skipped"] = unfit
    out.info_json(torchinfo.info(torch, case, **extra))
    run_model = torchinfo.compile_fresh(torch, setup.model) if compile_model else setup.model

    def compiling(first):   # a compile failure, where it compiles, is the case's unsupported
        return torchinfo.compile_failures(compile_model and first)

    # What is timed is what is checked: the compiled module's loss and gradients. Its first call
    # compiles it (the forward's graph, and the backward's at the first backward): that happens
    # here, before the first timed iteration, also where the check is skipped.
    if not unfit:
        validate(torch, case, setup, autocast, out, optimizer, run_model, compiling)
    elif compile_model:
        with compiling(True):
            with torch.set_grad_enabled("bwd" in case.phases), autocast():
                loss = setup.loss(run_model)
            if "bwd" in case.phases:
                loss.backward()
        del loss
        setup.model.zero_grad(set_to_none=True)
    if setup.work == "benchdb":
        out.work_benchdb()
    elif isinstance(setup.work, dict):
        for phase in case.phases:
            flops, nbytes = setup.work.get(phase, (None, None))
            out.work(phase, flops, nbytes)
    step = _Step(torch, case, setup, run_model, optimizer, autocast, compiling)
    run_iterations(case, out, step, memory)
    memory.report(out, case.phases)
    loss = step.loss
    if loss is not None and not torch.isfinite(loss.detach().float()).item():
        raise RuntimeError("the loss is %r after the last iteration" % float(loss.float().item()))


def train_peer(factory, check=True):
    """Serve factory's training step as a peer (one case, or a persistent peer's cases) and exit.
    factory(case) returns (model, loss) or (model, loss, optimizer) or a Training."""
    sys.exit(serve(lambda case, out: run_case(factory, case, out, check)))
