"""configs/perf/dnnl_verbose_roles.py: oneDNN's matmul time by role in the model, from the output
of a runner run under DNNL_VERBOSE=1 (configs/perf/e2e_profile_cpu.yaml).

    python3 configs/perf/dnnl_verbose_roles.py verbose.log PASSES

PASSES: the forward+backward passes of the case's model in the log: its warm-up and measured
iterations plus one, the validation's run of the case's own model (e2e_validate; the tiny
validation model's products are left out). e2e_profile_cpu.yaml: 1 + 2 + 1 = 4.

Roles by the operands' layouts of oneDNN 2.x's verbose lines: X W^T (the forward projections;
beta 1 when the product accumulates into its output), dY W (backward dX), dY^T X (backward dW),
the batched attention products. Per role, milliseconds and GFLOP (2·m·n·k per product, times the
batch) per pass, the share of all matmul time and the rate oneDNN's own timer gives.
"""
import collections
import sys


def role(dims, layouts, attrs):
    if min(dims[0][-2:] + dims[1][-1:]) < 32:
        return None
    if len(dims[0]) == 3:
        return "attention (batched QK^T, PV, dV, dP, dQ, dK)"
    tags = "".join(md.split("::")[1].split(":")[1] for md in layouts.split()[:2])
    return {"abba": "forward projections (X W^T)" + (", beta 1" if "sum" in attrs else ""),
            "abab": "backward dX (dY W)", "baab": "backward dW (dY^T X)"}.get(tags, tags)


def flop(dims):
    a, b = dims[0], dims[1]
    batch = a[0] if len(a) == 3 else 1
    return 2.0 * batch * a[-2] * a[-1] * b[-1]


def main(path, passes):
    ms = collections.Counter()
    gflop = collections.Counter()
    for line in open(path):
        if not line.startswith("onednn_verbose,exec"):
            continue
        f = line.rstrip().split(",")
        dims = [[int(x) for x in md.split("x")] for md in f[9].split(":")]
        r = role(dims, f[6], f[7])
        if r:
            ms[r] += float(f[10])
            gflop[r] += flop(dims) * 1e-9
    total, total_gf = sum(ms.values()), sum(gflop.values())
    print("matmul per pass: %.0f ms, %.1f GFLOP, %.1f GFLOP/s"
          % (total / passes, total_gf / passes, total_gf / total * 1e3))
    for r, t in ms.most_common():
        print("  %-48s %7.0f ms %7.1f GFLOP  %5.1f%%  %6.1f GFLOP/s"
              % (r, t / passes, gflop[r] / passes, 100 * t / total, gflop[r] / t * 1e3))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
