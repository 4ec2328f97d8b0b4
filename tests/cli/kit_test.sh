#!/usr/bin/env bash
# tests/cli/kit_test.sh: the peer kit (peers/benchdb_peer, docs/peers.md) through `runner run`:
# the docs' examples are the files that run; a user's attention function and a planted wrong one
# (stored as error, never timed) beside PyTorch SDPA and benchdb's flash; kernels wrong on one head,
# on one row, and a backward of the wrong sign, each where a looser check would not look; a user's
# nn.Module; the team's fine-tuning job in six configurations as axes; a student's model on the
# coursework grid with `report warmup`; the shipped CPU torch-SDPA sweep with every torch backend.
#   kit_test.sh RUNNER REPORT
# Exit 77 (skipped) when no python3 here has torch >= 2.3 (BENCHDB_PYTHON first, then python3).
set -u
RUNNER=$1
REPORT=$2
source "$(dirname "$0")/lib.sh"

py=
for cand in "${BENCHDB_PYTHON:-}" python3 /usr/bin/python3; do
	[ -n "$cand" ] && command -v "$cand" >/dev/null 2>&1 || continue
	if "$cand" -c 'import torch.nn.attention, sys; sys.exit(not hasattr(torch.nn.attention, "sdpa_kernel"))' >/dev/null 2>&1; then
		py=$(command -v "$cand"); break
	fi
done
[ -n "$py" ] || { echo "no python3 with torch >= 2.3 here (set BENCHDB_PYTHON): skipped"; exit 77; }
note "python with torch: $py"
export BENCHDB_PYTHON=$py
EX=$SRC/peers/examples

# ---- the docs show the files that run -----------------------------------------------------------
# Every block after a `<!-- file: PATH -->` line of docs/peers.md is that file, byte for byte.
"$py" - "$SRC" <<'PY' >"$T/docs" 2>&1
import re, sys
src = sys.argv[1]
doc = open(src + "/docs/peers.md").read()
blocks = re.findall(r"<!-- file: (\S+) -->\n```[a-z]*\n(.*?)```", doc, re.S)
print("blocks", len(blocks))
for path, body in blocks:
    print(path, "same" if open(src + "/" + path).read() == body else "DIFFERS")
PY
contains "$T/docs" "^blocks [3-9]" "docs/peers.md shows the example files"
lacks "$T/docs" "DIFFERS|Error" "every example in docs/peers.md is the file that runs"

# ---- a user's attention function, a planted wrong one, torch SDPA and benchdb's flash -------------
cat >"$T/attn.yaml" <<EOF
peers:
  mine: {command: 'PYTHONPATH=$SRC/peers "$py" $EX/my_attention.py', suite: attention, persistent: true, check: required}
  wrong: {command: 'PYTHONPATH=$SRC/peers "$py" $EX/wrong_attention.py', suite: attention, persistent: true}
  torch_sdpa: {command: '"$py" $SRC/peers/torch_sdpa.py', suite: attention, persistent: true,
               params: {backend: {values: [auto, flash, efficient, cudnn, math]}}}
defaults: {warmup: 1, iters: 3}
benchmarks:
  - suite: attention
    impl: [mine, wrong, flash]
    batch_size: 1
    heads: 2
    seq_len: [64, 96]
    head_dim: 16
    causal: [false, true]
  - suite: attention
    impl: torch_sdpa
    backend: [auto, math, efficient]
    batch_size: 1
    heads: 2
    seq_len: 64
    head_dim: 16
    causal: true
EOF
db=$T/attn.db
expect_status 1 "the planted wrong kernel fails the run" "$RUNNER" run "$T/attn.yaml" --db "$db"
check "the user's kernel: 4 ok, each validated within its tolerance" [ "$(sql "$db" "select count(*) from cases where impl = 'mine' and status = 'ok' and max_diff is not null and max_diff <= tolerance")" = 4 ]
check "the planted wrong kernel: 4 errors by its check" [ "$(sql "$db" "select count(*) from cases where impl = 'wrong' and status = 'error' and reason like 'peer check failed: output differs from the reference by %'")" = 4 ]
check "the planted wrong kernel is never timed" [ "$(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where c.impl = 'wrong'")" = 0 ]
check "the user's kernel runs benchdb's workload: flash's FLOPs" [ "$(sql "$db" "select count(*) from cases a join cases b on b.impl = 'flash' and a.seq_len = b.seq_len and a.causal = b.causal where a.impl = 'mine' and a.flops_fwd = b.flops_fwd and a.flops_fwd > 0")" = 4 ]
check "torch SDPA: auto and math ok, efficient unsupported on the cpu with torch's reason" [ "$(sql "$db" "select group_concat(status || ':' || (reason like '%efficient SDPA backend does not run this case%'), ',') from (select status, coalesce(reason, '') reason from cases where impl = 'torch_sdpa' order by ord)")" = "ok:0,ok:0,unsupported:1" ]
check "one process served each persistent peer's cases" [ "$(sql "$db" "select count(distinct json_extract(impl_info, '$.pid')) from cases where impl = 'mine' and status = 'ok'")" = 1 ]
expect_status 0 "compare against flash" "$REPORT" --db "$db" --compare flash --format csv
contains "$T/out" "torch_sdpa backend=math" "the compare pairs each torch backend with flash"
contains "$T/out" "mine" "the compare pairs the user's kernel with flash"

# ---- wrong only where a looser check would not look: stored error, never timed --------------------
# a function wrong on one (batch, head) of 16 at a sampled shape (benchdb's CPU check compares every
# head's rows), one wrong on query row 5 of a causal case benchdb checks whole, a training step
# whose backward has the right gradient norm and the wrong sign, and a model wrong only when
# torch.compile'd (the compiled module is what is timed, so it is what is checked)
cat >"$T/planted.py" <<'PY'
import sys
import torch
from benchdb_peer import attention_peer, train_peer


def sdpa(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def one_head(q, k, v, causal):
    o = sdpa(q, k, v, causal).clone()
    o[0, 1] *= 1.5
    return o


def row_5(q, k, v, causal):
    o = sdpa(q, k, v, causal).clone()
    o[..., 5, :] *= 1.5
    return o


class Flip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return -grad


class LM(torch.nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.embed, self.lin = torch.nn.Embedding(vocab, d), torch.nn.Linear(d, d)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, x):
        h = self.lin(self.embed(x))
        return self.head(torch.tanh(Flip.apply(h) if h.dtype != torch.float64 else h))


def make(case):
    x = case.randint(case.vocab_size, (case.batch_size, case.context_length))
    y = case.randint(case.vocab_size, (case.batch_size, case.context_length), offset=1)
    return (LM(case.vocab_size, case.d_model),
            lambda m: torch.nn.functional.cross_entropy(m(x).flatten(0, 1), y.flatten()))


class CompiledWrong(torch.nn.Module):
    """Right in eager mode, its forward scaled by 1.5 under torch.compile."""

    def __init__(self, vocab, d):
        super().__init__()
        self.embed, self.head = torch.nn.Embedding(vocab, d), torch.nn.Linear(d, vocab)

    def forward(self, x):
        h = self.embed(x)
        return self.head(torch.tanh(h * 1.5 if torch.compiler.is_compiling() else h))


def make_compiled_wrong(case):
    x = case.randint(case.vocab_size, (case.batch_size, case.context_length))
    return (CompiledWrong(case.vocab_size, case.d_model),
            lambda m: torch.nn.functional.cross_entropy(m(x).flatten(0, 1), x.flatten()))


if sys.argv[1] == "flip":
    train_peer(make)
if sys.argv[1] == "compiled_wrong":
    # dynamo's `eager` backend: the captured graph run by PyTorch's kernels, no C++ built on CI
    import functools
    torch.compile = functools.partial(torch.compile, backend="eager")
    train_peer(make_compiled_wrong)
attention_peer({"one_head": one_head, "row_5": row_5}[sys.argv[1]])
PY
cat >"$T/planted.yaml" <<EOF
models:
  tiny: {d_model: 64, d_ff: 256, num_layers: 2, num_heads: 4, vocab_size: 1000}
peers:
  one_head: {command: 'PYTHONPATH=$SRC/peers "$py" $T/planted.py one_head', suite: attention, persistent: true}
  row_5: {command: 'PYTHONPATH=$SRC/peers "$py" $T/planted.py row_5', suite: attention, persistent: true}
  flip: {command: 'PYTHONPATH=$SRC/peers "$py" $T/planted.py flip', suite: e2e, persistent: true}
  compiled_wrong: {command: 'PYTHONPATH=$SRC/peers "$py" $T/planted.py compiled_wrong', suite: e2e,
                   persistent: true, params: {compile: {type: bool, default: false}}}
defaults: {warmup: 1, iters: 2}
benchmarks:
  - {suite: attention, impl: one_head, batch_size: 2, heads: 8, seq_len: 512, head_dim: 64, pass: forward}
  - {suite: attention, impl: row_5, batch_size: 1, heads: 8, seq_len: 512, head_dim: 64, causal: true, pass: forward}
  - {suite: e2e, impl: flip, model: tiny, context_length: 32, batch_size: 4, pass: train_step}
  - {suite: e2e, impl: compiled_wrong, model: tiny, context_length: 32, batch_size: 4, pass: train_step,
     compile: [false, true]}
EOF
db=$T/planted.db
expect_status 1 "planted wrong kernels and a wrong-signed backward fail the run" "$RUNNER" run "$T/planted.yaml" --db "$db"
check "wrong on one head of 16: error at that head" [ "$(sql "$db" "select count(*) from cases where impl = 'one_head' and status = 'error' and reason like 'peer check failed: output differs % at O[b=0, h=1, %'")" = 1 ]
check "wrong on row 5 of a causal case checked whole: error at that row" [ "$(sql "$db" "select count(*) from cases where impl = 'row_5' and status = 'error' and reason like 'peer check failed: output differs % at O[b=0, h=_, s=5, %'")" = 1 ]
check "a backward of the right norm and the wrong sign: error naming the gradient" [ "$(sql "$db" "select count(*) from cases where impl = 'flip' and status = 'error' and reason like 'peer check failed: grad differs % at gradient of %'")" = 1 ]
check "a model wrong only under torch.compile: its compiled case an error by the loss check" [ "$(sql "$db" "select group_concat(json_extract(params, '$.compile') || ':' || status || ':' || (coalesce(reason, '') like 'peer check failed: loss differs %'), ',') from (select * from cases where impl = 'compiled_wrong' order by ord)")" = "0:ok:0,1:error:1" ]
check "none of them is timed (but that model's eager case)" [ "$(sql "$db" "select count(*) from samples s join cases c on c.id = s.case_id where not (c.impl = 'compiled_wrong' and json_extract(c.params, '$.compile') = 0)")" = 0 ]

# ---- a user's nn.Module (the shipped example sweep) -----------------------------------------------
db=$T/model.db
expect_status 0 "my_model.yaml" "$RUNNER" run "$EX/my_model.yaml" --db "$db"
check "every pass, float32 and bfloat16: 6 ok, loss-validated" [ "$(sql "$db" "select count(*) from cases where status = 'ok' and max_diff is not null")" = 6 ]
check "a user's model states no FLOPs: none shown" [ "$(sql "$db" "select count(*) from cases where flops_fwd is not null")" = 0 ]
check "its parameters' bytes from the kit" [ "$(sql "$db" "select count(*) from cases where param_bytes > 0")" = 6 ]

# ---- the team's fine-tuning job: six configurations as axes ----------------------------------------
db=$T/ft.db
expect_status 0 "finetune.yaml" "$RUNNER" run "$EX/finetune.yaml" --db "$db"
check "six configurations, six case keys, all ok" [ "$(sql "$db" "select count(distinct case_key) || ':' || sum(status = 'ok') from cases")" = "6:6" ]
check "optimizer and lora_rank are in the key and the params JSON" [ "$(sql "$db" "select count(*) from cases where case_key like '%lora_rank=16%' and case_key like '%optimizer=sgd%' and json_extract(params, '$.lora_rank') = 16")" = 1 ]
expect_status 0 "--where optimizer=sgd" "$REPORT" --db "$db" --where optimizer=sgd --derived --format csv
check "--where on a peer parameter: the three sgd rows" [ "$(grep -c 'optimizer=sgd' "$T/out")" = 3 ]
contains "$T/out" "tokens_s" "tokens/s for the job's cases"
expect_status 0 "compare --baseline optimizer=adamw" "$REPORT" --db "$db" compare --baseline optimizer=adamw --format csv
check "sgd paired with adamw at each rank" [ "$(grep -c 'optimizer=sgd' "$T/out")" -ge 3 ]

# ---- a student's own model on the coursework grid, with report warmup ------------------------------
db=$T/student.db
expect_status 0 "student.yaml" "$RUNNER" run "$EX/student.yaml" --db "$db"
check "the student's model: every pass at both contexts ok and validated" [ "$(sql "$db" "select count(*) from cases where impl = 'student' and status = 'ok' and max_diff is not null")" = 6 ]
check "benchdb's transformer beside it" [ "$(sql "$db" "select count(*) from cases where impl = 'benchdb' and status in ('ok', 'unsupported')")" = 6 ]
expect_status 0 "report warmup on the student's model" "$REPORT" --db "$db" warmup --format csv
contains "$T/out" "student" "warm-up rows for the student's model"

# ---- the shipped CPU torch-SDPA sweep: every torch backend beside benchdb's kernels ------------------
db=$T/sdpa.db
expect_status 0 "configs/torch_sdpa_cpu.yaml" "$RUNNER" run "$SRC/configs/torch_sdpa_cpu.yaml" --db "$db"
check "torch's flash, math and auto run on the cpu, validated" [ "$(sql "$db" "select count(*) from cases where impl = 'torch_sdpa' and status = 'ok' and max_diff is not null and json_extract(params, '$.backend') in ('auto', 'flash', 'math')")" = 24 ]
check "efficient and cudnn: unsupported on the cpu, with the reason" [ "$(sql "$db" "select count(*) from cases where impl = 'torch_sdpa' and status = 'unsupported' and reason like '%SDPA backend does not run this case%'")" = 16 ]
check "benchdb's naive and flash beside them" [ "$(sql "$db" "select count(*) from cases where impl in ('naive', 'flash') and status = 'ok'")" = 16 ]
expect_status 0 "compare against naive, per backend" "$REPORT" --db "$db" --compare naive --format csv
for b in auto flash math; do
	contains "$T/out" "torch_sdpa backend=$b" "the compare has torch's $b backend"
done

finish kit
