"""benchdb_peer.torchinfo: the PyTorch a case ran on, as the protocol's `info {...}` object (stored
with the case as cases.impl_info), and the checks every torch peer makes before it runs a case."""
import os
import re
import sys

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
