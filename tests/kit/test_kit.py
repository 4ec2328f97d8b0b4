"""tests/kit/test_kit.py: the peer kit (peers/benchdb_peer) on its own, without the runner.

    BENCHDB_PYTHON=python-with-torch tests/kit/run.sh     (CTest: kit_unit)

The protocol part needs only the standard library; the torch part is skipped (with the reason)
where this interpreter has no torch. What it proves: a case reads as the runner writes it; the
lines are the protocol's; every failure is a status; the float64 attention reference and its
gradients are right (finite differences); a correct kernel passes its checks and is timed, and
planted wrong kernels — forward, causal mask, one gradient, a wrong training backward, a wrong
row far from the start of a long sequence — are caught before any sample is printed.
"""
import io
import json
import math
import os
import platform
import subprocess
import sys
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "..", "..", "peers")
sys.path.insert(0, PEERS)

from benchdb_peer import protocol  # noqa: E402
from benchdb_peer.protocol import Case, Output, Unsupported, run_one  # noqa: E402

try:
    import torch
except ImportError:   # the torch tests say why they are skipped
    torch = None


def attention_env(**over):
    env = {
        "BENCHDB_SUITE": "attention", "BENCHDB_IMPL": "mine", "BENCHDB_DEVICE": "cpu",
        "BENCHDB_DTYPE": "float32", "BENCHDB_PASS": "forward_backward", "BENCHDB_PHASES": "fwd bwd",
        "BENCHDB_WARMUP": "1", "BENCHDB_ITERS": "2", "BENCHDB_SEED": "3", "BENCHDB_MEM_LIMIT": "0",
        "BENCHDB_SYNC": "true", "BENCHDB_TF32": "false", "BENCHDB_BATCH_SIZE": "2",
        "BENCHDB_HEADS": "2", "BENCHDB_SEQ_LEN": "37", "BENCHDB_HEAD_DIM": "16",
        "BENCHDB_CAUSAL": "true", "BENCHDB_CHECK_ATOL": "2e-5", "BENCHDB_CHECK_RTOL": "1e-4",
    }
    env.update({k: str(v) for k, v in over.items()})
    params = {"causal": env["BENCHDB_CAUSAL"] == "true"}
    env.setdefault("BENCHDB_PARAMS", json.dumps(params))
    return env


def e2e_env(**over):
    env = {
        "BENCHDB_SUITE": "e2e", "BENCHDB_IMPL": "mine", "BENCHDB_DEVICE": "cpu",
        "BENCHDB_DTYPE": "float32", "BENCHDB_PASS": "train_step", "BENCHDB_PHASES": "fwd bwd opt",
        "BENCHDB_WARMUP": "1", "BENCHDB_ITERS": "2", "BENCHDB_SEED": "0", "BENCHDB_MEM_LIMIT": "0",
        "BENCHDB_SYNC": "true", "BENCHDB_TF32": "false", "BENCHDB_BATCH_SIZE": "2",
        "BENCHDB_CONTEXT_LENGTH": "8", "BENCHDB_D_MODEL": "16", "BENCHDB_D_FF": "32",
        "BENCHDB_NUM_LAYERS": "1", "BENCHDB_NUM_HEADS": "2", "BENCHDB_VOCAB_SIZE": "50",
        "BENCHDB_CHECK_ATOL": "1e-4", "BENCHDB_CHECK_RTOL": "0", "BENCHDB_PARAMS": "{}",
    }
    env.update({k: str(v) for k, v in over.items()})
    return env


def run_case(run, env, version=2):
    stream = io.StringIO()
    status = run_one(run, env, version, stream)
    return status, stream.getvalue().splitlines()


def lines_of(lines, word):
    return [line for line in lines if line.split()[0] == word]


class ProtocolTest(unittest.TestCase):
    def test_case_reads_the_runner_s_variables_and_params_typed(self):
        env = attention_env(BENCHDB_PARAMS=json.dumps({"causal": True, "backend": "math", "lora_rank": 4}))
        case = Case(env)
        self.assertEqual((case.suite, case.dtype, case.pass_, case.phases), ("attention", "float32", "forward_backward", ("fwd", "bwd")))
        self.assertEqual((case.warmup, case.iters, case.iterations, case.seed), (1, 2, 3, 3))
        self.assertEqual((case.seq_len, case.head_dim), (37, 16))
        self.assertIs(case.causal, True)
        self.assertEqual(case.backend, "math")
        self.assertEqual(case.lora_rank, 4)
        self.assertEqual(case.get("nope", "x"), "x")
        self.assertEqual((case.atol, case.rtol), (2e-5, 1e-4))
        with self.assertRaisesRegex(AttributeError, "its parameters: backend, causal, lora_rank"):
            case.nope

    def test_the_tolerance_without_the_runner_s_is_benchdb_s(self):
        # an older runner or a hand-made case: the values of kernels/ref/check_rule.c
        for dtype, tf32, want in (("float32", "false", 1e-4), ("float32", "true", 1e-2),
                                  ("bfloat16", "false", 4e-2), ("float16", "false", 2e-2)):
            env = e2e_env(BENCHDB_DTYPE=dtype, BENCHDB_TF32=tf32)
            del env["BENCHDB_CHECK_ATOL"]
            self.assertEqual(Case(env).atol, want, dtype)

    def test_version_1_output_has_no_version_2_lines(self):
        for version, want in ((1, []), (2, ["check out 0.5 1", "work benchdb", "work fwd 10 -"])):
            stream = io.StringIO()
            out = Output(version, stream)
            out.check("out", 0.5, 1.0)
            out.work_benchdb()
            out.work("fwd", 10, None)
            self.assertEqual(stream.getvalue().splitlines(), want)

    def test_a_failing_or_nan_check_raises_after_it_is_printed(self):
        for diff in (2.0, float("nan")):
            stream = io.StringIO()
            with self.assertRaises(protocol.CheckFailed):
                Output(2, stream).check("dq", diff, 1.0, "dQ[b=0]")
            self.assertTrue(stream.getvalue().startswith("check dq "))

    def test_every_failure_is_a_status(self):
        def raiser(exc):
            def run(case, out):
                raise exc
            return run
        want = [(Unsupported("no such mode"), "unsupported", "no such mode"),
                (MemoryError("cannot allocate"), "oom", "MemoryError: cannot allocate"),
                (RuntimeError("CUDA out of memory. Tried"), "oom", "out of memory"),
                (ValueError("bad\nvalue\x1b[31m"), "error", "ValueError: bad value [31m")]
        for exc, status, text in want:
            got, lines = run_case(raiser(exc), attention_env())
            self.assertEqual(got, status)
            self.assertIn(text, lines[-1])
            self.assertTrue(lines[-1].startswith("status " + status))
            self.assertNotIn("\x1b", lines[-1])

    def test_a_paced_case_waits_for_each_go_line(self):
        from benchdb_peer.measure import Pace
        out = io.StringIO()
        case = Case(attention_env(BENCHDB_PACED="true", BENCHDB_WARMUP="1", BENCHDB_ITERS="2"))
        pace = Pace(case, Output(2, out), io.StringIO("go 2\ngo 1\n"))
        readies = []   # the ready lines printed before each iteration ran
        for it in range(case.iterations):
            pace.before_iteration()
            readies.append(out.getvalue().count("ready"))
        self.assertEqual(readies, [1, 1, 2])
        self.assertTrue(case.paced)
        # unpaced: never waits, never reads
        out = io.StringIO()
        pace = Pace(Case(attention_env()), Output(2, out), io.StringIO(""))
        for _ in range(3):
            pace.before_iteration()
        self.assertEqual(out.getvalue(), "")
        # a wrong line is an error; the end of stdin ends the process quietly
        pace = Pace(case, Output(2, io.StringIO()), io.StringIO("go zero\n"))
        self.assertRaises(RuntimeError, pace.before_iteration)
        pace = Pace(case, Output(2, io.StringIO()), io.StringIO(""))
        self.assertRaises(SystemExit, pace.before_iteration)

    def test_a_missing_variable_is_an_error_naming_it(self):
        env = attention_env()
        del env["BENCHDB_ITERS"]
        status, lines = run_case(lambda c, o: None, env)
        self.assertEqual(status, "error")
        self.assertIn("BENCHDB_ITERS", lines[-1])


@unittest.skipIf(torch is None, "this interpreter has no torch (set BENCHDB_PYTHON to one that has)")
class ReferenceTest(unittest.TestCase):
    def inputs(self, B=1, H=2, S=9, D=4, seed=1):
        g = torch.Generator().manual_seed(seed)
        return [torch.rand(B, H, S, D, generator=g, dtype=torch.float64) * 2 - 1 for _ in range(4)]

    def test_forward_matches_the_definition(self):
        from benchdb_peer.check import attention_reference
        q, k, v, _ = self.inputs()
        for causal in (False, True):
            o, _ = attention_reference(q, k, v, causal)
            s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            if causal:
                s = s + torch.full_like(s, float("-inf")).triu(1)
            want = torch.softmax(s, -1) @ v
            self.assertLess(float((o - want).abs().max()), 1e-14)
            rows = [0, 4, 8]
            part, _ = attention_reference(q, k, v, causal, rows=rows)
            self.assertLess(float((part - o[..., rows, :]).abs().max()), 1e-14)

    def test_gradients_match_finite_differences(self):
        from benchdb_peer.check import attention_reference
        q, k, v, do = self.inputs(S=5, D=3)
        for causal in (False, True):
            _, (dq, dk, dv) = attention_reference(q, k, v, causal, do)
            for t, grad in ((q, dq), (k, dk), (v, dv)):
                for flat in (0, 7, 13, 29):
                    idx = [int(i) for i in torch.unravel_index(torch.tensor(flat), t.shape)]
                    h = 1e-6
                    t[tuple(idx)] += h
                    up = float((attention_reference(q, k, v, causal)[0] * do).sum())
                    t[tuple(idx)] -= 2 * h
                    down = float((attention_reference(q, k, v, causal)[0] * do).sum())
                    t[tuple(idx)] += h
                    self.assertAlmostEqual((up - down) / (2 * h), float(grad[tuple(idx)]), delta=1e-7)


def sdpa(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


class WrongDK(torch.autograd.Function if torch else object):
    """Identity on K whose backward scales dK by 1.01: a bug only the dK check can see."""
    @staticmethod
    def forward(ctx, k):
        return k.view_as(k)

    @staticmethod
    def backward(ctx, grad):
        return grad * 1.01


@unittest.skipIf(torch is None, "this interpreter has no torch (set BENCHDB_PYTHON to one that has)")
class AttentionPeerTest(unittest.TestCase):
    def run_fn(self, fn, **env):
        from benchdb_peer import attention
        return run_case(lambda case, out: attention.run_case(fn, case, out), attention_env(**env))

    def test_a_correct_kernel_passes_every_check_and_is_timed(self):
        for dtype, atol in (("float32", "2e-5"), ("bfloat16", "1.6e-2")):
            status, lines = self.run_fn(sdpa, BENCHDB_DTYPE=dtype, BENCHDB_CHECK_ATOL=atol, BENCHDB_CHECK_RTOL=atol)
            self.assertEqual(status, "ok", lines)
            self.assertEqual([l.split()[1] for l in lines_of(lines, "check")],
                             ["output", "dq", "dk", "dv", "output_again"])
            self.assertEqual(len(lines_of(lines, "sample")), 3 * 2)
            self.assertIn("work benchdb", lines)
            info = json.loads(lines_of(lines, "info")[0][5:])
            self.assertEqual(info["device"], "cpu")

    def test_planted_wrong_kernels_are_caught_before_any_sample(self):
        wrong = {
            "scale": (lambda q, k, v, c: torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=c, scale=1.0 / q.shape[-1]), "output"),
            "no causal mask": (lambda q, k, v, c: sdpa(q, k, v, False), "output"),
            "dK": (lambda q, k, v, c: sdpa(q, WrongDK.apply(k), v, c), "dk"),
        }
        for name, (fn, stage) in wrong.items():
            status, lines = self.run_fn(fn)
            self.assertEqual(status, "error", name)
            self.assertIn("peer check failed: %s differs" % stage, lines[-1], name)
            self.assertEqual(lines_of(lines, "sample"), [], name)

    def test_a_long_sequence_is_checked_on_sampled_rows_and_a_reduced_backward(self):
        def wrong_last_row(q, k, v, c):
            o = sdpa(q, k, v, c)
            return torch.cat([o[..., :-1, :], o[..., -1:, :] * 1.5], dim=-2)
        env = dict(BENCHDB_SEQ_LEN=2048, BENCHDB_HEAD_DIM=64, BENCHDB_BATCH_SIZE=1, BENCHDB_HEADS=1,
                   BENCHDB_ITERS=1, BENCHDB_WARMUP=0)
        status, lines = self.run_fn(sdpa, **env)
        self.assertEqual(status, "ok", lines[-1])
        self.assertEqual([l.split()[1] for l in lines_of(lines, "check")],
                         ["output", "output_reduced", "dq", "dk", "dv", "output_again"])
        status, lines = self.run_fn(wrong_last_row, **env)
        self.assertEqual(status, "error")
        self.assertIn("s=2047", lines[-1])

    def test_a_reduced_backward_holds_two_heads(self):
        # a backward right for the first head only (its dV wrong past head 0): the reduced
        # problem of a sampled case has min(heads, 2) heads, as benchdb's own check (at one head,
        # the case was timed)
        class WrongPastHead0(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, grad):
                grad = grad.clone()
                grad[:, 1:] *= 1.5
                return grad
        env = dict(BENCHDB_SEQ_LEN=2048, BENCHDB_HEAD_DIM=64, BENCHDB_BATCH_SIZE=1, BENCHDB_HEADS=2,
                   BENCHDB_ITERS=1, BENCHDB_WARMUP=0)
        status, lines = self.run_fn(lambda q, k, v, c: sdpa(q, k, WrongPastHead0.apply(v), c), **env)
        self.assertEqual(status, "error", lines[-1])
        self.assertIn("peer check failed: dv differs", lines[-1])
        self.assertIn("dV[b=0, h=1, ", lines[-1])
        self.assertEqual(lines_of(lines, "sample"), [])

    def test_two_keys_over_many_heads_pass(self):
        # with two keys a row's dS is (x, -x): some head's largest dQ or dK is by chance ~1e-5 of
        # its largest dV, and held to its own max it was held below float32's rounding noise (a
        # correct kernel failed); the floor at GRAD_FLOOR of dV's, as benchdb's own check
        for causal in ("false", "true"):
            status, lines = self.run_fn(sdpa, BENCHDB_SEQ_LEN=2, BENCHDB_HEAD_DIM=24, BENCHDB_BATCH_SIZE=50,
                                        BENCHDB_HEADS=4, BENCHDB_CAUSAL=causal, BENCHDB_ITERS=1,
                                        BENCHDB_WARMUP=0)
            self.assertEqual(status, "ok", (causal, lines[-1]))

    def test_a_long_sequence_on_the_cpu_is_checked_on_every_head(self):
        # 16 (batch, head) pairs, sampled rows: benchdb's own CPU check compares every head's, so
        # a kernel wrong on one head (an offset bug in batch 0, head 1) cannot pass; a spread
        # sample of 8 heads skipped this one and the case was timed
        def wrong_one_head(q, k, v, c):
            o = sdpa(q, k, v, c).clone()
            o[0, 1] *= 1.5
            return o
        env = dict(BENCHDB_SEQ_LEN=512, BENCHDB_HEAD_DIM=64, BENCHDB_BATCH_SIZE=2, BENCHDB_HEADS=8,
                   BENCHDB_PASS="forward", BENCHDB_PHASES="fwd", BENCHDB_ITERS=1, BENCHDB_WARMUP=0)
        status, lines = self.run_fn(sdpa, **env)
        self.assertEqual(status, "ok", lines[-1])
        self.assertEqual([l.split()[1] for l in lines_of(lines, "check")], ["output", "output_again"])
        status, lines = self.run_fn(wrong_one_head, **env)
        self.assertEqual(status, "error", lines[-1])
        self.assertIn("peer check failed: output differs", lines[-1])
        self.assertIn("O[b=0, h=1, ", lines[-1])
        self.assertEqual(lines_of(lines, "sample"), [])

    def test_an_output_of_another_dtype_is_an_error_never_timed(self):
        # float32 from bfloat16 inputs: within bfloat16's tolerance, but not the case's kernel
        def in_float32(q, k, v, c):
            return sdpa(q.float(), k.float(), v.float(), c)
        status, lines = self.run_fn(in_float32, BENCHDB_DTYPE="bfloat16", BENCHDB_CHECK_ATOL="1.6e-2",
                                    BENCHDB_CHECK_RTOL="1.6e-2")
        self.assertEqual(status, "error", lines[-1])
        self.assertIn("returned torch.float32 on cpu for inputs of torch.bfloat16 on cpu", lines[-1])
        self.assertEqual(lines_of(lines, "sample"), [])

    def test_a_function_that_overwrites_its_inputs_is_an_error_never_timed(self):
        # q zeroed in place: its output is the mean of V, what a float64 reference of the zeroed
        # q gives too; it must be held to the inputs it was given
        def zero_q(q, k, v, c):
            with torch.no_grad():
                q.zero_()
            return sdpa(q, k, v, c)

        def scale_do(q, k, v, c):   # the backward writes into dO
            class Hook(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return x.view_as(x)

                @staticmethod
                def backward(ctx, grad):
                    grad.mul_(1.0)
                    grad[0, 0, 0, 0] = 0.0
                    return grad
            return Hook.apply(sdpa(q, k, v, c))
        for name, fn, passes, word in (("zero q", zero_q, ("forward", "forward_backward"), "q"),
                                        ("dO", scale_do, ("forward_backward",), "dO")):
            for pass_ in passes:
                phases = "fwd" if pass_ == "forward" else "fwd bwd"
                status, lines = self.run_fn(fn, BENCHDB_PASS=pass_, BENCHDB_PHASES=phases)
                self.assertEqual(status, "error", (name, pass_, lines[-1]))
                self.assertIn("changed its input %s" % word, lines[-1], (name, pass_))
                self.assertEqual(lines_of(lines, "sample"), [], (name, pass_))
        status, lines = self.run_fn(zero_q, BENCHDB_PASS="forward", BENCHDB_PHASES="fwd", BENCHDB_SEQ_LEN=2048,
                                    BENCHDB_HEAD_DIM=64, BENCHDB_ITERS=1, BENCHDB_WARMUP=0)
        self.assertIn("changed its input q", lines[-1], "sampled")

    def test_a_sampled_check_runs_the_forward_that_is_timed(self):
        # right without autograd, wrong with it (past a 256-row tile): a pass with a backward
        # times the forward with autograd, so that is the forward the sampled rows must come from
        def wrong_when_training(q, k, v, c):
            o = sdpa(q, k, v, c)
            if torch.is_grad_enabled() and q.requires_grad:
                o = torch.cat([o[..., :256, :], o[..., 256:, :] * 0.5], dim=-2)
            return o
        for pass_, phases in (("forward_backward", "fwd bwd"), ("backward", "bwd")):
            status, lines = self.run_fn(wrong_when_training, BENCHDB_PASS=pass_, BENCHDB_PHASES=phases,
                                        BENCHDB_SEQ_LEN=2048, BENCHDB_HEAD_DIM=64, BENCHDB_ITERS=1,
                                        BENCHDB_WARMUP=0)
            self.assertEqual(status, "error", (pass_, lines[-1]))
            self.assertIn("peer check failed: output differs", lines[-1], pass_)
            self.assertEqual(lines_of(lines, "sample"), [], pass_)
        status, lines = self.run_fn(wrong_when_training, BENCHDB_PASS="forward", BENCHDB_PHASES="fwd",
                                    BENCHDB_SEQ_LEN=2048, BENCHDB_HEAD_DIM=64, BENCHDB_ITERS=1, BENCHDB_WARMUP=0)
        self.assertEqual(status, "ok", lines[-1])   # forward alone runs (and is timed) without autograd

    def test_the_whole_problem_is_checked_where_benchdb_checks_its_own_whole(self):
        # causal, B=1, H=8, S=512, D=64: 1.3e8 reference multiply-adds as benchdb counts them (the
        # causal half), under its 2e8 budget, so every row is compared; row 5 is no sampled row
        def wrong_row_5(q, k, v, c):
            o = sdpa(q, k, v, c).clone()
            o[..., 5, :] *= 1.5
            return o
        status, lines = self.run_fn(wrong_row_5, BENCHDB_SEQ_LEN=512, BENCHDB_HEAD_DIM=64, BENCHDB_BATCH_SIZE=1,
                                    BENCHDB_HEADS=8, BENCHDB_PASS="forward", BENCHDB_PHASES="fwd",
                                    BENCHDB_ITERS=1, BENCHDB_WARMUP=0)
        self.assertEqual(status, "error", lines[-1])
        self.assertRegex(lines[-1], r"output differs .* at O\[b=0, h=\d, s=5, ")
        self.assertEqual(lines_of(lines, "sample"), [])

    def test_a_result_kept_from_an_earlier_call_is_caught(self):
        # K "packed" once per buffer and reused: right on the first call, stale as soon as the
        # buffer holds new values (every training step); the kit calls it again on new values in
        # the same tensors (check output_again) and times it on the case's values
        for seq_len, head_dim in ((37, 16), (2048, 64)):   # the whole check, the sampled one
            packed = {}

            def cached_k(q, k, v, c):
                key = (k.data_ptr(), tuple(k.shape))
                if key not in packed:
                    packed[key] = k.detach().clone()
                return sdpa(q, packed[key] + (k - k.detach()), v, c)
            status, lines = self.run_fn(cached_k, BENCHDB_SEQ_LEN=seq_len, BENCHDB_HEAD_DIM=head_dim)
            self.assertEqual(status, "error", lines[-1])
            self.assertIn("peer check failed: output_again differs", lines[-1])
            self.assertEqual(lines_of(lines, "sample"), [])
        from benchdb_peer import attention
        seen = []

        def recording(q, k, v, c):   # the timed calls get the case's values back
            seen.append(float(q.detach().double().sum()))
            return sdpa(q, k, v, c)
        status, lines = self.run_fn(recording)
        self.assertEqual(status, "ok", lines[-1])
        self.assertEqual(len(set(seen[:1] + seen[2:])), 1, seen)
        self.assertNotEqual(seen[0], seen[1])

    def test_pass_backward_times_only_the_backward(self):
        status, lines = self.run_fn(sdpa, BENCHDB_PASS="backward", BENCHDB_PHASES="bwd")
        self.assertEqual(status, "ok", lines[-1])
        self.assertEqual({l.split()[2] for l in lines_of(lines, "sample")}, {"bwd"})

    def test_sdpa_backends_the_cpu_lacks_are_unsupported_with_torch_s_reason(self):
        from benchdb_peer import sdpa as peer
        for backend, want in (("math", "ok"), ("flash", "ok"), ("efficient", "unsupported"), ("cudnn", "unsupported")):
            env = attention_env(BENCHDB_PARAMS=json.dumps({"causal": True, "backend": backend}))
            status, lines = run_case(peer.run, env)
            self.assertEqual(status, want, (backend, lines[-1]))
            if want == "ok":
                self.assertEqual(json.loads(lines_of(lines, "info")[0][5:])["backend"], backend)
            else:
                self.assertIn("%s SDPA backend does not run this case" % backend, lines[-1])


class TinyLM(torch.nn.Module if torch else object):
    def __init__(self, vocab, d, wrong_backward=False):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.lin = torch.nn.Linear(d, d)
        self.head = torch.nn.Linear(d, vocab)
        self.wrong = wrong_backward

    def forward(self, x):
        h = self.lin(self.embed(x))
        if self.wrong and h.dtype != torch.float64:   # a fast path (a custom kernel) that the
            h = WrongDK.apply(h)                       # float64 reference does not take
        return self.head(torch.tanh(h))


@unittest.skipIf(torch is None, "this interpreter has no torch (set BENCHDB_PYTHON to one that has)")
class TrainPeerTest(unittest.TestCase):
    def factory(self, wrong=False):
        def make(case):
            model = TinyLM(case.vocab_size, case.d_model, wrong)
            x = case.randint(case.vocab_size, (case.batch_size, case.context_length))
            y = case.randint(case.vocab_size, (case.batch_size, case.context_length), offset=1)
            return model, lambda m: torch.nn.functional.cross_entropy(m(x).flatten(0, 1), y.flatten())
        return make

    def run_factory(self, make, **env):
        from benchdb_peer import train
        return run_case(lambda case, out: train.run_case(make, case, out), e2e_env(**env))

    def test_every_pass_validated_and_timed(self):
        for pass_, phases in (("forward", "fwd"), ("forward_backward", "fwd bwd"), ("train_step", "fwd bwd opt")):
            status, lines = self.run_factory(self.factory(), BENCHDB_PASS=pass_, BENCHDB_PHASES=phases)
            self.assertEqual(status, "ok", lines[-1])
            stages = [l.split()[1] for l in lines_of(lines, "check")]
            want = {"forward": ["loss"], "forward_backward": ["loss", "grad_norm", "grad"],
                    "train_step": ["loss", "grad_norm", "grad", "opt_step"]}[pass_]
            self.assertEqual(stages, want)
            self.assertEqual(len(lines_of(lines, "sample")), 3 * len(phases.split()))
            self.assertTrue(any(l.startswith("memory param ") for l in lines))
            self.assertEqual(lines_of(lines, "work"), [])   # the user's model: no FLOPs claimed

    def test_a_wrong_backward_is_caught(self):
        status, lines = self.run_factory(self.factory(wrong=True))
        self.assertEqual(status, "error")
        self.assertIn("peer check failed: grad_norm differs", lines[-1])
        self.assertEqual(lines_of(lines, "sample"), [])

    def test_a_backward_wrong_in_sign_is_caught_though_its_norm_is_right(self):
        # -grad through the fast path: every gradient below it has the right norm and the wrong
        # sign (the optimizer would climb the loss); benchdb checks its own model's gradients
        # tensor by tensor, element by element, and so does the kit
        class Flip(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, grad):
                return -grad

        with mock.patch.object(WrongDK, "backward", Flip.backward):
            status, lines = self.run_factory(self.factory(wrong=True))
        self.assertEqual(status, "error", lines[-1])
        checks = {l.split()[1]: l for l in lines_of(lines, "check")}
        diff, bound = (float(x) for x in checks["grad_norm"].split()[2:4])
        self.assertLessEqual(diff, bound)   # the norm alone cannot see it
        self.assertIn("peer check failed: grad differs", lines[-1])
        self.assertRegex(lines[-1], r"gradient of (embed|lin)\.(weight|bias)\[")
        self.assertEqual(lines_of(lines, "sample"), [])

    def factory_with(self, optimizer_of):
        base = self.factory()

        def make(case):
            model, loss = base(case)
            return model, loss, optimizer_of(model)
        return make

    def test_the_optimizer_step_is_checked_and_the_weights_restored(self):
        # the kit's AdamW against the float64 step; a user's Adam with its own settings too
        for opt in (None, lambda m: torch.optim.Adam(m.parameters(), lr=3e-3, weight_decay=0.1),
                    lambda m: torch.optim.AdamW(m.parameters(), lr=2e-2, eps=1e-6)):
            seen = {}

            def make(case, opt=opt):
                model, loss = self.factory()(case)
                seen["model"], seen["w0"] = model, [p.detach().clone() for p in model.parameters()]
                return (model, loss) if opt is None else (model, loss, opt(model))

            from benchdb_peer import train
            timed = []
            real = train.run_iterations
            with mock.patch.object(train, "run_iterations", lambda case, out, step, memory: (
                    timed.append([torch.equal(p.detach(), w) for p, w in
                                  zip(seen["model"].parameters(), seen["w0"])]),
                    real(case, out, step, memory))):
                status, lines = self.run_factory(make)
            self.assertEqual(status, "ok", lines[-1])
            checks = {l.split()[1]: l for l in lines_of(lines, "check")}
            diff, bound = (float(x) for x in checks["opt_step"].split()[2:4])
            self.assertLessEqual(diff, bound)
            self.assertIn("update of", checks["opt_step"])
            self.assertEqual(timed, [[True] * len(seen["w0"])])   # timing starts from the weights made

    def test_a_wrong_optimizer_step_is_caught(self):
        real_step = torch.optim.AdamW.step

        def nudged(self_, *a, **k):   # the right step, then one element off by a tenth of lr
            out = real_step(self_, *a, **k)
            with torch.no_grad():
                self_.param_groups[0]["params"][0].view(-1)[5] += 1e-4
            return out

        with mock.patch.object(torch.optim.AdamW, "step", nudged):
            status, lines = self.run_factory(self.factory())
        self.assertEqual(status, "error", lines[-1])
        self.assertIn("peer check failed: opt_step differs", lines[-1])
        self.assertIn("update of embed.weight[", lines[-1])
        self.assertEqual(lines_of(lines, "sample"), [])

    def test_parameters_the_optimizer_leaves_out_are_an_error_never_timed(self):
        for opt in (lambda m: torch.optim.AdamW(m.head.parameters()),
                    lambda m: torch.optim.SGD(TinyLM(50, 16).parameters(), lr=0.1)):
            status, lines = self.run_factory(self.factory_with(opt))
            self.assertEqual(status, "error", lines[-1])
            self.assertRegex(lines[-1], r"the optimizer does not hold [35] of the 5 parameters with a "
                                        r"gradient \(embed.weight, lin.weight, lin.bias")
            self.assertEqual(lines_of(lines, "sample"), [])

    def test_adam_with_decoupled_weight_decay_is_checked_as_adamw(self):
        try:
            torch.optim.Adam([torch.zeros(1, requires_grad=True)], decoupled_weight_decay=True)
        except TypeError:
            self.skipTest("this torch's Adam has no decoupled_weight_decay")
        status, lines = self.run_factory(self.factory_with(lambda m: torch.optim.Adam(
            m.parameters(), lr=1e-2, weight_decay=0.5, decoupled_weight_decay=True)))
        self.assertEqual(status, "ok", lines[-1])
        self.assertIn("opt_step", [l.split()[1] for l in lines_of(lines, "check")])

    def test_a_step_below_the_weights_rounding_is_no_failure(self):
        # bfloat16 weights near 1 and lr 1e-4: the step rounds away (half an ulp of 1 is 3.9e-3)
        def make(case):
            model, loss = self.factory()(case)
            model = model.to(torch.bfloat16)
            return model, (lambda m, loss=loss: loss(m).float()), torch.optim.SGD(model.parameters(), lr=1e-4)
        status, lines = self.run_factory(make, BENCHDB_CHECK_ATOL="4e-2")
        self.assertEqual(status, "ok", lines[-1])

    def test_parameters_of_the_optimizer_beyond_the_model_are_restored(self):
        temperature = torch.nn.Parameter(torch.tensor(2.0))
        seen = []

        def make(case):
            model, loss = self.factory()(case)
            return model, (lambda m: loss(m) * temperature), \
                torch.optim.AdamW(list(model.parameters()) + [temperature], lr=0.1)

        from benchdb_peer import train
        real = train.run_iterations
        with mock.patch.object(train, "run_iterations", lambda case, out, step, memory: (
                seen.append(float(temperature.detach())), real(case, out, step, memory))):
            status, lines = self.run_factory(make)
        self.assertEqual(status, "ok", lines[-1])
        self.assertEqual(seen, [2.0])   # the check's step undone before the timed ones

    def test_another_optimizer_over_every_parameter_passes_without_a_reference(self):
        status, lines = self.run_factory(
            self.factory_with(lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)))
        self.assertEqual(status, "ok", lines[-1])
        self.assertEqual([l.split()[1] for l in lines_of(lines, "check")], ["loss", "grad_norm", "grad"])
        self.assertEqual(len(lines_of(lines, "sample")), 9)

    def test_bfloat16_is_autocast_within_its_tolerance(self):
        status, lines = self.run_factory(self.factory(), BENCHDB_DTYPE="bfloat16", BENCHDB_CHECK_ATOL="4e-2")
        self.assertEqual(status, "ok", lines[-1])
        # autocast's rounding at a model's full size comes near the per-tensor bound: the norm only;
        # the optimizer's step (float32 master weights) is checked as in float32
        self.assertEqual([l.split()[1] for l in lines_of(lines, "check")], ["loss", "grad_norm", "opt_step"])

    def test_a_loss_that_ignores_the_model_it_is_given_is_an_error(self):
        # the closure's own model instead of m: the float64 "reference" was that model, so the
        # loss check passed at 0 and a forward case was stored validated (a train_step failed
        # with grad_norm "vs reference 0"); compile never reached it either
        def make(case):
            model = TinyLM(case.vocab_size, case.d_model, wrong_backward=True)
            x = case.randint(case.vocab_size, (case.batch_size, case.context_length))
            return model, lambda m: torch.nn.functional.cross_entropy(model(x).flatten(0, 1), x.flatten())
        for pass_, phases in (("forward", "fwd"), ("train_step", "fwd bwd opt")):
            status, lines = self.run_factory(make, BENCHDB_PASS=pass_, BENCHDB_PHASES=phases)
            self.assertEqual(status, "error", (pass_, lines[-1]))
            self.assertIn("the loss function did not compute with the model it was given", lines[-1])
            self.assertEqual(lines_of(lines, "check") + lines_of(lines, "sample"), [], pass_)

        def make_direct(case):   # a parameter used directly, no module called: that is using m
            model, _ = self.factory()(case)
            for p in model.parameters():
                p.requires_grad_(p is model.lin.weight)
            return model, lambda m: (m.lin.weight.tanh() ** 2).mean()
        status, lines = self.run_factory(make_direct)
        self.assertEqual(status, "ok", lines[-1])

        def make_scripted(case):   # TorchScript runs its ops unseen: no verdict, checked as before
            model = torch.nn.Sequential(torch.nn.Embedding(case.vocab_size, case.d_model),
                                        torch.nn.Linear(case.d_model, case.vocab_size))
            x = case.randint(case.vocab_size, (case.batch_size, case.context_length))
            return torch.jit.script(model), lambda m: torch.nn.functional.cross_entropy(
                m(x).flatten(0, 1), x.flatten())
        status, lines = self.run_factory(make_scripted, BENCHDB_PASS="forward", BENCHDB_PHASES="fwd")
        self.assertEqual(status, "ok", lines[-1])

    def test_a_memory_limit_below_the_weights_is_oom(self):
        status, lines = self.run_factory(self.factory(), BENCHDB_MEM_LIMIT=1000)
        self.assertEqual(status, "oom")
        self.assertIn("memory limit of 1000 bytes", lines[-1])


class CompiledWrong(torch.nn.Module if torch else object):
    """TinyLM's shape, right in eager mode and wrong under torch.compile: its forward scaled
    (forward=True), or its forward right and its backward scaled (a graph whose gradient is not
    the eager one's)."""

    def __init__(self, vocab, d, forward):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.head = torch.nn.Linear(d, vocab)
        self.forward_wrong = forward

    def forward(self, x):
        h = self.embed(x)
        if torch.compiler.is_compiling():
            h = h * 1.5 if self.forward_wrong else h + (h * 0.5 - (h * 0.5).detach())
        return self.head(torch.tanh(h))


@unittest.skipIf(torch is None or not hasattr(torch, "compiler"),
                 "this interpreter has no torch >= 2.1 (set BENCHDB_PYTHON to one that has)")
class CompiledTest(unittest.TestCase):
    """compile: true validates the compiled model, the one that is timed, and compiles it before
    the first timed iteration. torch.compile is run with dynamo's `eager` backend here (the
    graph dynamo captures, run by PyTorch's own kernels): what the kit does with the compiled
    module is the same, and no C++ is built on CI's two cores."""

    def setUp(self):
        self.compiled = []   # one entry per graph the backend was handed
        real = self.real_compile = torch.compile

        def backend(gm, example_inputs):   # records whether the graph is for symbolic shapes
            self.compiled.append(any(isinstance(x, torch.SymInt) or (
                isinstance(x, torch.Tensor) and any(isinstance(n, torch.SymInt) for n in x.shape))
                for x in example_inputs))
            return gm.forward
        self.patch = mock.patch.object(torch, "compile", lambda model, **kw: real(model, backend=backend, **kw))
        self.patch.start()
        torch._dynamo.reset()

    def tearDown(self):
        self.patch.stop()
        torch._dynamo.reset()

    def run_model(self, model_of, check=True, **env):
        from benchdb_peer import train

        def make(case):
            model = model_of(case)
            x = case.randint(case.vocab_size, (case.batch_size, case.context_length))
            y = case.randint(case.vocab_size, (case.batch_size, case.context_length), offset=1)
            return model, lambda m: torch.nn.functional.cross_entropy(m(x).flatten(0, 1), y.flatten())
        at_timing = []
        real = train.run_iterations
        with mock.patch.object(train, "run_iterations", lambda case, out, step, memory: (
                at_timing.append(len(self.compiled)), real(case, out, step, memory))):
            status, lines = run_case(lambda case, out: train.run_case(make, case, out, check,
                                                                      compile_model=True),
                                     e2e_env(**env))
        return status, lines, at_timing

    def test_a_model_wrong_only_when_compiled_is_caught_before_any_sample(self):
        # eager, the kit's check passed and the compiled module was timed as ok
        for forward, pass_, phases, stage in ((True, "forward", "fwd", "loss"),
                                              (True, "train_step", "fwd bwd opt", "loss"),
                                              (False, "forward_backward", "fwd bwd", "grad_norm")):
            status, lines, _ = self.run_model(
                lambda case: CompiledWrong(case.vocab_size, case.d_model, forward),
                BENCHDB_PASS=pass_, BENCHDB_PHASES=phases)
            self.assertEqual(status, "error", (pass_, lines[-1]))
            self.assertIn("peer check failed: %s differs" % stage, lines[-1], pass_)
            self.assertEqual(lines_of(lines, "sample"), [], pass_)
            self.assertTrue(self.compiled, "the check ran the compiled model")

    def test_the_compiled_model_is_checked_and_compiled_before_the_timed_iterations(self):
        # warmup 0: a compile in the first iteration would be a measured sample
        for check in (True, False):
            self.compiled.clear()
            torch._dynamo.reset()
            status, lines, at_timing = self.run_model(lambda case: TinyLM(case.vocab_size, case.d_model),
                                                      check=check, BENCHDB_WARMUP=0)
            self.assertEqual(status, "ok", lines[-1])
            self.assertEqual(len(lines_of(lines, "sample")), 2 * 3)
            self.assertGreater(at_timing[0], 0, "compiled before timing (check=%s)" % check)
            self.assertEqual(len(self.compiled), at_timing[0], "no compile while timed (check=%s)" % check)
            stages = [l.split()[1] for l in lines_of(lines, "check")]
            self.assertEqual(stages, ["loss", "grad_norm", "grad", "opt_step"] if check else [])

    def run_attention(self, fn, check=True, **env):
        from benchdb_peer import attention
        params = {"causal": True, "compile": True}
        at_timing = []
        real = attention.run_iterations
        with mock.patch.object(attention, "run_iterations", lambda case, out, step, memory: (
                at_timing.append(len(self.compiled)), real(case, out, step, memory))):
            status, lines = run_case(lambda case, out: attention.run_case(fn, case, out, check),
                                     attention_env(BENCHDB_PARAMS=json.dumps(params), **env))
        return status, lines, at_timing

    def test_an_attention_peer_s_compile_parameter_compiles_what_is_checked_and_timed(self):
        # the parameter was ignored: eager timings stored under compile=true (reports: compile yes)
        for check in (True, False):
            self.compiled.clear()
            torch._dynamo.reset()
            status, lines, at_timing = self.run_attention(sdpa, check, BENCHDB_WARMUP=0)
            self.assertEqual(status, "ok", lines[-1])
            info = json.loads(lines_of(lines, "info")[0][len("info "):])
            self.assertIs(info["compile"], True)
            self.assertGreater(at_timing[0], 0, "compiled before timing (check=%s)" % check)
            self.assertEqual(len(self.compiled), at_timing[0], "no compile while timed (check=%s)" % check)
            self.assertEqual(len(lines_of(lines, "sample")), 2 * 2)

        def wrong_when_compiled(q, k, v, c):
            o = sdpa(q, k, v, c)
            return o * 1.5 if torch.compiler.is_compiling() else o
        status, lines, _ = self.run_attention(wrong_when_compiled)
        self.assertEqual(status, "error", lines[-1])
        self.assertIn("peer check failed: output differs", lines[-1])
        self.assertEqual(lines_of(lines, "sample"), [])

    def test_each_case_compiles_its_own_static_graph(self):
        # one process, cases in turn (a persistent peer): the second shape got a symbolic-shape
        # graph, compiled for it or kept from the earlier case, that every later case reused (its
        # times depended on the order of the cases); a sampled attention case timed the graph
        # that its check at the reduced seq_len had compiled
        for ctx in (8, 9, 10):
            self.compiled.clear()
            status, lines, at_timing = self.run_model(lambda case: TinyLM(case.vocab_size, case.d_model),
                                                      BENCHDB_CONTEXT_LENGTH=ctx, BENCHDB_PASS="forward",
                                                      BENCHDB_PHASES="fwd")
            self.assertEqual(status, "ok", lines[-1])
            self.assertEqual(self.compiled, [False], ctx)   # one static graph, compiled in this case
            self.assertEqual(at_timing, [1], ctx)
        for seq_len in (2048, 2049):   # sampled: the reduced backward's seq_len is another shape
            self.compiled.clear()
            status, lines, at_timing = self.run_attention(sdpa, BENCHDB_SEQ_LEN=seq_len, BENCHDB_HEAD_DIM=64,
                                                          BENCHDB_BATCH_SIZE=1, BENCHDB_HEADS=1,
                                                          BENCHDB_WARMUP=0, BENCHDB_ITERS=1)
            self.assertEqual(status, "ok", lines[-1])
            self.assertEqual(self.compiled, [False, False], seq_len)   # the case's shape, the reduced one
            self.assertEqual(at_timing, [2], seq_len)

    def test_compile_is_what_the_reports_read_in_the_parameter(self):
        # a `values: [false, true]` parameter reaches the peer as the text "false": the kit read
        # any non-empty text as true and compiled the case that every report shows as not compiled
        from benchdb_peer import attention, train

        def make(case):
            model = TinyLM(case.vocab_size, case.d_model)
            x = case.randint(case.vocab_size, (case.batch_size, case.context_length))
            return model, lambda m: torch.nn.functional.cross_entropy(m(x).flatten(0, 1), x.flatten())
        runs = {"e2e": (lambda case, out: train.run_case(make, case, out), e2e_env),
                "attention": (lambda case, out: attention.run_case(sdpa, case, out), attention_env)}
        for suite, (run, env_of) in runs.items():
            for value, compiled in ((False, False), ("false", False), (True, True), ("true", True)):
                self.compiled.clear()
                status, lines = run_case(run, env_of(BENCHDB_PARAMS=json.dumps({"causal": True, "compile": value})))
                self.assertEqual(status, "ok", (suite, value, lines[-1]))
                self.assertEqual(bool(self.compiled), compiled, (suite, value))
                info = json.loads(lines_of(lines, "info")[0][len("info "):])
                self.assertEqual(bool(info.get("compile")), compiled, (suite, value))
            for value in ("yes", 1):   # what no report reads as compiled: refused, with the reason
                status, lines = run_case(run, env_of(BENCHDB_PARAMS=json.dumps({"causal": True, "compile": value})))
                self.assertEqual(status, "unsupported", (suite, value, lines[-1]))
                self.assertIn("compile must be true or false, got %r" % value, lines[-1])

    def test_a_compile_failure_in_the_check_is_unsupported(self):
        def failing(gm, example_inputs):
            raise RuntimeError("no compiler for this")
        with mock.patch.object(torch, "compile", lambda model, **kw: self.real_compile(model, backend=failing, **kw)):
            for run in (lambda: self.run_model(lambda case: TinyLM(case.vocab_size, case.d_model)),
                        lambda: self.run_attention(sdpa)):
                status, lines, _ = run()
                self.assertEqual(status, "unsupported", lines[-1])
                self.assertIn("torch.compile (inductor) failed", lines[-1])
                self.assertEqual(lines_of(lines, "sample"), [])


X86_64 = platform.machine().lower() in ("x86_64", "amd64")


@unittest.skipIf(torch is None, "this interpreter has no torch (set BENCHDB_PYTHON to one that has)")
class CompileIsaTest(unittest.TestCase):
    """torch.compile's C++ follows ATEN_CPU_CAPABILITY: built for the capped ISA, and so cached apart
    from the uncapped code (inductor's cache mixed them: NaN losses, a crash; docs/peers.md)."""

    def setUp(self):
        from torch._inductor import config
        self.config, self.saved = config, config.cpp.march
        config.cpp.march = None

    def tearDown(self):
        self.config.cpp.march = self.saved

    @unittest.skipUnless(X86_64, "the ISA levels are x86-64's")
    def test_a_capped_aten_caps_the_compiled_code(self):
        from benchdb_peer import torchinfo
        got = torchinfo.compile_isa(torch, {"ATEN_CPU_CAPABILITY": "AVX2"})
        self.assertEqual(self.config.cpp.march, "x86-64-v3")
        self.assertEqual(got["inductor_march"], "x86-64-v3")
        self.config.cpp.march = None
        torchinfo.compile_isa(torch, {"ATEN_CPU_CAPABILITY": "default"})
        self.assertEqual(self.config.cpp.march, "x86-64")

    def test_no_cap_an_avx512_cap_or_the_users_own_march_are_left_alone(self):
        from benchdb_peer import torchinfo
        for environ in ({}, {"ATEN_CPU_CAPABILITY": "avx512"},
                        {"ATEN_CPU_CAPABILITY": "avx2", "TORCHINDUCTOR_CPP_MARCH": "x86-64-v4"}):
            got = torchinfo.compile_isa(torch, environ)
            self.assertIsNone(self.config.cpp.march, environ)
            self.assertEqual(got["inductor_march"], "native")

    @unittest.skipUnless(X86_64, "the ISA levels are x86-64's")
    def test_a_compiled_case_under_the_cap_says_what_it_compiled_for(self):
        from benchdb_peer import train

        def make(case):
            model = TinyLM(case.vocab_size, case.d_model)
            x = case.randint(case.vocab_size, (case.batch_size, case.context_length))
            return model, lambda m: torch.nn.functional.cross_entropy(m(x).flatten(0, 1), x.flatten())
        with mock.patch.dict(os.environ, {"ATEN_CPU_CAPABILITY": "avx2"}):
            os.environ.pop("TORCHINDUCTOR_CPP_MARCH", None)
            status, lines = run_case(lambda case, out: train.run_case(make, case, out, compile_model=True),
                                     e2e_env(BENCHDB_PASS="forward_backward", BENCHDB_PHASES="fwd bwd"))
        self.assertEqual(status, "ok", lines[-1])
        info = json.loads(lines_of(lines, "info")[0][len("info "):])
        self.assertEqual((info["compile"], info["inductor_march"]), (True, "x86-64-v3"))


@unittest.skipIf(torch is None, "this interpreter has no torch (set BENCHDB_PYTHON to one that has)")
class PersistentTest(unittest.TestCase):
    def test_one_process_serves_cases_in_turn(self):
        cases = [attention_env(BENCHDB_SEQ_LEN=s) for s in (16, 33)]
        cases.append(attention_env(BENCHDB_PARAMS=json.dumps({"causal": True, "backend": "efficient"})))
        stdin = "".join("case %s\n" % json.dumps(c) for c in cases)
        env = dict(os.environ, PYTHONPATH=PEERS, BENCHDB_PEER_MODE="persistent",
                   BENCHDB_PEER_PROTOCOL="2", BENCHDB_PEER_PROTOCOL_MAX="2")
        for k in list(env):
            if k.startswith("BENCHDB_") and k not in ("BENCHDB_PEER_MODE", "BENCHDB_PEER_PROTOCOL", "BENCHDB_PEER_PROTOCOL_MAX"):
                del env[k]
        got = subprocess.run([sys.executable, "-m", "benchdb_peer.sdpa"], input=stdin, env=env,
                             capture_output=True, text=True, timeout=600)
        self.assertEqual(got.returncode, 0, got.stderr)
        lines = got.stdout.splitlines()
        self.assertEqual(lines[0], "benchdb-peer 2")
        self.assertEqual(lines.count("benchdb-peer 2"), 1)
        statuses = [l.split()[1] for l in lines_of(lines, "status")]
        self.assertEqual(statuses, ["ok", "ok", "unsupported"])

    def test_a_paced_case_runs_the_iterations_each_go_line_grants(self):
        case = attention_env(BENCHDB_SEQ_LEN="16", BENCHDB_PACED="true", BENCHDB_WARMUP="1",
                             BENCHDB_ITERS="3")
        stdin = "case %s\ngo 2\ngo 1\ngo 5\n" % json.dumps(case)
        env = dict(os.environ, PYTHONPATH=PEERS, BENCHDB_PEER_MODE="persistent",
                   BENCHDB_PEER_PROTOCOL="2", BENCHDB_PEER_PROTOCOL_MAX="2")
        got = subprocess.run([sys.executable, "-m", "benchdb_peer.sdpa"], input=stdin, env=env,
                             capture_output=True, text=True, timeout=600)
        self.assertEqual(got.returncode, 0, got.stderr)
        kinds = [l.split()[0] + ("" if l.split()[0] != "sample" else l.split()[1])
                 for l in got.stdout.splitlines() if l.split()[0] in ("ready", "sample", "status")]
        # the checks come before the first ready; 2 iterations, ready, 1, ready, the last; no ready after it
        self.assertEqual(kinds, ["ready", "sample0", "sample0", "sample1", "sample1", "ready",
                                 "sample2", "sample2", "ready", "sample3", "sample3", "status"])
        self.assertTrue(got.stdout.index("check ") < got.stdout.index("ready"))


if __name__ == "__main__":
    unittest.main()
