"""benchdb_peer.measure: warm-up and measured iterations, each phase timed as benchdb times its own.

On CUDA with `sync: true` (the default) each phase is timed with CUDA events recorded on the
current stream around it, read once the phase's end event has completed — one synchronisation
per phase, as benchdb's CUDA phases. With `sync: false` the host clock is read without waiting
for the GPU (the missing-synchronize mistake, on purpose). On the CPU: time.perf_counter_ns().

Memory: on CUDA the caching allocator's peaks (torch.cuda.max_memory_allocated, reset before each
iteration) after the forward and after the backward. On the CPU, where torch has no allocator
statistics, the growth of the process's peak resident set (VmHWM, reset through
/proc/self/clear_refs where the kernel allows it) over its size before the case's setup: an upper
bound on what the case held, Python's own allocations included.
"""
import os
import sys
import time


def _status_kib(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class Memory:
    """Peak memory of one case, per phase."""

    def __init__(self, case):
        import torch
        self.torch = torch
        self.cuda = case.device == "cuda"
        self.device = torch.device(case.device)
        self.base = None
        self.peak = {}
        if not self.cuda:
            self.base = _status_kib("VmRSS")

    def start(self):
        """Before the first timed iteration (after the setup and the validation, whose float64
        reference is not the case's memory): peaks count from here, on top of what is held."""
        if self.cuda:
            self.torch.cuda.synchronize(self.device)
            self.torch.cuda.reset_peak_memory_stats(self.device)
            return
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass

    def start_iteration(self):
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats(self.device)

    def after(self, phase):
        if self.cuda:
            now = self.torch.cuda.max_memory_allocated(self.device)
        else:
            hwm = _status_kib("VmHWM")
            now = None if hwm is None or self.base is None else max(0, hwm - self.base)
        if now is not None:
            self.peak[phase] = max(self.peak.get(phase, 0), now)

    def report(self, out, phases):
        kinds = {"fwd": "peak_fwd", "bwd": "peak_bwd"}
        for phase in ("fwd", "bwd"):
            if phase in phases and phase in self.peak:
                out.memory(kinds[phase], self.peak[phase])
        if self.peak:
            out.memory("peak", max(self.peak.values()))


class Clock:
    """Times one phase: `with clock: ...` then clock.ns."""

    def __init__(self, case):
        import torch
        self.torch = torch
        self.events = case.device == "cuda" and case.sync
        self.ns = 0
        if self.events:   # made once: nothing but the two records sits between them and the phase
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    def __enter__(self):
        if self.events:
            self.start.record()
        else:
            self.t0 = time.perf_counter_ns()
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            return False
        if self.events:
            self.end.record()
            self.end.synchronize()
            self.ns = int(round(self.start.elapsed_time(self.end) * 1e6))
        else:
            self.ns = time.perf_counter_ns() - self.t0
        self.ns = max(1, self.ns)
        return False


class Pace:
    """A paced case's steps (peer-protocol.md, "Paced cases"): before an iteration that no `go N`
    has granted yet, print `ready` (GPU work finished first) and read the next `go N` from stdin.
    An unpaced case runs through."""

    def __init__(self, case, out, stdin=None):
        self.case, self.out = case, out
        self.stdin = stdin or sys.stdin
        self.granted = 0

    def before_iteration(self):
        if not self.case.paced:
            return
        if self.granted == 0:
            if self.case.device == "cuda":
                import torch
                torch.cuda.synchronize()
            self.out.ready()
            line = self.stdin.readline()
            if not line:   # the runner closed stdin: it ends this process
                sys.exit(0)
            words = line.split()
            if len(words) != 2 or words[0] != "go" or not words[1].isdigit() or int(words[1]) < 1:
                raise RuntimeError("expected a 'go N' line on stdin, got %r" % line.strip()[:80])
            self.granted = int(words[1])
        self.granted -= 1


def run_iterations(case, out, step, memory=None):
    """warmup + iters iterations of step: before each, step.prepare() (untimed: reset gradients,
    run a backward pass's forward); then each of the case's phases, step.phase(name)(), timed.
    Samples are printed per iteration. A paced case waits for the runner's `go N` between its
    steps (Pace)."""
    clock = Clock(case)
    pace = Pace(case, out)
    if memory is not None:
        memory.start()
    for it in range(case.iterations):
        pace.before_iteration()
        step.prepare()
        if memory is not None:
            memory.start_iteration()
        times = []
        for phase in case.phases:
            run = step.phase(phase)
            with clock:
                run()
            times.append((phase, clock.ns))
            if memory is not None:
                memory.after(phase)
        out.samples(it, times)
    if case.device == "cuda":
        import torch
        torch.cuda.synchronize()


def threads_from_env():
    """OMP_NUM_THREADS, else every CPU: the thread count benchdb's own CPU kernels use."""
    text = os.environ.get("OMP_NUM_THREADS", "")
    return int(text) if text.isdigit() and int(text) > 0 else (os.cpu_count() or 1)
