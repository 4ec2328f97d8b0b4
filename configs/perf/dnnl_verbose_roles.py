"""configs/perf/dnnl_verbose_roles.py: oneDNN's matmul time by role in the model, from the output
of a runner run under DNNL_VERBOSE=1 (configs/perf/e2e_profile_cpu.yaml).

    python3 configs/perf/dnnl_verbose_roles.py verbose.log ITERATIONS

Roles by the operands' layouts of oneDNN 2.x's verbose lines: X W^T (the forward projections;
beta 1 when the product accumulates into its output), dY W (backward dX), dY^T X (backward dW),
the batched attention products, and the validation's tiny products (left out). Milliseconds per
iteration (ITERATIONS: warm-up + measured of the case) and the share of all matmul time.
"""
import collections
import sys


def role(prob, layouts, attrs):
    dims = [int(x) for x in prob.split(":")[0].split("x")]
    if min(dims[-2:]) < 32:
        return None
    if len(dims) == 3:
        return "attention (batched QK^T, PV, dV, dP, dQ, dK)"
    tags = "".join(md.split("::")[1].split(":")[1] for md in layouts.split()[:2])
    return {"abba": "forward projections (X W^T)" + (", beta 1" if "sum" in attrs else ""),
            "abab": "backward dX (dY W)", "baab": "backward dW (dY^T X)"}.get(tags, tags)


def main(path, iterations):
    ms = collections.Counter()
    for line in open(path):
        if not line.startswith("onednn_verbose,exec"):
            continue
        f = line.rstrip().split(",")
        r = role(f[9], f[6], f[7])
        if r:
            ms[r] += float(f[10])
    total = sum(ms.values())
    print("matmul time per iteration: %.0f ms" % (total / iterations))
    for r, t in ms.most_common():
        print("  %-48s %8.0f ms  %5.1f%%" % (r, t / iterations, 100 * t / total))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
