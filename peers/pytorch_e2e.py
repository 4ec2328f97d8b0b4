#!/usr/bin/env python3
"""peers/pytorch_e2e.py: benchdb's end-to-end transformer (docs/design.md, "The e2e model") in PyTorch, as a
benchdb peer — `runner` starts it once per case and it prints its own timings in the line
protocol of schemas/peer-protocol.md.

    peers:
      pytorch: {command: "/usr/bin/python3 ../peers/pytorch_e2e.py", suite: e2e}
      pytorch_compile: {command: "/usr/bin/python3 ../peers/pytorch_e2e.py --compile", suite: e2e}

The case comes from the BENCHDB_* environment variables. The model is the one benchdb runs:
token embedding; num_layers x [RMSNorm -> causal multi-head attention (bias-free Q, K, V, O
projections; RoPE, theta 10000, on interleaved pairs (x[2i], x[2i+1]) of Q and K) -> residual ->
RMSNorm -> SwiGLU w2(silu(w1 x) * w3 x) -> residual]; final RMSNorm; bias-free LM head (not tied);
mean cross-entropy; torch.optim.AdamW(lr 1e-3, betas (0.9, 0.95), eps 1e-8, weight_decay 0.01),
the settings of kernels/model/model.c. RMSNorm (eps 1e-5, learnable gain) and the softmax run
in float32. Weights start uniform with standard deviation 0.02 (norm gains 1), as in benchdb.

What each pass times, per iteration (warm-up iterations are printed too, from 0):
  forward           fwd: the forward and the loss under torch.no_grad() (benchdb's forward pass
                    keeps nothing for a backward either)
  forward_backward  fwd with autograd, then bwd: loss.backward(); the gradients are reset
                    (zero_grad(set_to_none=True)) before each iteration, outside the timed phases
  train_step        fwd, bwd, then opt: optimizer.step()
Each phase is timed with time.perf_counter_ns() on the CPU; on CUDA with CUDA events recorded
around it on the current stream, as benchdb times its own CUDA phases (a case with sync: false
keeps the host clock and never waits: the missing-synchronize mistake, on purpose). tf32 sets
torch.backends.cuda.matmul.allow_tf32 (and cuDNN's) either way.

dtype float32 runs everything in float32; bfloat16 is autocast(bfloat16) over float32 master
weights (matmuls in bfloat16, norms, softmax and the loss in float32); float16 is autocast(float16),
on CUDA only. attention naive is the explicit softmax(QK^T / sqrt(d) + mask) V; flash and sdpa use
torch.nn.functional.scaled_dot_product_attention(is_causal=True) (torch >= 2.0; on CUDA, flash
restricts it to the FlashAttention backend), else the case is unsupported. --compile runs the model
through torch.compile (torch >= 2.0; inductor, which on the CPU needs a C++ compiler), whose
compilation falls in the first warm-up iteration (forward, and the backward graph in the first
backward); when it fails there with a dynamo or inductor error, the case is unsupported with the
reason.

Every case prints an `info {...}` object (schemas/peer-protocol.md), stored with the case as
cases.impl_info: torch's version, BLAS, MKL and oneDNN versions, the CPU capability its kernels
use, and its thread counts, so that a reader knows which PyTorch ran.

Threads: torch.set_num_threads(OMP_NUM_THREADS, default: every CPU). On CUDA, memory lines report
the allocator's peaks (torch.cuda.max_memory_allocated) after the forward and the backward, and a
mem_limit caps the process's share of the GPU. On the CPU there is no allocator accounting; a case
whose parameters, gradients and optimizer state alone exceed its mem_limit is reported oom before
anything runs.

Outcomes: `status ok`; `status unsupported` (no CUDA device, a combination it does not run);
`status oom` (an out-of-memory error from torch, or a memory limit below what the weights,
gradients and AdamW state alone need); `status error` when this interpreter has no torch, and for
anything else, with the traceback on stderr and exit status 1.
"""
import contextlib
import math
import os
import sys
import time
import traceback

PROTOCOL = 1
ADAMW = dict(lr=1e-3, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.01)
NORM_EPS = 1e-5
ROPE_THETA = 10000.0
INIT_STD = 0.02


class Unsupported(Exception):
    """The case is not something this peer runs (stored as unsupported)."""


class PeerError(Exception):
    """This peer cannot run at all here (stored as error, with the reason)."""


def emit(lines):
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()


def one_line(text, limit=400):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_oom(exc):
    if isinstance(exc, MemoryError):
        return True
    msg = str(exc).lower()
    return isinstance(exc, RuntimeError) and (
        "out of memory" in msg or "can't allocate memory" in msg or "not enough memory" in msg)


def torch_info(torch, threads, compile_model):
    """What ran, as the `info {...}` object (schemas/peer-protocol.md; at most 2047 bytes): the
    torch version and the libraries its CPU path uses, read from torch.__config__.show()."""
    import json
    import re
    config = torch.__config__.show()

    def found(pattern):
        m = re.search(pattern, config)
        return m.group(1).strip() if m else None

    backends = torch.backends
    capability = None
    cpu = getattr(backends, "cpu", None)
    if cpu is not None and hasattr(cpu, "get_cpu_capability"):   # torch >= 2.1
        capability = cpu.get_cpu_capability()
    info = {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "interpreter": sys.executable,
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "set_threads": threads,
        "compile": bool(compile_model),
        "blas": found(r"BLAS_INFO=([^,\s]+)"),
        "mkl": found(r"Math Kernel Library Version ([^\n]+?) for") or found(r"Math Kernel Library Version ([^\n]+)"),
        "mkl_available": bool(getattr(backends, "mkl", None) and backends.mkl.is_available()),
        "onednn": found(r"MKL-DNN v([0-9][^\s]*)"),
        "mkldnn_enabled": bool(backends.mkldnn.is_available() and backends.mkldnn.enabled),
        "openmp": found(r"OpenMP (\d+)"),
        "cpu_capability": capability or found(r"CPU capability usage: ([^\n]+)"),
        "cxx_compiler": found(r"- (GCC [^\n]+|clang [^\n]+)"),
    }
    if compile_model:
        info["compile_backend"] = "inductor"
    text = json.dumps(info, separators=(", ", ": "), ensure_ascii=True)
    while len(text) > 2047 and info.get("interpreter"):   # a very long path: drop it first
        info["interpreter"] = None
        text = json.dumps(info, separators=(", ", ": "), ensure_ascii=True)
    return text


def env_int(name):
    value = os.environ.get(name)
    if value is None or not value.isdigit():
        raise ValueError("environment variable %s must be a non-negative integer, got %r" % (name, value))
    return int(value)


def read_case():
    env = os.environ
    if env.get("BENCHDB_PEER_PROTOCOL") != str(PROTOCOL):
        raise ValueError("BENCHDB_PEER_PROTOCOL is not %d: run this through `runner run` with a "
                         "sweep that names it under peers:" % PROTOCOL)
    case = dict(
        suite=env.get("BENCHDB_SUITE", ""), device=env.get("BENCHDB_DEVICE", "cpu"),
        dtype=env.get("BENCHDB_DTYPE", "float32"), pass_=env.get("BENCHDB_PASS", ""),
        attention=env.get("BENCHDB_ATTENTION", "naive"), sync=env.get("BENCHDB_SYNC", "true") != "false",
        tf32=env.get("BENCHDB_TF32", "false") == "true")
    if case["suite"] != "e2e":
        raise Unsupported("this peer runs suite e2e, not %r" % case["suite"])
    for key in ("d_model", "d_ff", "num_layers", "num_heads", "vocab_size", "context_length",
                "batch_size", "warmup", "iters", "seed", "mem_limit"):
        case[key] = env_int("BENCHDB_" + key.upper())
    return case


def param_count(c):
    d, f, L, V = c["d_model"], c["d_ff"], c["num_layers"], c["vocab_size"]
    return L * (4 * d * d + 3 * d * f + 2 * d) + 2 * V * d + d


def build(torch, c):
    """The model class for case c (torch is imported lazily, so that its absence is a status)."""
    nn, F = torch.nn, torch.nn.functional
    d, h = c["d_model"], c["num_heads"]
    dh = d // h
    sdpa = getattr(F, "scaled_dot_product_attention", None)

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            xf = x.float()
            y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + NORM_EPS)
            return (y * self.weight.float()).to(x.dtype)

    def rope(x, cos, sin):
        """Rotate interleaved pairs (x[..., 2i], x[..., 2i+1]) of x (B, H, T, dh)."""
        x0, x1 = x[..., 0::2].float(), x[..., 1::2].float()
        y = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
        return y.flatten(-2).to(x.dtype)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn_norm = RMSNorm()
            self.q = nn.Linear(d, d, bias=False)
            self.k = nn.Linear(d, d, bias=False)
            self.v = nn.Linear(d, d, bias=False)
            self.o = nn.Linear(d, d, bias=False)
            self.ffn_norm = RMSNorm()
            self.w1 = nn.Linear(d, c["d_ff"], bias=False)
            self.w3 = nn.Linear(d, c["d_ff"], bias=False)
            self.w2 = nn.Linear(c["d_ff"], d, bias=False)

        def attention(self, q, k, v, mask):
            if c["attention"] == "naive":
                s = (q @ k.transpose(-2, -1)).float() * (1.0 / math.sqrt(dh))
                p = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
                return p.to(v.dtype) @ v
            return sdpa(q, k, v, is_causal=True)

        def forward(self, x, cos, sin, mask):
            B, T, _ = x.shape
            n = self.attn_norm(x)
            q, k, v = (proj(n).view(B, T, h, dh).transpose(1, 2) for proj in (self.q, self.k, self.v))
            a = self.attention(rope(q, cos, sin), rope(k, cos, sin), v, mask)
            x = x + self.o(a.transpose(1, 2).reshape(B, T, d))
            n = self.ffn_norm(x)
            return x + self.w2(F.silu(self.w1(n)) * self.w3(n))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(c["vocab_size"], d)
            self.layers = nn.ModuleList(Block() for _ in range(c["num_layers"]))
            self.final_norm = RMSNorm()
            self.lm_head = nn.Linear(d, c["vocab_size"], bias=False)
            T = c["context_length"]
            i = torch.arange(dh // 2, dtype=torch.float64)
            angle = torch.arange(T, dtype=torch.float64)[:, None] * ROPE_THETA ** (-2.0 * i / dh)
            self.register_buffer("cos", torch.cos(angle).float(), persistent=False)   # (T, dh/2)
            self.register_buffer("sin", torch.sin(angle).float(), persistent=False)
            self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).tril(), persistent=False)

        def forward(self, tokens, targets):
            x = self.embedding(tokens)
            for layer in self.layers:
                x = layer(x, self.cos, self.sin, self.mask)
            logits = self.lm_head(self.final_norm(x))
            return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))

    return LM


def run(argv):
    compile_model = False
    for arg in argv[1:]:
        if arg != "--compile":
            raise ValueError("unknown argument %r (valid: --compile)" % arg)
        compile_model = True
    c = read_case()
    try:
        import torch
    except ImportError as exc:
        raise PeerError("python module torch not found for %s (install python3-torch, or name "
                          "an interpreter that has it in the peer's command): %s"
                          % (sys.executable, exc))
    emit(["info torch %s" % torch.__version__, "info python %s" % sys.version.split()[0],
          "info interpreter %s" % sys.executable])

    phases = {"forward": ["fwd"], "forward_backward": ["fwd", "bwd"],
              "train_step": ["fwd", "bwd", "opt"]}.get(c["pass_"])
    if phases is None:
        raise Unsupported("pass %s is not an e2e pass (forward, forward_backward, train_step)" % c["pass_"])
    if c["device"] not in ("cpu", "cuda"):
        raise Unsupported("device %s (valid: cpu, cuda)" % c["device"])
    cuda = c["device"] == "cuda"
    if cuda and not torch.cuda.is_available():
        raise Unsupported("torch %s sees no CUDA device" % torch.__version__)
    dtypes = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}
    if c["dtype"] not in dtypes:
        raise Unsupported("dtype %s (valid: float32, bfloat16, float16)" % c["dtype"])
    amp_dtype = dtypes[c["dtype"]]
    if c["dtype"] == "float16" and not cuda:
        raise Unsupported("float16 autocast runs on cuda only")
    if c["attention"] not in ("naive", "flash", "sdpa"):
        raise Unsupported("attention %s (valid: naive, flash, sdpa)" % c["attention"])
    if c["attention"] != "naive" and not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        raise Unsupported("attention %s needs torch.nn.functional.scaled_dot_product_attention "
                          "(torch >= 2.0; this is torch %s)" % (c["attention"], torch.__version__))
    if c["tf32"] and not cuda:
        raise Unsupported("tf32 is a CUDA GEMM mode (set tf32: false on the cpu)")
    if cuda:   # explicit either way: torch's default has changed between versions
        torch.backends.cuda.matmul.allow_tf32 = c["tf32"]
        torch.backends.cudnn.allow_tf32 = c["tf32"]
    if cuda and c["attention"] == "flash" and amp_dtype is None:
        raise Unsupported("torch's FlashAttention backend needs float16 or bfloat16")
    if compile_model and not hasattr(torch, "compile"):
        raise Unsupported("--compile needs torch.compile (torch >= 2.0; this is torch %s)"
                          % torch.__version__)
    if c["num_heads"] < 1 or c["d_model"] % c["num_heads"] or (c["d_model"] // c["num_heads"]) % 2:
        raise Unsupported("num_heads %d must divide d_model %d with an even quotient"
                          % (c["num_heads"], c["d_model"]))

    threads = int(os.environ.get("OMP_NUM_THREADS", "") or os.cpu_count() or 1)
    torch.set_num_threads(threads)
    device = torch.device(c["device"])
    P = param_count(c)
    lines = ["info threads %d" % threads, "info params %d" % P,
             "info compile %s" % ("yes" if compile_model else "no"),
             "info " + torch_info(torch, threads, compile_model)]
    if cuda:
        lines.append("info device cuda %s" % torch.cuda.get_device_name(device).replace(" ", "_"))
        if c["mem_limit"] > 0:
            total = torch.cuda.get_device_properties(device).total_memory
            torch.cuda.set_per_process_memory_fraction(min(1.0, c["mem_limit"] / total), device)
    else:
        lines.append("info device cpu")
        # A lower bound (activations not counted): weights, gradients, AdamW's m and v.
        need = 4 * P * (1 + (len(phases) > 1) + 2 * (len(phases) > 2))
        if 0 < c["mem_limit"] < need:
            emit(lines)
            return "oom", ("parameters, gradients and optimizer state alone need %d bytes, beyond "
                           "the memory limit of %d bytes" % (need, c["mem_limit"]))
    emit(lines)

    torch.manual_seed(c["seed"])
    model = build(torch, c)().to(device)
    a = INIT_STD * math.sqrt(3.0)   # uniform on [-a, a] has standard deviation INIT_STD
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not name.endswith("norm.weight"):
                p.uniform_(-a, a)
    n_params = sum(p.numel() for p in model.parameters())
    if n_params != P:
        raise RuntimeError("the model has %d parameters, the formula says %d" % (n_params, P))
    emit(["memory param %d" % sum(p.numel() * p.element_size() for p in model.parameters())])
    optimizer = torch.optim.AdamW(model.parameters(), **ADAMW) if "opt" in phases else None
    step = torch.compile(model) if compile_model else model

    g = torch.Generator().manual_seed(c["seed"])
    shape = (c["batch_size"], c["context_length"])
    tokens = torch.randint(c["vocab_size"], shape, generator=g).to(device)
    targets = torch.randint(c["vocab_size"], shape, generator=g).to(device)

    def autocast():
        if amp_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=c["device"], dtype=amp_dtype)

    def attention_backend():
        if not (cuda and c["attention"] == "flash"):
            return contextlib.nullcontext()
        try:   # torch >= 2.3
            from torch.nn.attention import SDPBackend, sdpa_kernel
            return sdpa_kernel(SDPBackend.FLASH_ATTENTION)
        except ImportError:
            return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False,
                                                  enable_mem_efficient=False)

    # CUDA with sync: events on the current stream around each phase, read once the phase's
    # end event has completed (as benchdb times its CUDA phases); otherwise the host clock,
    # which with sync: false stops before the GPU has finished (the mistake, on purpose)
    events = cuda and c["sync"]

    class Phase:
        def __enter__(self):
            if events:
                self.start = torch.cuda.Event(enable_timing=True)
                self.start.record()
            else:
                self.t0 = time.perf_counter_ns()
            return self

        def __exit__(self, *exc):
            if events:
                end = torch.cuda.Event(enable_timing=True)
                end.record()
                end.synchronize()
                self.ns = int(round(self.start.elapsed_time(end) * 1e6))
            else:
                self.ns = time.perf_counter_ns() - self.t0
            self.ns = max(1, self.ns)
            return False

    @contextlib.contextmanager
    def compiling(first):
        """torch.compile's failure to compile (no working C++ compiler for inductor, an
        unsupported Python, a dynamo or inductor error) in the first iteration, where it
        compiles, makes the case unsupported with the reason."""
        try:
            yield
        except Exception as exc:
            where = type(exc).__module__ or ""
            if not (compile_model and first and not is_oom(exc) and
                    where.startswith(("torch._dynamo", "torch._inductor"))):
                raise
            traceback.print_exc()
            raise Unsupported("torch.compile (inductor) failed on this machine: %s: %s"
                              % (type(exc).__name__, exc))

    peak = {"fwd": 0, "bwd": 0}
    for it in range(c["warmup"] + c["iters"]):
        if "bwd" in phases:
            model.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.reset_peak_memory_stats(device)
        out = []
        with Phase() as ph, compiling(it == 0):
            with torch.set_grad_enabled("bwd" in phases), autocast(), attention_backend():
                loss = step(tokens, targets)
        out.append("sample %d fwd %d" % (it, ph.ns))
        if cuda:
            peak["fwd"] = max(peak["fwd"], torch.cuda.max_memory_allocated(device))
        if "bwd" in phases:
            with Phase() as ph, compiling(it == 0):   # the backward graph compiles here
                loss.backward()
            out.append("sample %d bwd %d" % (it, ph.ns))
            if cuda:
                peak["bwd"] = max(peak["bwd"], torch.cuda.max_memory_allocated(device))
        if optimizer is not None:
            with Phase() as ph:
                optimizer.step()
            out.append("sample %d opt %d" % (it, ph.ns))
        if it == 0 and not math.isfinite(loss.item()):
            raise RuntimeError("the loss is %r" % loss.item())
        emit(out)
    if cuda:
        torch.cuda.synchronize(device)
        lines = ["memory peak_fwd %d" % peak["fwd"]]
        if "bwd" in phases:
            lines.append("memory peak_bwd %d" % peak["bwd"])
        lines.append("memory peak %d" % max(peak.values()))
        emit(lines + ["info loss %.6f" % loss.item()])
    else:
        emit(["info loss %.6f" % loss.item()])
    return "ok", ""


def main(argv):
    emit(["benchdb-peer %d" % PROTOCOL])
    try:
        status, reason = run(argv)
    except Unsupported as exc:
        status, reason = "unsupported", str(exc)
    except PeerError as exc:
        status, reason = "error", str(exc)
    except Exception as exc:   # an out-of-memory error, or a bug: the case is stored either way
        if not is_oom(exc):
            traceback.print_exc()
            emit(["status error %s" % one_line("%s: %s" % (type(exc).__name__, exc))])
            return 1
        status, reason = "oom", str(exc)
    emit(["status %s%s" % (status, " " + one_line(reason) if reason else "")])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
