#!/usr/bin/env bash
# tests/cli/tables_test.sh: tables to paste (issue 30) — the coursework layout byte-compared with
# goldens (float32, bfloat16, warm-up 0 and 1 from the stored iterations, LaTeX), --columns
# choosing/ordering/renaming, --time-unit, --fold, --prefer, the compile column from an impl's
# name and from a peer's parameter, --where alternatives, compare's candidates narrowed without
# losing the baseline, the parameter and memory columns of the compare and stats exports, and
# the iteration count's column apart from matmul's n.
#   tables_test.sh RUNNER REPORT MAKE_FIXTURE
set -u
RUNNER=$1
REPORT=$2
MAKE_FIXTURE=$3
source "$(dirname "$0")/lib.sh"
# close A B TOL: |A - B| <= TOL x max(1, |B|)
close() { awk -v a="$1" -v b="$2" -v tol="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; if (m < 1) m = 1; exit !(a != "" && b != "" && d <= tol * m) }'; }

e2e=$T/e2e.db
fx=$T/fixture.db
"$MAKE_FIXTURE" "$e2e" --e2e || { fail "make_fixture --e2e"; finish tables; exit 1; }
"$MAKE_FIXTURE" "$fx" || { fail "make_fixture"; finish tables; exit 1; }

# ---- the coursework layout: one command per table ------------------------------------------------
expect_status 0 "coursework float32" "$REPORT" --db "$e2e" --layout coursework --where dtype=float32
golden coursework_float32.md "$T/out"
expect_status 0 "coursework bfloat16" "$REPORT" --db "$e2e" --layout coursework --where dtype=bfloat16
golden coursework_bfloat16.md "$T/out"
expect_status 0 "coursework without warm-up" "$REPORT" --db "$e2e" --layout coursework \
	--where dtype=float32 --warmup 0
golden coursework_float32_warmup0.md "$T/out"
expect_status 0 "coursework, one warm-up step" "$REPORT" --db "$e2e" --layout coursework \
	--where dtype=float32 --warmup 1
golden coursework_float32_warmup1.md "$T/out"
expect_status 0 "coursework as LaTeX" "$REPORT" --db "$e2e" --layout coursework --where dtype=bfloat16 \
	--format tex
golden coursework_bfloat16.tex "$T/out"
expect_status 0 "coursework, both dtypes" "$REPORT" --db "$e2e" --layout coursework
check "a table per dtype" [ "$(grep -c '^### e2e timing: dtype ' "$T/out")" = 2 ]
contains "$T/out" "^\| model +\| context_length +\| impl +\| fwd avg \(sec\) +\| fwd std \(sec\) +\| back avg \(sec\) +\| back std \(sec\) +\| fwd & back avg \(sec\) +\| fwd & back std \(sec\) +\| status +\| dtype +\| device +\| batch_size +\| compile +\|$" \
	"the coursework's columns, impl where the impls differ"

# report writeup gives the same tables (as measured, then without and with one warm-up step)
expect_status 0 "writeup of the e2e run" "$REPORT" --db "$e2e" writeup -o "$T/wu"
contains "$T/wu/README.md" "^### The coursework's tables$" "writeup: the coursework section"
for f in coursework_float32.md coursework_float32_warmup0.md coursework_float32_warmup1.md; do
	sed -n '/^### e2e timing/,$p' "$GOLDEN/$f" >"$T/want.md"
	check "writeup holds the table of $f" \
		awk 'NR == FNR { want = want $0 "\n"; next } { have = have $0 "\n" } END { exit index(have, want) == 0 }' \
		"$T/want.md" "$T/wu/README.md"
done

# one row per model and context: the forward+backward case, or what there is
expect_status 0 "coursework csv" "$REPORT" --db "$e2e" --layout coursework --where dtype=bfloat16 --format csv
check "bfloat16: 3 models x 2 contexts, one row each" [ "$(($(wc -l <"$T/out") - 1))" = 6 ]
check "no impl column where every row is benchdb's" [ "$(head -1 "$T/out" | grep -c ',impl,')" = 0 ]
fwd_bwd=$(sql "$e2e" "select avg(s.ns) / 1e9 from samples s join cases c on c.id = s.case_id
	where c.model = 'small' and c.seq_len = 128 and c.dtype = 'bfloat16' and c.pass = 'forward_backward'
	and s.phase = 'fwd' and s.iter >= c.warmup")
check "small/128's fwd avg is its forward_backward case's mean, in seconds" \
	close "$(awk -F, '$1 == "small" && $2 == 128 { print $3 }' "$T/out")" "$fwd_bwd" 1e-9
check "large/256 ran out of memory" [ "$(awk -F, '$1 == "large" && $2 == 256 { print $9 }' "$T/out")" = oom ]
# warm-up 0: the first iters iterations, warm-up included
first10=$(sql "$e2e" "select avg(s.ns) / 1e9 from samples s join cases c on c.id = s.case_id
	where c.model = 'small' and c.seq_len = 128 and c.dtype = 'bfloat16' and c.pass = 'forward_backward'
	and s.phase = 'fwd' and s.iter < 10")
expect_status 0 "coursework csv, warm-up 0" "$REPORT" --db "$e2e" --layout coursework --where dtype=bfloat16 \
	--format csv --warmup 0
check "--warmup 0 averages iterations 0-9 of the stored 15" \
	close "$(awk -F, '$1 == "small" && $2 == 128 { print $3 }' "$T/out")" "$first10" 1e-9

# compile: from the impl's name (pytorch_compile) and from a peer's `compile` parameter
expect_status 0 "compile column" "$REPORT" --db "$e2e" --where model=small --where context_length=128 \
	--where pass=forward_backward --where dtype=float32 --columns impl,compile --format csv
check "compile: benchdb no, pytorch_compile yes, pytorch by its parameter" \
	[ "$(tail -n +2 "$T/out" | tr '\n' ' ')" = "benchdb,no pytorch_compile,yes pytorch,no pytorch,yes " ]
# ... and what the peer's info says ran comes first: benchdb's case as a peer started with
# --compile under a plain name (its info compile true), pytorch_compile's info saying false
cp "$e2e" "$T/e2e_info.db"
sql "$T/e2e_info.db" "update cases set impl_info = '{\"torch\": \"2.9\", \"compile\": true}' where impl = 'benchdb'; update cases set impl_info = '{\"compile\": false}' where impl = 'pytorch_compile'"
expect_status 0 "compile column from the peer's info" "$REPORT" --db "$T/e2e_info.db" --where model=small --where context_length=128 \
	--where pass=forward_backward --where dtype=float32 --columns impl,compile --format csv
check "compile: the info's true and false before the name and the parameter" \
	[ "$(tail -n +2 "$T/out" | tr '\n' ' ')" = "benchdb,yes pytorch_compile,no pytorch,no pytorch,yes " ]
expect_status 2 "an unknown column" "$REPORT" --db "$e2e" --columns model,fwd_avg
contains "$T/err" "no column 'fwd_avg' \(its columns: .*fwd mean, fwd median, fwd std" "the table's columns are listed"
expect_status 2 "an unknown layout" "$REPORT" --db "$e2e" --layout cs999
contains "$T/err" "unknown layout 'cs999' \(valid: coursework\)" "the layouts are listed"
expect_status 2 "a bad time unit" "$REPORT" --db "$e2e" --time-unit fortnight
contains "$T/err" "unknown unit 'fortnight' \(valid: ns, us, ms, s or sec\)" "the units are listed"
expect_status 2 "a negative --warmup" "$REPORT" --db "$e2e" --warmup -2
expect_status 2 "warmup --k with a trailing comma (an unfinished list, not 0,1)" \
	"$REPORT" warmup --db "$e2e" --k 0,1,
contains "$T/err" "--k expects a list such as 0,1,2,5 .*, got '0,1,'" "the list is quoted"
# a count given twice made two columns of one name (CSV's header twice "k=1_mean_ms")
expect_status 2 "warmup --k with a count twice" "$REPORT" warmup --db "$e2e" --k 0,1,1 --format csv
contains "$T/err" "--k expects a list such as 0,1,2,5 \(at most 16 different counts from 0 to 1000000\), got '0,1,1'" "the rule and the list"
# --band nan or a negative one was read as 0, inf as every excess: refused as the other commands'
# bands are
for bad in nan -5 inf; do
	expect_status 2 "warmup --band $bad" "$REPORT" warmup --db "$e2e" --band "$bad"
	contains "$T/err" "--band expects a percentage, a finite number >= 0" "warmup --band $bad: says why"
done
expect_status 0 "warmup --k 0,1" "$REPORT" warmup --db "$e2e" --k 0,1
expect_status 2 "a column listed twice" "$REPORT" --db "$e2e" --columns "model,fwd mean,fwd_mean=x"
contains "$T/err" "'fwd_mean' is listed twice" "the repeated column is named"

# ---- --columns, --time-unit and --fold on the attention fixture -----------------------------------
expect_status 0 "columns renamed, in microseconds, folded" "$REPORT" --db "$fx" \
	--columns "seq_len,impl=kernel,fwd mean=forward,fwd median,dtype,device,head_dim" --time-unit us --fold
contains "$T/out" "^### attention \(dtype float32, device cpu, head_dim 64\)$" "constant columns folded into the title"
contains "$T/out" "^\| seq_len \| kernel \| forward \(us\) \| fwd median \(us\) \|$" "chosen, ordered and renamed"
ms=$(sql "$fx" "select avg(s.ns) / 1e3 from samples s join cases c on c.id = s.case_id
	where c.run_id = 2 and c.impl = 'sdpa' and c.seq_len = 512 and s.phase = 'fwd' and s.iter >= c.warmup")
contains "$T/out" "^\| 512 +\| sdpa +\| +$(printf %.0f "$ms") \|" "the mean in microseconds"
expect_status 0 "csv does not fold (it has no title)" "$REPORT" --db "$fx" --format csv \
	--columns "seq_len,impl,dtype" --fold
check "csv keeps the constant column" [ "$(head -1 "$T/out")" = "seq_len,impl,dtype" ]
# JSON has titles but promises numbers at full precision: a constant number column stays a column
# (folded, the title showed it rounded to its decimals: "peak mem 4.0 MiB"); text still folds.
expect_status 0 "json folds text, not numbers" "$REPORT" --db "$fx" --format json \
	--where impl=flash,sdpa --where seq_len=256 --columns "impl,dtype,peak mem" --fold
check "json: the constant number stays in the rows, exact" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))[0]
assert t["title"] == "attention (dtype float32)", t["title"]
assert [c["key"] for c in t["columns"]] == ["impl", "peak_mem_MiB"], t["columns"]
assert [r["peak_mem_MiB"] for r in t["rows"]] == [4, 4], t["rows"]' "$T/out"
expect_status 0 "markdown folds the constant number" "$REPORT" --db "$fx" \
	--where impl=flash,sdpa --where seq_len=256 --columns "impl,dtype,peak mem" --fold
contains "$T/out" "^### attention \(dtype float32, peak mem 4.0 MiB\)$" "markdown: both folded"

# ---- --where alternatives -------------------------------------------------------------------------
expect_status 0 "--where KEY=A,B" "$REPORT" --db "$fx" --where impl=flash,sdpa --format csv --columns impl,seq_len
check "A,B: 8 cases" [ "$(($(wc -l <"$T/out") - 1))" = 8 ]
lacks "$T/out" "^naive," "naive is left out"
cp "$T/out" "$T/ab.csv"
expect_status 0 "--where KEY=A --where KEY=B" "$REPORT" --db "$fx" --where impl=flash --where impl=sdpa \
	--format csv --columns impl,seq_len
check "one key twice is A or B" cmp -s "$T/out" "$T/ab.csv"
expect_status 0 "two keys" "$REPORT" --db "$fx" --where impl=flash,sdpa --where seq_len=512 --format csv \
	--columns impl,seq_len
check "two keys must both hold: 2 cases" [ "$(tail -n +2 "$T/out" | tr '\n' ' ')" = "flash,512 sdpa,512 " ]

# ---- compare: the filters choose candidates, the baseline stays ----------------------------------
expect_status 0 "compare --where impl=flash keeps the naive baseline" "$REPORT" --db "$fx" --compare naive \
	--where impl=flash --format csv
check "compare: 4 flash pairs" [ "$(awk -F, 'NR > 1 && $2 == "flash"' "$T/out" | wc -l)" = 4 ]
lacks "$T/out" "^sdpa " "no sdpa candidate"
contains "$T/out" "^case,impl,n,baseline_ms,.*,verdict,suite,device,dtype,pass,batch_size,heads,seq_len,head_dim,causal,baseline_peak_mem_MiB,candidate_peak_mem_MiB$" \
	"compare csv: parameter and memory columns"
contains "$T/out" ",forward_backward,8,1,2048,64,false,288,32$" "naive's and flash's peak memory at S2048"
expect_status 0 "compare markdown keeps its width" "$REPORT" --db "$fx" --compare naive --where impl=flash
lacks "$T/out" "baseline peak mem" "markdown compare has no export columns"

expect_status 0 "compare --baseline KEY=VALUE --where KEY=OTHER" "$REPORT" --db "$e2e" \
	--compare compile=false --where compile=true --format csv
check "a peer parameter's baseline stays too: one pair" \
	[ "$(csv_cols "$T/out" verdict | wc -l)" = 1 ]
contains "$T/out" "^pytorch float32 fwd\+bwd small ctx128 B4 compile=true,pytorch compile=true,10/10," \
	"compile=true against compile=false"

# ---- export stats: parameters and memory ------------------------------------------------------------
expect_status 0 "export stats" "$REPORT" --db "$e2e" export --what stats
contains "$T/out" ",impl_info,cpu_wait,rse,mark,suite,device,dtype,pass,model,d_model,d_ff,num_layers,num_heads,vocab_size,context_length,batch_size,attention,compile,peak_mem_bytes,params_mem_bytes,grads_mem_bytes,optim_mem_bytes,activations_mem_bytes$" \
	"stats: every key parameter, a peer's compile, the memory"

# ---- matmul: the iteration count is not a second 'n' -----------------------------------------------
cat >"$T/mm.yaml" <<'YAML'
name: mm
defaults: {device: cpu, warmup: 1, iters: 3}
benchmarks:
  - {suite: matmul, m: 64, n: 32, k: 16}
YAML
expect_status 0 "a matmul run" "$RUNNER" run "$T/mm.yaml" --db "$T/mm.db"
expect_status 0 "matmul table" "$REPORT" --db "$T/mm.db" --format csv
check "matmul: n is the size, iters the count" \
	[ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c["n"] "/" $c["iters"] }' "$T/out")" = "32/3" ]
# export --what stats: its iteration count n and the matmul parameter n were two columns named
# n, and a reader by name (Python's csv.DictReader) took the parameter for the count
expect_status 0 "matmul stats export" "$REPORT" export --db "$T/mm.db" --what stats
check "stats export: every header unique" [ -z "$(head -1 "$T/out" | tr ',' '\n' | sort | uniq -d)" ]
if command -v python3 >/dev/null; then
	check "stats export: n is the count, n_2 the parameter (as the JSON keys)" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["n"] == "3" and r["n_2"] == "32" for r in rows), rows' "$T/out"
fi
expect_status 0 "matmul derived table" "$REPORT" --db "$T/mm.db" --derived --format csv
check "matmul: no tokens/s or samples/s (no batch, no sequence), GFLOP/s from its FLOPs" \
	[ "$(csv_cols "$T/out" tokens_s samples_s | tr -d '\n')" = "," ]
check "matmul: fwd GFLOP/s = flops_fwd / mean ns" close "$(csv_cols "$T/out" fwd_GFLOP_s)" \
	"$(sql "$T/mm.db" "select c.flops_fwd / avg(s.ns) from cases c join samples s on s.case_id = c.id
		where s.iter >= c.warmup")" 1e-9

# ---- report warmup: no standard deviation from a single iteration -----------------------------------
cat >"$T/one.yaml" <<'YAML'
name: one-iteration
defaults: {warmup: 5, iters: 1}
benchmarks:
  - {suite: attention, impl: naive, seq_len: 17, head_dim: 16, batch_size: 1, heads: 2, causal: true}
YAML
expect_status 0 "a run of one measured iteration" "$RUNNER" run "$T/one.yaml" --db "$T/one.db"
expect_status 0 "warmup csv of one iteration per k" "$REPORT" --db "$T/one.db" warmup --format csv
check "k=1 mean: iteration 1 alone (fwd+bwd), in ms" close "$(csv_cols "$T/out" k=1_mean_ms)" \
	"$(sql "$T/one.db" "select sum(ns) / 1e6 from samples where iter = 1")" 1e-9
check "k=0..5: one iteration each, no std" [ "$(csv_cols "$T/out" k=0_std_ms k=1_std_ms k=2_std_ms k=5_std_ms)" = ",,," ]
expect_status 0 "derived table of one measured iteration" "$REPORT" --db "$T/one.db" --derived --format csv
check "derived: samples/s from the one iteration, no CV" [ "$(csv_cols "$T/out" iters CV_%)" = "1," ]
check "derived: samples/s = 1e9 / the iteration's fwd+bwd ns" close "$(csv_cols "$T/out" samples_s)" \
	"$(sql "$T/one.db" "select 1e9 / sum(ns) from samples where iter = 5")" 1e-9
expect_status 0 "export stats of one measured iteration" "$REPORT" --db "$T/one.db" export --what stats
check "export stats: n = 1, its mean, no std or cv" [ "$(csv_cols "$T/out" phase n mean_ns std_ns cv | sort | tr '\n' ' ')" = \
	"$(sql "$T/one.db" "select phase, 1, ns, '', '' from samples where iter = 5 union all
		select 'total', 1, sum(ns), '', '' from samples where iter = 5" | tr '|' , | sort | tr '\n' ' ')" ]
expect_status 0 "export stats json of one measured iteration" "$REPORT" --db "$T/one.db" export --what stats --format json
contains "$T/out" '"n": 1, "mean_ns": [0-9]+, "std_ns": null, ' "export stats json: std null from one sample"

# ---- compare within a run: a case key measured twice is one case, its first copy ------------------
cat >"$T/dup.yaml" <<'YAML'
name: twice
defaults: {warmup: 1, iters: 6}
benchmarks:
  - {suite: attention, impl: [naive, flash], seq_len: 17, head_dim: 16, batch_size: 1, heads: 2, causal: true}
  - {suite: attention, impl: flash, seq_len: 17, head_dim: 16, batch_size: 1, heads: 2, causal: true}
YAML
expect_status 0 "a run that measures flash twice" "$RUNNER" run "$T/dup.yaml" --db "$T/dup.db"
first_flash=$(sql "$T/dup.db" "select avg(t) / 1e6 from (select t, row_number() over (order by t) k from
	(select sum(s.ns) t from samples s join cases c on c.id = s.case_id where c.ord = 1
	 and s.iter >= c.warmup group by s.iter)) where k in (3, 4)")
for how in "--compare naive" "compare --baseline impl=naive"; do
	expect_status 0 "$how, flash twice" "$REPORT" --db "$T/dup.db" $how --format csv
	check "$how: one pair" [ "$(csv_cols "$T/out" verdict | wc -l)" = 1 ]
	check "$how: the first flash case's median" close "$(csv_cols "$T/out" candidate_ms)" "$first_flash" 1e-9
	check "$how: the summary counts one pair" [ "$(awk -F, '$1 == "flash" && NF > 10 { print $2 }' "$T/out")" = 1 ]
done
# the pivot honours --warmup K: the iters iterations after the first K stored
expect_status 0 "pivot by impl --warmup 0" "$REPORT" --db "$T/dup.db" --pivot impl --warmup 0 --format csv
check "pivot --warmup 0: naive's mean over stored iterations 0..5" close "$(csv_cols "$T/out" impl=naive_ms)" \
	"$(sql "$T/dup.db" "select avg(t) / 1e6 from (select sum(s.ns) t from samples s join cases c on
		c.id = s.case_id where c.ord = 0 and s.iter < 6 group by s.iter)")" 1e-9
# the pivot's cell is the first case's too, not the later copy's
expect_status 0 "pivot by impl, flash twice" "$REPORT" --db "$T/dup.db" --pivot impl --format csv
check "pivot: flash's cell is the first flash case's mean" close "$(csv_cols "$T/out" impl=flash_ms)" \
	"$(sql "$T/dup.db" "select avg(t) / 1e6 from (select sum(s.ns) t from samples s join cases c on
		c.id = s.case_id where c.ord = 1 and s.iter >= c.warmup group by s.iter)")" 1e-9

# ---- a pivot's rows say what tells them apart: causal here (they read the same without it) -------
cat >"$T/causal.yaml" <<'YAML'
name: causal-pivot
defaults: {warmup: 1, iters: 3}
benchmarks:
  - {suite: attention, impl: [naive, flash], seq_len: 17, head_dim: 16, batch_size: 1, heads: 2, causal: [false, true]}
YAML
expect_status 0 "run causal-pivot" "$RUNNER" run "$T/causal.yaml" --db "$T/causal.db"
expect_status 0 "pivot by impl over causal" "$REPORT" --db "$T/causal.db" --pivot impl --format csv
check "pivot: a causal column, a row each way" [ "$(csv_cols "$T/out" causal | sort | paste -sd, -)" = "no,yes" ]
check "pivot: no two rows alike" [ "$(sed 1d "$T/out" | cut -d, -f1-8 | sort | uniq -d | wc -l)" = 0 ]
expect_status 0 "pivot by causal: no causal column" "$REPORT" --db "$T/causal.db" --pivot causal --format csv
lacks "$T/out" "^.*,causal," "pivot by causal: its values are the columns"

# ---- the per-iteration total's column holds the sum it names ------------------------------------------
cat >"$T/mix.yaml" <<'YAML'
name: passes
defaults: {warmup: 1, iters: 4}
benchmarks:
  - {suite: attention, impl: naive, pass: [forward, forward_backward], seq_len: 17, head_dim: 16, batch_size: 1, heads: 2, causal: true}
YAML
expect_status 0 "a forward and a forward_backward case" "$RUNNER" run "$T/mix.yaml" --db "$T/mix.db"
expect_status 0 "table of both passes" "$REPORT" --db "$T/mix.db" --format csv
check "fwd+bwd mean: none for the forward case" [ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
	NR > 1 && $c["pass"] == "forward" { print "[" $c["fwd_bwd_mean_ms"] "]" }' "$T/out")" = "[]" ]
check "fwd+bwd mean: the forward_backward case's fwd + bwd" close "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
	NR > 1 && $c["pass"] == "forward_backward" { print $c["fwd_bwd_mean_ms"] }' "$T/out")" \
	"$(sql "$T/mix.db" "select sum(s.ns) / 4.0 / 1e6 from samples s join cases c on c.id = s.case_id
		where c.pass = 'forward_backward' and s.iter >= c.warmup")" 1e-9
# an iteration whose bwd was not stored: fwd+bwd sums each phase of the same iteration
cp "$T/mix.db" "$T/hole.db"
sql "$T/hole.db" "delete from samples where phase = 'bwd' and iter = 2 and case_id =
	(select id from cases where pass = 'forward_backward')"
expect_status 0 "fwd+bwd of a case missing one bwd sample" "$REPORT" --db "$T/hole.db" \
	--where pass=forward_backward --columns 'pass,fwd+bwd mean,fwd+bwd median' --format csv
check "fwd+bwd mean and median: over the 3 iterations with both phases" \
	[ "$(csv_cols "$T/out" fwd_bwd_mean_ms fwd_bwd_median_ms | awk -F, '{ printf "%.9g,%.9g", $1, $2 }')" = \
	"$(sql "$T/hole.db" "select avg(t) / 1e6, (select t from (select sum(s.ns) t, count(*) k from samples s
		join cases c on c.id = s.case_id where c.pass = 'forward_backward' and s.iter >= 1 group by s.iter)
		where k = 2 order by t limit 1 offset 1) / 1e6 from (select sum(s.ns) t, count(*) k from samples s
		join cases c on c.id = s.case_id where c.pass = 'forward_backward' and s.iter >= 1
		group by s.iter) where k = 2" | awk -F'|' '{ printf "%.9g,%.9g", $1, $2 }')" ]
expect_status 0 "e2e table: forward, forward_backward and train_step" "$REPORT" --db "$e2e" --format csv \
	--where model=small --where context_length=128 --where dtype=float32 --where impl=benchdb
check "fwd+bwd+opt mean: only the train_step case has one" [ "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
	NR > 1 && $c["fwd_bwd_opt_mean_ms"] != "" { print $c["pass"] }' "$T/out")" = train_step ]

# ---- writeup's mixed precision: a float32 case measured twice is one row, its first copy's ---------
cp "$e2e" "$T/e2e_twice.db"
sql "$T/e2e_twice.db" "create temp table copy as select * from cases where model = 'small' and seq_len = 128
	and dtype = 'float32' and pass = 'forward' and impl = 'benchdb';
	update copy set id = (select max(id) + 1 from cases), ord = (select max(ord) + 1 from cases);
	insert into cases select * from copy;
	insert into samples select (select id from copy), s.phase, s.iter, 2 * s.ns from samples s
		join cases c on c.id = s.case_id where c.model = 'small' and c.seq_len = 128 and
		c.dtype = 'float32' and c.pass = 'forward' and c.impl = 'benchdb' and c.id < (select id from copy)"
expect_status 0 "writeup of a run that measured a float32 case twice" "$REPORT" --db "$T/e2e_twice.db" writeup -o "$T/wu2"
check "mixed precision: one row for small forward ctx128" \
	[ "$(awk '/^### mixed precision/ { on = 1 } on && /^- n: / { on = 0 }
		on && /^\| small +\| forward +\| 128 / { n++ } END { print n + 0 }' "$T/wu2/README.md")" = 1 ]

# ---- --prefer: only cases that have a preferred alternative give way ---------------------------------
cat >"$T/prefer.yaml" <<'YAML'
name: prefer
defaults: {warmup: 1, iters: 3}
benchmarks:
  - {suite: matmul, m: 64, n: 32, k: 16}
  - {suite: attention, impl: naive, pass: [forward, forward_backward], seq_len: 17, head_dim: 16, batch_size: 1, heads: 2, causal: true}
  - {suite: attention, impl: naive, pass: forward, seq_len: 64, head_dim: 16, batch_size: 1, heads: 2, causal: true}
YAML
expect_status 0 "a run with and without a preferred alternative" "$RUNNER" run "$T/prefer.yaml" --db "$T/prefer.db"
expect_status 0 "--prefer pass=forward_backward" "$REPORT" --db "$T/prefer.db" --prefer pass=forward_backward --format csv
check "--prefer: S17's forward gives way, S64's forward (no alternative) and the matmul case stay" \
	[ "$(awk -F, 'NF == 0 { head = 1; next } NR == 1 || head { head = 0; delete c; for (i = 1; i <= NF; i++) c[$i] = i; next }
		"pass" in c { print $c["pass"] "/" $c["seq_len"]; next } { print $c["impl"] }' "$T/out" | sort | tr '\n' ' ')" = \
	"forward/64 forward_backward/17 onednn " ]

finish tables
