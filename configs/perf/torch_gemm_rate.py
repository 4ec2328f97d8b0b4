"""configs/perf/torch_gemm_rate.py: the float32 and bfloat16 GEMM rate PyTorch gets on this CPU.

Debian's python3-torch sends float32 GEMMs to the system BLAS (libblas.so.3: the reference
libblas3 unless OpenBLAS is installed), which decides how fast the PyTorch peer of
configs/e2e_vs_pytorch_cpu.yaml can be. Run with the interpreter the peer uses:

    OMP_NUM_THREADS=2 /usr/bin/python3 configs/perf/torch_gemm_rate.py

It times the small model's FFN projection shape, (1024 x 768) . (768 x 3072), and prints GFLOP/s.
"""
import os
import time

import torch

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "") or os.cpu_count() or 1))
a = torch.randn(1024, 768)
w = torch.randn(3072, 768)
flops = 2.0 * 1024 * 768 * 3072
for name, ctx in (("float32", None), ("bfloat16 autocast", torch.bfloat16)):
    with torch.autocast("cpu", dtype=ctx, enabled=ctx is not None):
        a @ w.t()                       # the first call may set things up
        reps, t0 = 0, time.perf_counter()
        while reps < 3 or time.perf_counter() - t0 < 1.0:
            a @ w.t()
            reps += 1
        dt = (time.perf_counter() - t0) / reps
    print("torch %s %s GEMM 1024x768x3072: %.1f GFLOP/s (%d threads)"
          % (torch.__version__, name, flops / dt / 1e9, torch.get_num_threads()))
