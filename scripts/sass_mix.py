#!/usr/bin/env python3
"""scripts/sass_mix.py: the instruction mix of flash.cu's tensor-core kernels, from their SASS.

    cuobjdump -sass flash90.cubin | python3 scripts/sass_mix.py [-p PTXAS_LOG] [substring]

For each kernel (demangled short name): registers, spills and static shared memory (from the
`ptxas -v` log, when given), then the instructions of its hottest loop, the innermost loop
with the most HMMA (one iteration = one K/V tile of the forward, one query tile of the
backward): LDSM and its ratio to HMMA, BAR.SYNC, reductions (RED/ATOM), global stores by width,
cp.async (LDGSTS), plain global loads, shared stores (STS) and local memory (LDL/STL, i.e.
spills). Whole-kernel totals of the same follow for comparison. Counts are static (instructions
in the code), not executed ones; loops are the spans of backward branches, so a loop left rolled
inside the hot one counts once: for per-tile figures build with it unrolled (flash.cu's backward:
-DFLASH_BWD_KU=8).
"""
import re
import signal
import subprocess
import sys
from collections import Counter

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)([^;]*);")
FUNC = re.compile(r"Function : (\S+)")


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                             text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}
    short = {}
    for n, d in zip(names, out):
        d = d.replace("(anonymous namespace)::", "")
        short[n] = d.split("(")[0].replace("__nv_bfloat16", "bf16").replace("__half", "f16")
    return short


def classify(op, args):
    """The category of one instruction, or None."""
    base = op.split(".")[0]
    if base == "LDSM":
        return "LDSM"
    if base == "HMMA":
        return "HMMA"
    if base == "BAR" and ".SYNC" in op:
        return "BAR.SYNC"
    if base in ("RED", "REDG", "ATOM", "ATOMG"):
        return op
    if base == "STG":
        return op
    if base == "LDGSTS":
        return "LDGSTS"
    if base == "LDG":
        return "LDG"
    if base == "STS":
        return "STS"
    if base in ("LDL", "STL"):
        return base
    return None


def parse(text):
    funcs, cur = {}, None
    for line in text.splitlines():
        m = FUNC.search(line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = LINE.search(line)
        if m and cur:
            funcs[cur].append((int(m.group(1), 16), m.group(3), m.group(4)))
    return funcs


def hot_loop(insns):
    """(start, end) of the innermost backward-branch span holding the most HMMA."""
    loops = []
    for addr, op, args in insns:
        if op.startswith("BRA"):
            t = re.search(r"0x([0-9a-f]+)", args)
            if t and int(t.group(1), 16) <= addr:
                loops.append((int(t.group(1), 16), addr))
    best, best_n = None, -1
    for lo, hi in loops:
        n = sum(1 for a, op, _ in insns if lo <= a <= hi and op.startswith("HMMA"))
        inner = [l for l in loops if l != (lo, hi) and lo <= l[0] and l[1] <= hi and
                 sum(1 for a, op, _ in insns if l[0] <= a <= l[1] and op.startswith("HMMA")) == n]
        if n > best_n and not inner:
            best, best_n = (lo, hi), n
    return best


def count(insns, span=None):
    c = Counter()
    for addr, op, args in insns:
        if span and not span[0] <= addr <= span[1]:
            continue
        k = classify(op, args)
        if k:
            c[k] += 1
    return c


def fmt(c):
    s = "LDSM %d HMMA %d" % (c["LDSM"], c["HMMA"])
    if c["HMMA"]:
        s += " (%.3f)" % (c["LDSM"] / c["HMMA"])
    rest = sorted(k for k in c if k not in ("LDSM", "HMMA"))
    return s + "".join(" %s %d" % (k, c[k]) for k in rest)


def ptxas_info(path):
    info, cur = {}, None
    for line in open(path):
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            cur = m.group(1)
            info[cur] = {}
            continue
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            info[cur]["spill"] = "%s/%s" % m.groups()
        m = re.search(r"Used (\d+) registers", line)
        if m:
            info[cur]["regs"] = m.group(1)
            m2 = re.search(r"(\d+) bytes smem", line)
            info[cur]["smem"] = m2.group(1) if m2 else "0"
    return info


def main(argv):
    log, filt = None, ""
    args = argv[1:]
    while args:
        a = args.pop(0)
        if a == "-p":
            log = args.pop(0)
        else:
            filt = a
    funcs = parse(sys.stdin.read())
    names = demangle(list(funcs))
    info = ptxas_info(log) if log else {}
    for f in sorted(funcs, key=lambda n: names[n]):
        if "_mma" not in names[f] or filt not in names[f]:
            continue
        i = info.get(f, {})
        head = names[f]
        if i:
            head += "  regs %s spill st/ld %s B static smem %s B" % (
                i.get("regs", "?"), i.get("spill", "?"), i.get("smem", "?"))
        span = hot_loop(funcs[f])
        print(head)
        print("  loop : " + fmt(count(funcs[f], span)))
        print("  total: " + fmt(count(funcs[f])))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # quiet under `| head`
    sys.exit(main(sys.argv))
