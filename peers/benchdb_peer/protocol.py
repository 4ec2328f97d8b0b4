"""benchdb_peer.protocol: the case a peer is handed, the lines it prints, and the serving loop
(schemas/peer-protocol.md, versions 1 and 2; standard library only).

A peer built with the kit runs in either of the protocol's modes, whichever the runner asks for:
one process per case (the case in BENCHDB_* environment variables) or persistent (BENCHDB_PEER_MODE
= persistent: `case {JSON}` lines on stdin, one at a time). `serve(run_case)` does both: it prints
the header, turns each case into a `Case`, calls `run_case(case, out)` and prints the case's status
line from what happened:

    run_case returns            status ok
    raises Unsupported(reason)  status unsupported REASON
    raises CheckFailed          status error REASON (the check lines were printed before)
    an out-of-memory error      status oom REASON (torch's OutOfMemoryError, MemoryError, "out of memory")
    any other exception         status error TYPE: MESSAGE (last traceback line), traceback on stderr
"""
import json
import math
import os
import sys
import traceback

#: The newest protocol version this kit speaks.
PROTOCOL = 2

#: Pass -> the phases it times, in order (the protocol's BENCHDB_PHASES).
PASS_PHASES = {
    "forward": ("fwd",),
    "backward": ("bwd",),
    "forward_backward": ("fwd", "bwd"),
    "train_step": ("fwd", "bwd", "opt"),
}


class Unsupported(Exception):
    """The case is a combination this peer does not run: stored as `unsupported` with the reason."""


class CheckFailed(Exception):
    """The peer's output differs from the reference beyond benchdb's tolerance: `error`, not timed."""


def _bool(text):
    return str(text).strip().lower() in ("true", "1", "yes")


class Case:
    """One case, from the runner's BENCHDB_* variables (a dict: os.environ, or a persistent peer's
    `case` object). Every parameter of the case — built-in or the peer's own — is an attribute
    (`case.seq_len`, `case.backend`), typed as in the case's params JSON (BENCHDB_PARAMS); the
    protocol's fixed fields have names of their own:

        suite impl device dtype pass_ phases warmup iters seed mem_limit sync tf32 atol rtol paced

    `paced` (a persistent peer's case in an interleaved group): the runner hands out the
    iterations in steps — run_iterations (measure.py) prints `ready` and waits for `go N`.
    """

    def __init__(self, env):
        self.env = dict(env)
        try:
            self.params = json.loads(self.env.get("BENCHDB_PARAMS") or "{}")
        except ValueError as exc:
            raise ValueError("BENCHDB_PARAMS is not JSON: %s" % exc)
        self.suite = self._text("suite")
        self.impl = self._text("impl")
        self.device = self._text("device", "cpu")
        self.dtype = self._text("dtype", "float32")
        self.pass_ = self._text("pass")
        phases = self.env.get("BENCHDB_PHASES")
        self.phases = tuple(phases.split()) if phases else PASS_PHASES.get(self.pass_, ())
        self.warmup = self._int("warmup")
        self.iters = self._int("iters")
        self.seed = self._int("seed", 0)
        self.mem_limit = self._int("mem_limit", 0)
        self.sync = _bool(self.env.get("BENCHDB_SYNC", "true"))
        self.tf32 = _bool(self.env.get("BENCHDB_TF32", "false"))
        self.paced = _bool(self.env.get("BENCHDB_PACED", "false"))
        # benchdb's tolerance for this suite and dtype (peer-protocol.md "Validation")
        self.atol = float(self.env.get("BENCHDB_CHECK_ATOL") or _default_atol(self))
        self.rtol = float(self.env.get("BENCHDB_CHECK_RTOL") or _default_rtol(self))

    def _text(self, key, default=None):
        value = self.env.get("BENCHDB_" + key.upper())
        if value is None:
            value = self.params.get(key, default)
        if value is None:
            raise ValueError("the case has no %s (BENCHDB_%s): run this peer through `runner run` "
                             "with a sweep that names it under peers:" % (key, key.upper()))
        return str(value)

    def _int(self, key, default=None):
        text = self._text(key, default)
        if not str(text).isdigit():
            raise ValueError("BENCHDB_%s must be a non-negative integer, got %r" % (key.upper(), text))
        return int(text)

    def __getattr__(self, name):
        if name.startswith("_") or name in ("env", "params"):
            raise AttributeError(name)
        if name in self.params:
            return self.params[name]
        value = self.env.get("BENCHDB_" + name.upper())
        if value is None:
            raise AttributeError("the case has no parameter %r (its parameters: %s)"
                                 % (name, ", ".join(sorted(self.params)) or "none"))
        return int(value) if value.isdigit() else value

    def get(self, name, default=None):
        """A parameter's value, or default when the case does not have it."""
        try:
            return getattr(self, name)
        except AttributeError:
            return default

    @property
    def iterations(self):
        return self.warmup + self.iters

    # Seeded inputs on the case's device (torch is imported on first use).
    def generator(self, offset=0):
        import torch
        return torch.Generator().manual_seed(self.seed * 1000003 + offset)

    def uniform(self, *shape, offset=0, dtype=None):
        """Uniform in [-1, 1) from the case's seed, made on the CPU in float32 (float64 for a
        float64 tensor) so that every device sees the same values, rounded to dtype (default:
        the case's), on the case's device."""
        import torch
        dtype = dtype or torch_dtype(self.dtype)
        made = torch.float64 if dtype == torch.float64 else torch.float32   # then rounded to dtype
        x = torch.rand(*shape, generator=self.generator(offset), dtype=made) * 2 - 1
        return x.to(dtype).to(self.device)

    def randint(self, high, shape, offset=0):
        """Integers in [0, high) from the case's seed, on the case's device (token ids)."""
        import torch
        return torch.randint(high, tuple(shape), generator=self.generator(offset)).to(self.device)


def torch_dtype(name):
    import torch
    dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
              "float64": torch.float64}
    if name not in dtypes:
        raise Unsupported("dtype %s (valid: %s)" % (name, ", ".join(dtypes)))
    return dtypes[name]


def _default_atol(case):
    # The runner always passes BENCHDB_CHECK_ATOL (protocol 2); these are its values for an older
    # runner or a hand-made case, from kernels/ref (attention_check.c, the e2e and matmul rules).
    if case.suite == "attention":
        return {"float16": 2e-3, "bfloat16": 1.6e-2}.get(case.dtype, 2e-5)
    if case.suite == "e2e":
        return {"bfloat16": 4e-2, "float16": 2e-2}.get(case.dtype, 1e-2 if case.tf32 else 1e-4)
    return 2e-3 if case.tf32 else 1e-5


def _default_rtol(case):
    if case.suite == "attention":
        return {"float16": 2e-3, "bfloat16": 1.6e-2}.get(case.dtype, 1e-4)
    return 0.0


def one_line(text, limit=400):
    """text on one printable line of at most limit characters (a status REASON)."""
    text = " ".join("".join(ch if ch.isprintable() else " " for ch in str(text)).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _number(x):
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return "%.9g" % x


class Output:
    """The lines of one case, written to stdout and flushed per call (the runner shows progress
    from the sample lines as they come). Version-2 lines (`check`, `work`) are left out when the
    runner only reads version 1."""

    def __init__(self, version, stream=None):
        self.version = version
        self.stream = stream or sys.stdout
        self.checks = []

    def lines(self, lines):
        self.stream.write("".join(line + "\n" for line in lines))
        self.stream.flush()

    def info(self, key, value):
        self.lines(["info %s %s" % (key, one_line(value) or "-")])

    def info_json(self, obj):
        text = json.dumps(obj, separators=(", ", ": "), ensure_ascii=True, allow_nan=False)
        if len(text) > 2047:   # the protocol's limit: drop the longest values first
            obj = dict(obj)
            while len(text) > 2047 and obj:
                longest = max(obj, key=lambda k: len(json.dumps(obj[k])))
                obj[longest] = None
                text = json.dumps(obj, separators=(", ", ": "), ensure_ascii=True, allow_nan=False)
        self.lines(["info " + text])

    def memory(self, kind, nbytes):
        self.lines(["memory %s %d" % (kind, max(0, int(nbytes)))])

    def check(self, stage, diff, bound, where=""):
        """One comparison against the reference (version 2); a failing one raises CheckFailed
        after it is printed, so the case is never timed."""
        self.checks.append((stage, diff, bound, where))
        if self.version >= 2:
            self.lines(["check %s %s %s%s" % (stage, _number(diff), _number(bound),
                                              " " + one_line(where) if where else "")])
        if not (diff <= bound):   # NaN fails too
            raise CheckFailed("peer check failed: %s differs from the reference by %s (tolerance %s)%s"
                              % (stage, _number(diff), _number(bound), " at " + where if where else ""))

    def work_benchdb(self):
        if self.version >= 2:
            self.lines(["work benchdb"])

    def work(self, phase, flops=None, nbytes=None):
        if self.version >= 2:
            self.lines(["work %s %s %s" % (phase, "-" if flops is None else "%d" % flops,
                                           "-" if nbytes is None else "%d" % nbytes)])

    def ready(self):
        """A paced case (version 2): set up, or done with the iterations asked for; wait."""
        self.lines(["ready"])

    def samples(self, it, times):
        self.lines(["sample %d %s %d" % (it, phase, max(1, int(ns))) for phase, ns in times])

    def status(self, status, reason=""):
        self.lines(["status %s%s" % (status, " " + one_line(reason) if reason else "")])


def is_oom(exc):
    name = type(exc).__name__
    if isinstance(exc, MemoryError) or name == "OutOfMemoryError":
        return True
    msg = str(exc).lower()
    return isinstance(exc, RuntimeError) and any(
        s in msg for s in ("out of memory", "can't allocate memory", "not enough memory",
                           "failed to allocate"))


def _release():
    """Between the cases of a persistent peer: give the GPU memory the last case held back to the
    driver (its tensors were freed when run_case returned: CPython frees by reference count; a
    gc.collect() here cost 0.1-0.9 s a case with torch's heap, more than many cases measure)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_one(run_case, env, version, stream=None):
    """One case: the case's lines, ending with its status line. Returns the status."""
    out = Output(version, stream)
    try:
        case = Case(env)
        run_case(case, out)
        status, reason = "ok", ""
    except Unsupported as exc:
        status, reason = "unsupported", str(exc)
    except CheckFailed as exc:
        status, reason = "error", str(exc)
    except ImportError as exc:
        name = getattr(exc, "name", None) or "?"
        status, reason = "error", ("python module %s not found for %s (install python3-%s or "
                                   "`pip install %s`, or name an interpreter that has it in the "
                                   "peer's command): %s" % (name, sys.executable, name, name, exc))
    except Exception as exc:   # noqa: BLE001 -- every failure is a stored case
        if is_oom(exc):
            status, reason = "oom", "%s: %s" % (type(exc).__name__, exc)
        else:
            traceback.print_exc()
            sys.stderr.flush()
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            status, reason = "error", last
    out.status(status, reason)
    return status


def serve(run_case, argv=None):
    """Run a peer: one case from the environment, or a persistent peer's cases from stdin.
    Returns the process's exit status (0: every status line was printed)."""
    env = os.environ
    newest = env.get("BENCHDB_PEER_PROTOCOL_MAX") or env.get("BENCHDB_PEER_PROTOCOL") or "1"
    version = min(PROTOCOL, int(newest) if newest.isdigit() else 1)
    persistent = env.get("BENCHDB_PEER_MODE") == "persistent"
    if persistent and version < 2:
        sys.stderr.write("benchdb_peer: a persistent peer needs protocol 2\n")
        return 2
    out = sys.stdout
    out.write("benchdb-peer %d\n" % version)
    out.flush()
    if not persistent:
        run_one(run_case, env, version)
        return 0
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        if not line.startswith("case "):
            sys.stderr.write("benchdb_peer: expected a 'case {...}' line, got %r\n" % line[:80])
            return 2
        run_one(run_case, json.loads(line[5:]), version)
        _release()
    return 0
