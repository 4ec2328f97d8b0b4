"""configs/perf/inductor_cache_isa.py: torch.compile's on-disk cache across ATEN_CPU_CAPABILITY
(docs/peers.md, "Emulating an older CPU"; docs/performance.md, the Zen 5 section).

On an AVX-512 CPU: for each order (uncapped then capped, capped then uncapped), a fresh inductor
cache, and in it the small model of peers/pytorch_e2e.py (context 256, batch 4, float32, naive
attention) compiled and run forward+backward once per process, uncapped or under
ATEN_CPU_CAPABILITY=avx2; each line the compiled loss beside eager's, or how the process ended.

    ~/venv-torch/bin/python configs/perf/inductor_cache_isa.py native   # inductor's -march=native
    ~/venv-torch/bin/python configs/perf/inductor_cache_isa.py kit      # capped: x86-64-v3, as the kit
"""
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def child():
    sys.path.insert(0, os.path.join(HERE, "..", "..", "peers"))
    import torch
    import pytorch_e2e
    c = dict(vocab_size=10000, context_length=256, d_model=768, num_layers=12, num_heads=12,
             d_ff=3072, attention="naive")
    torch.manual_seed(0)
    model = pytorch_e2e.build(torch, c)()
    a = pytorch_e2e.INIT_STD * math.sqrt(3.0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not name.endswith("norm.weight"):
                p.uniform_(-a, a)
    tokens, targets = torch.randint(10000, (4, 256)), torch.randint(10000, (4, 256))
    eager = model(tokens, targets).item()
    loss = torch.compile(model)(tokens, targets)
    loss.backward()
    grads = sum(float(p.grad.abs().sum()) for p in model.parameters())
    print("capability %s: compiled loss %.5f (eager %.5f), gradients' sum %.6g"
          % (torch.backends.cpu.get_cpu_capability(), loss.item(), eager, grads))


def main(mode):
    for order in (("uncapped", "capped"), ("capped", "uncapped")):
        with tempfile.TemporaryDirectory() as cache:
            print("a fresh cache:", " then ".join(order))
            for which in order:
                env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, OMP_NUM_THREADS="2")
                for key in ("ATEN_CPU_CAPABILITY", "TORCHINDUCTOR_CPP_MARCH"):
                    env.pop(key, None)
                if which == "capped":
                    env["ATEN_CPU_CAPABILITY"] = "avx2"
                    if mode == "kit":
                        env["TORCHINDUCTOR_CPP_MARCH"] = "x86-64-v3"
                got = subprocess.run([sys.executable, __file__, "child"], env=env,
                                     capture_output=True, text=True)
                said = [l for l in got.stdout.splitlines() if l.startswith("capability")]
                end = said[0] if said and got.returncode == 0 else "process ended with status %d: %s" % (
                    got.returncode, (got.stderr.strip().splitlines() or ["-"])[-1])
                print("  %-8s %s" % (which, end), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["child"]:
        child()
    elif sys.argv[1:] in (["native"], ["kit"]):
        main(sys.argv[1])
    else:
        sys.exit("usage: inductor_cache_isa.py native|kit")
