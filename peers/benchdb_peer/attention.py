"""benchdb_peer.attention: a user's attention function as a peer of benchdb's `attention` suite.

    from benchdb_peer import attention_peer
    attention_peer(my_attention)          # my_attention(q, k, v, causal) -> o

q, k, v are (batch_size, heads, seq_len, head_dim) tensors of the case's dtype on its device,
uniform in [-1, 1) from the case's seed; the function returns o of the same shape, dtype and
device, softmax(q kᵀ / sqrt(head_dim)) v with the causal mask when causal is true, and leaves its
inputs as they were (the same q, k, v are given to every iteration). The kit validates it against
the float64 attention (check.py) before anything is timed — an output of another dtype or device,
or inputs changed by the call, are an error; it is called once more on new values in the same
tensors, so that a result kept from an earlier call fails — then times the case's pass:

    forward           fwd: o = f(q, k, v, causal) under torch.no_grad()
    backward          bwd: o.backward(dO), after an untimed forward with autograd (from saved state)
    forward_backward  fwd with autograd, then bwd: o.backward(dO)

Gradients are reset (set to None) before each iteration, outside the timed phases. The function
may raise benchdb_peer.Unsupported("reason") for a combination it does not run. The work is
benchdb's attention workload (`work benchdb`): its FLOPs, 4·B·H·S²·D per forward (halved when
causal), are the suite's.

A peer parameter `compile` (bool), when the sweep declares it, runs torch.compile(fn) instead:
the compiled function is what is validated and timed, and one untimed call of the case's pass
(after the validation, or without it) compiles it at the case's shape before the first timed
iteration; a dynamo or inductor failure makes the case unsupported with the reason.
"""
import sys

from . import check as chk
from .measure import Memory, run_iterations
from .protocol import Unsupported, serve
from . import torchinfo


class _Step:
    def __init__(self, torch, fn, case, q, k, v, do):
        self.torch, self.fn, self.case = torch, fn, case
        self.q, self.k, self.v, self.do = q, k, v, do
        self.o = None
        self.grad = "bwd" in case.phases

    def prepare(self):
        if self.grad:
            self.q.grad = self.k.grad = self.v.grad = None
        self.o = None
        if self.case.phases == ("bwd",):   # pass backward: the forward is untimed state
            self.o = self.fn(self.q, self.k, self.v, self.case.causal)

    def phase(self, name):
        return getattr(self, name)

    def fwd(self):
        with self.torch.set_grad_enabled(self.grad):
            self.o = self.fn(self.q, self.k, self.v, self.case.causal)

    def bwd(self):
        self.o.backward(self.do)


def _inputs(case, B, H, S, D, grad, offset=0):
    tensors = [case.uniform(B, H, S, D, offset=offset + i) for i in range(3)]
    for t in tensors:
        t.requires_grad_(grad)
    do = case.uniform(B, H, S, D, offset=offset + 3) if grad else None
    return tensors + [do]


def _run_with_grads(torch, fn, q, k, v, do, causal):
    saved = _saved(q, k, v, do)
    o = fn(q, k, v, causal)
    _output(o, q)
    o.backward(do)
    _unchanged(torch, saved, (q, k, v, do))
    grads = (q.grad, k.grad, v.grad)
    q.grad = k.grad = v.grad = None
    return o.detach(), grads


def _forward(torch, fn, q, k, v, causal, grad=False):
    """fn's output as the case times its forward (under no_grad, or with autograd when grad: a
    pass with a backward), detached; its inputs checked unchanged after it."""
    saved = _saved(q, k, v)
    with torch.set_grad_enabled(grad):
        o = fn(q, k, v, causal)
    _output(o, q)
    _unchanged(torch, saved, (q, k, v))
    return o.detach()


def _output(o, q):
    """o is what the kit times: a tensor of q's shape, dtype and device."""
    if not hasattr(o, "shape") or tuple(o.shape) != tuple(q.shape):
        raise ValueError("the attention function returned shape %s for inputs of shape %s"
                         % (tuple(getattr(o, "shape", ())) or type(o).__name__, tuple(q.shape)))
    if o.dtype != q.dtype or o.device != q.device:
        raise ValueError("the attention function returned %s on %s for inputs of %s on %s: the "
                         "case's output is in its dtype, on its device"
                         % (o.dtype, o.device, q.dtype, q.device))


_NAMES = ("q", "k", "v", "dO")


def _saved(*tensors):
    return [t.detach().clone() for t in tensors]


def _unchanged(torch, saved, tensors):
    """The inputs as they were before the call: a function that writes into them would be
    checked against a reference of other inputs than it was given, and timed on those."""
    for name, before, t in zip(_NAMES, saved, tensors):
        if not torch.equal(before, t.detach()):
            raise ValueError("the attention function changed its input %s (an in-place operation "
                             "on it): the output must not depend on overwriting q, k, v or dO"
                             % name)


def validate(torch, fn, case, q, k, v, do, out):
    """Check fn against the float64 reference (check.py's policy), then once more on new values in
    the same tensors; CheckFailed on a failure."""
    _validate(torch, fn, case, q, k, v, do, out)
    _again(torch, fn, case, q, k, v, do is not None, out)


def _again(torch, fn, case, q, k, v, grad, out):
    """fn once more, on new values in q, k, v themselves (what a training step does to its
    buffers), compared on the sampled rows of up to SAMPLE_HEADS spread heads (check
    output_again): a result kept from an earlier call — a cache keyed by the tensors' shape or
    storage — is stale here. The case's values are put back for the timing."""
    B, H, S, D = q.shape
    saved = _saved(q, k, v)
    with torch.no_grad():
        for i, t in enumerate((q, k, v)):
            t.copy_(case.uniform(B, H, S, D, offset=24 + i))
    try:
        o = _forward(torch, fn, q, k, v, case.causal, grad=grad)
        rows, heads = chk.sample_rows(S), chk.sample_heads(B, H)
        idx_b = torch.tensor([b for b, _ in heads], device=q.device)
        idx_h = torch.tensor([h for _, h in heads], device=q.device)
        pick = lambda t: t.detach()[idx_b, idx_h].unsqueeze(0)   # (1, heads, S, D)
        ref_o, _ = chk.attention_reference(pick(q), pick(k), pick(v), case.causal, rows=rows)
        _, diff, bound, where = chk.attention_worst("output_again", pick(o)[:, :, rows, :], ref_o,
                                                    case, rows=rows, heads=heads)
        del o, ref_o
        out.check("output_again", diff, bound, where)
    finally:
        with torch.no_grad():
            for t, before in zip((q, k, v), saved):
                t.copy_(before)


def _validate(torch, fn, case, q, k, v, do, out):
    B, H, S, D = q.shape
    backward = do is not None
    if chk.attention_madds(B, H, S, D, backward, case.causal) <= chk.FULL_CHECK_MADDS:
        if backward:
            o, grads = _run_with_grads(torch, fn, q, k, v, do, case.causal)
            ref_o, ref_grads = chk.attention_reference(q.detach(), k.detach(), v.detach(), case.causal, do)
            chk.check_attention_tensors(out, ("output", "dq", "dk", "dv"), (o,) + grads,
                                        (ref_o,) + ref_grads, case)
        else:
            o = _forward(torch, fn, q, k, v, case.causal)
            ref_o, _ = chk.attention_reference(q, k, v, case.causal)
            chk.check_attention_tensors(out, ("output",), (o,), (ref_o,), case)
        return
    # Sampled: the forward's rows of every head (the CPU's; a GPU's: spread heads) at the case's
    # shape, SAMPLE_HEADS heads at a time (their float64 K and V are what the check holds), of
    # the forward as it is timed (with autograd for a pass with a backward: a function may take
    # another path then) ...
    o = _forward(torch, fn, q, k, v, case.causal, grad=backward)
    rows, heads = chk.sample_rows(S), chk.sample_heads(B, H, every=case.device == "cpu")
    found = None
    for start in range(0, len(heads), chk.SAMPLE_HEADS):
        part = heads[start:start + chk.SAMPLE_HEADS]
        idx_b = torch.tensor([b for b, _ in part], device=q.device)
        idx_h = torch.tensor([h for _, h in part], device=q.device)
        pick = lambda t: t.detach()[idx_b, idx_h].unsqueeze(0)   # (1, heads, S, D)
        ref_o, _ = chk.attention_reference(pick(q), pick(k), pick(v), case.causal, rows=rows)
        mine = pick(o)[:, :, rows, :]
        this = chk.attention_worst("output", mine, ref_o, case, rows=rows, heads=part)
        if found is None or this[0] > found[0]:
            found = this
        del ref_o, mine
    out.check("output", found[1], found[2], found[3])
    del o
    if not backward:
        return
    # ... and the whole backward at batch = min(B, 2), heads = min(H, 2), seq_len = REDUCED_SEQ.
    rq, rk, rv, rdo = _inputs(case, min(B, chk.REDUCED_PAIRS), min(H, chk.REDUCED_PAIRS),
                              chk.REDUCED_SEQ, D, True, offset=16)
    o, grads = _run_with_grads(torch, fn, rq, rk, rv, rdo, case.causal)
    ref_o, ref_grads = chk.attention_reference(rq.detach(), rk.detach(), rv.detach(), case.causal, rdo)
    chk.check_attention_tensors(out, ("output_reduced", "dq", "dk", "dv"), (o,) + grads,
                                (ref_o,) + ref_grads, case)


def run_case(fn, case, out, validate_first=True, supports=None, info_extra=None):
    """One attention case of fn: checks, inputs, validation, timing, memory."""
    if case.suite != "attention":
        raise Unsupported("this peer runs suite attention, not %s" % case.suite)
    if case.pass_ not in ("forward", "backward", "forward_backward"):
        raise Unsupported("pass %s is not an attention pass" % case.pass_)
    torch = torchinfo.prepare(case)
    if case.tf32:
        raise Unsupported("tf32 is not an attention setting")
    if supports is not None:
        reason = supports(case)
        if reason:
            raise Unsupported(reason)
    compile_fn = torchinfo.compile_asked(case)
    extra = dict(info_extra or {})
    if compile_fn:
        if not hasattr(torch, "compile"):
            raise Unsupported("compile needs torch.compile (torch >= 2.0; this is torch %s)"
                              % torch.__version__)
        extra["compile"] = True
        if case.device == "cpu":
            extra.update(torchinfo.compile_isa(torch))
        fn = torchinfo.compile_fresh(torch, fn)
    out.info_json(torchinfo.info(torch, case, **extra))
    B, H, S, D = case.batch_size, case.heads, case.seq_len, case.head_dim
    memory = Memory(case)
    grad = "bwd" in case.phases
    q, k, v, do = _inputs(case, B, H, S, D, grad)
    with torchinfo.compile_failures(compile_fn):
        if validate_first:
            validate(torch, fn, case, q, k, v, do, out)
        if compile_fn:   # the case's own call, forward and backward, compiled before it is timed
            _, grads = (_run_with_grads(torch, fn, q, k, v, do, case.causal) if grad else
                        (_forward(torch, fn, q, k, v, case.causal), None))
            del grads
    out.work_benchdb()
    run_iterations(case, out, _Step(torch, fn, case, q, k, v, do), memory)
    memory.report(out, case.phases)


def attention_peer(fn, check=True, supports=None):
    """Serve fn(q, k, v, causal) -> o as a peer (one case, or a persistent peer's cases) and exit.
    check=False times it unvalidated (every report then marks its cases); supports(case) may
    return a reason not to run a case (stored as unsupported)."""
    sys.exit(serve(lambda case, out: run_case(fn, case, out, check, supports)))
