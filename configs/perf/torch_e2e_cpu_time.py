"""configs/perf/torch_e2e_cpu_time.py: the PyTorch peer's model (peers/pytorch_e2e.py, the same
module and initialisation) forward+backward, timed per iteration in wall time and in the
process's CPU time, the twin of configs/perf/e2e_cpu_time.c (docs/performance.md, "AVX-512 and
AMX": comparing on a shared machine). Run with OMP_WAIT_POLICY=passive (waiting threads sleep):

    OMP_WAIT_POLICY=passive ~/venv-torch/bin/python configs/perf/torch_e2e_cpu_time.py \
        float32|bfloat16 [eager|compile] [ITERS]

Small model, context 256, batch 4, naive attention; bfloat16 is autocast(bfloat16), as the peer.
torch.compile compiles in the warm-up iteration (not counted)."""
import contextlib
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "peers"))
import pytorch_e2e as peer  # noqa: E402
import torch  # noqa: E402


def main():
    dtype = sys.argv[1] if len(sys.argv) > 1 else "float32"
    mode = sys.argv[2] if len(sys.argv) > 2 else "eager"
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    c = dict(d_model=768, d_ff=3072, num_layers=12, num_heads=12, vocab_size=10000,
             context_length=256, batch_size=4, attention="naive", device="cpu", dtype=dtype)
    threads = int(os.environ.get("OMP_NUM_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = peer.build(torch, c)()
    a = peer.INIT_STD * 3 ** 0.5
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not name.endswith("norm.weight"):
                p.uniform_(-a, a)
    step = torch.compile(model) if mode == "compile" else model
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(c["vocab_size"], (4, 256), generator=g)
    targets = torch.randint(c["vocab_size"], (4, 256), generator=g)
    amp = (torch.autocast(device_type="cpu", dtype=torch.bfloat16) if dtype == "bfloat16"
           else contextlib.nullcontext())
    print("# torch %s, %s, %s, %d threads, 1 warm-up + %d iterations of forward+backward"
          % (torch.__version__, dtype, mode, threads, iters))
    wall, cpu = [], []
    for it in range(-1, iters):
        model.zero_grad(set_to_none=True)
        w0, c0 = time.perf_counter(), time.process_time()
        with amp:
            loss = step(tokens, targets)
        loss.backward()
        w, cp = time.perf_counter() - w0, time.process_time() - c0
        print("iter %d wall %.1f ms cpu %.1f ms" % (it, w * 1e3, cp * 1e3), flush=True)
        if it >= 0:
            wall.append(w)
            cpu.append(cp)
    wall.sort()
    cpu.sort()
    print("median wall %.1f ms cpu %.1f ms" % (wall[iters // 2] * 1e3, cpu[iters // 2] * 1e3))


if __name__ == "__main__":
    main()
