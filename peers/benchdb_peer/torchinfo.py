"""benchdb_peer.torchinfo: the PyTorch a case ran on, as the protocol's `info {...}` object (stored
with the case as cases.impl_info), and the checks every torch peer makes before it runs a case."""
import contextlib
import os
import platform
import re
import sys
import traceback

from .measure import threads_from_env
from .protocol import Unsupported


def import_torch():
    """torch, or ImportError (the case is stored as an error that names the interpreter)."""
    import torch
    return torch


def prepare(case):
    """torch, set up for case: the thread count on the CPU, a visible CUDA device on CUDA, TF32 as
    the case says. Unsupported when this torch cannot run the case's device."""
    torch = import_torch()
    if case.device not in ("cpu", "cuda"):
        raise Unsupported("device %s (valid: cpu, cuda)" % case.device)
    if case.device == "cuda":
        if not torch.cuda.is_available():
            raise Unsupported("torch %s sees no CUDA device" % torch.__version__)
        torch.backends.cuda.matmul.allow_tf32 = case.tf32   # explicit: torch's default has changed
        torch.backends.cudnn.allow_tf32 = case.tf32
    elif case.tf32:
        raise Unsupported("tf32 is a CUDA GEMM mode (set tf32: false on the cpu)")
    threads = threads_from_env()
    torch.set_num_threads(threads)
    return torch


#: The x86-64 level that holds each ATen CPU capability below AVX-512 (ATEN_CPU_CAPABILITY's values).
MARCH_OF_CAPABILITY = {"avx2": "x86-64-v3", "default": "x86-64"}


def compile_isa(torch, environ=None):
    """torch.compile's C++ for the ISA ATen was capped to, and what inductor compiles for.

    Inductor takes its vector width from ATEN_CPU_CAPABILITY, but its on-disk cache does not tell
    a capped ATen from an uncapped one: a model compiled without the cap and again under
    ATEN_CPU_CAPABILITY=avx2 on an AVX-512 CPU returned NaN losses, and the other order crashed
    the process (PyTorch 2.15; docs/peers.md, "Emulating an older CPU"). Where ATEN_CPU_CAPABILITY
    caps an x86-64 CPU below AVX-512 and TORCHINDUCTOR_CPP_MARCH is unset (the user's own choice
    wins), set inductor's march to that capability's level instead of -march=native: the code is
    then what such a CPU would build, and its cache entries are apart from the uncapped ones.
    Returns the impl_info keys inductor_march (as set; "native" where nothing set it, "none"
    where it was set empty; None for a torch without that setting) and inductor_vec_isa (None
    where this torch does not say)."""
    environ = os.environ if environ is None else environ
    try:
        from torch._inductor import config
    except ImportError:   # a torch whose compile is not inductor's: nothing to set or say
        return {}
    said = {"inductor_march": None, "inductor_vec_isa": None}
    if hasattr(getattr(config, "cpp", None), "march"):   # not in every torch
        march = MARCH_OF_CAPABILITY.get(environ.get("ATEN_CPU_CAPABILITY", "").strip().lower())
        if (march and "TORCHINDUCTOR_CPP_MARCH" not in environ
                and platform.machine().lower() in ("x86_64", "amd64")):
            config.cpp.march = march
        said["inductor_march"] = "native" if config.cpp.march is None else config.cpp.march or "none"
    try:
        from torch._inductor import cpu_vec_isa
        said["inductor_vec_isa"] = str(cpu_vec_isa.pick_vec_isa()) or "none"
    except Exception:   # noqa: BLE001 (an internal module; older torch has it elsewhere)
        pass
    return said


def compile_asked(case):
    """Whether the case's `compile` peer parameter asks for torch.compile, read as the reports read
    it (report's compile column: the value true, JSON's or the text "true"; absent: false).
    Unsupported for any other value, which the reports would show as not compiled."""
    value = case.get("compile", False)
    if value is True or value == "true":   # not 1: 1 == True in Python
        return True
    if value is False or value == "false":
        return False
    raise Unsupported("compile must be true or false, got %r (declare it {type: bool})" % (value,))


@contextlib.contextmanager
def compile_failures(active):
    """Where a torch.compile'd function compiles (its first calls): a dynamo or inductor failure
    is the case's Unsupported, with the reason (active False: every exception passes as raised)."""
    try:
        yield
    except Exception as exc:   # noqa: BLE001
        where = type(exc).__module__ or ""
        if not (active and where.startswith(("torch._dynamo", "torch._inductor"))):
            raise
        traceback.print_exc()
        raise Unsupported("torch.compile (inductor) failed on this machine: %s: %s"
                          % (type(exc).__name__, exc))


def compile_fresh(torch, fn):
    """torch.compile(fn) for one case, as a process that runs only this case compiles it: what
    earlier cases of a persistent peer compiled is dropped first (dynamo keeps it per code object,
    so the next shape of the same model got a symbolic-shape graph that every later case reused,
    and past its recompile limit ran eagerly), and each shape gets a graph of its own
    (dynamic=False: a check at another shape, the reduced attention backward, does not turn the
    case's graph into a symbolic-shape one)."""
    reset = getattr(getattr(torch, "compiler", None), "reset", None)
    if reset is None:
        import torch._dynamo
        reset = torch._dynamo.reset
    reset()
    return torch.compile(fn, dynamic=False)


def info(torch, case, **extra):
    """What ran: torch and its libraries (BLAS, MKL, oneDNN, cuDNN), the CPU capability its kernels
    dispatch to, its threads, the device; extra keys after those."""
    config = torch.__config__.show()

    def found(pattern):
        m = re.search(pattern, config)
        return m.group(1).strip() if m else None

    backends = torch.backends
    cpu = getattr(backends, "cpu", None)
    capability = cpu.get_cpu_capability() if cpu is not None and hasattr(cpu, "get_cpu_capability") else None
    obj = {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "interpreter": sys.executable,
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "blas": found(r"BLAS_INFO=([^,\s]+)"),
        "mkl": found(r"Math Kernel Library Version ([^\n]+?) for") or found(r"Math Kernel Library Version ([^\n]+)"),
        "onednn": found(r"MKL-DNN v([0-9][^\s]*)"),
        "openmp": found(r"OpenMP (\d+)"),
        "mkl_available": bool(getattr(backends, "mkl", None) and backends.mkl.is_available()),
        "mkldnn_enabled": bool(backends.mkldnn.is_available() and backends.mkldnn.enabled),
        "cpu_capability": capability or found(r"CPU capability usage: ([^\n]+)"),
        "cxx_compiler": found(r"- (GCC [^\n]+|clang [^\n]+)"),
        "device": case.device,
        "pid": os.getpid(),   # one pid across a persistent peer's cases
    }
    if case.device == "cuda":
        obj["gpu"] = torch.cuda.get_device_name()
        obj["cuda"] = torch.version.cuda
        obj["cudnn"] = backends.cudnn.version() if backends.cudnn.is_available() else None
    obj.update(extra)
    return obj
