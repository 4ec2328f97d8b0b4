#!/usr/bin/env bash
# tests/cli/ci_recipe_test.sh: the CI recipes of docs/ci/ run, step by step, on a scratch git
# repository, so that they cannot rot. The repository's benchmark is a peer (bench/work.sh) whose
# kernel sleeps 50 ms; a second commit plants a slower one (150 ms: a margin that holds on a loaded
# machine, where a sleep overshoots by tens of ms), a third only touches a comment
# (A/A). Every `run:` step of docs/ci/github-benchmarks.yml and every script line of
# docs/ci/gitlab-ci.yml runs as written, with the environment the file gives it (its GitHub
# expressions replaced by what GitHub would put there; an expression the test does not know fails
# it) and the project settings (BENCH_SWEEP, BENCH_BUILD, BENCH_RUNNER, BENCH_REPORT) set for the
# scratch repository. `uses:` steps are what the runner provides: the checkout is the repository,
# the cache is the database left in place between nights, and an upload's paths must exist. The
# comment steps talk to a fake `gh` and a fake `curl` (an API with comments in a JSON file), which
# must end with one comment, updated.
#   ci_recipe_test.sh RUNNER REPORT
set -u
RUNNER=$(realpath "$1")
REPORT=$(realpath "$2")
source "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { echo "skipped: git is not installed"; exit 77; }
python3 -c 'import yaml' 2>/dev/null || { echo "skipped: python3-yaml is not installed"; exit 77; }

repo=$T/repo
mkdir -p "$repo/bench" "$repo/docs/ci" "$T/bin"
cp "$SRC/docs/ci/benchdb-ci.sh" "$repo/docs/ci/"
cat >"$repo/bench/sweep.yaml" <<'EOF'
# the scratch project's benchmark: one attention-shaped case of its own kernel, bench/work.sh
name: scratch
defaults: {warmup: 1, iters: 5}
peers:
  work: {command: "sh work.sh", suite: attention}
benchmarks:
  - suite: attention
    impl: work
    seq_len: 64
    head_dim: 16
    batch_size: 1
    heads: 1
    pass: forward
EOF
work() {
	cat >"$repo/bench/work.sh" <<EOF
#!/bin/sh
# the scratch project's kernel: a sleep of $1 s per iteration, timed (schemas/peer-protocol.md)
echo "benchdb-peer 1"
i=0
while [ "\$i" -lt \$((BENCHDB_WARMUP + BENCHDB_ITERS)) ]; do
	t0=\$(date +%s%N); sleep $1; t1=\$(date +%s%N)
	echo "sample \$i fwd \$((t1 - t0))"
	i=\$((i + 1))
done
echo "status ok"
EOF
}
git_() { git -C "$repo" -c user.name=ci -c user.email=ci@example.com "$@"; }
work 0.05
git_ init -q -b main && git_ add -A && git_ commit -qm "base: 50 ms"
base=$(git_ rev-parse HEAD)
work 0.15
git_ commit -qam "slower: 150 ms"
slow=$(git_ rev-parse HEAD)
git_ checkout -q "$base" && git_ checkout -q -b aa && echo "# a comment" >>"$repo/bench/sweep.yaml"
git_ commit -qam "A/A: a comment"
same=$(git_ rev-parse HEAD)

# fake gh and curl: an API holding comments in $T/api.json ([{id, body}]), calls counted
cat >"$T/bin/gh" <<'EOF'
#!/usr/bin/env python3
import json, os, sys
state = os.environ["FAKE_API"]
comments = json.load(open(state)) if os.path.exists(state) else []
a = sys.argv[1:]
assert a[0] == "api", a
method, path, body, jq = "GET", None, None, None
i = 1
while i < len(a):
    if a[i] == "-X": method = a[i + 1]; i += 2
    elif a[i] == "-f": body = a[i + 1].split("=", 1)[1]; i += 2
    elif a[i] == "--jq": jq = a[i + 1]; i += 2
    elif a[i] == "--paginate": i += 1
    else: path = a[i]; i += 1
with open(state + ".log", "a") as log: log.write(f"{method} {path}\n")
if method == "GET":
    marker = jq.split('startswith("', 1)[1].split('")', 1)[0]
    for c in comments:
        if c["body"].startswith(marker): print(c["id"])
elif method == "POST":
    comments.append({"id": 100 + len(comments), "body": body})
elif method == "PATCH":
    cid = int(path.rsplit("/", 1)[1])
    next(c for c in comments if c["id"] == cid)["body"] = body
json.dump(comments, open(state, "w"))
EOF
cat >"$T/bin/curl" <<'EOF'
#!/usr/bin/env python3
import json, os, sys
state = os.environ["FAKE_API"]
notes = json.load(open(state)) if os.path.exists(state) else []
a = sys.argv[1:]
method, data, url = "GET", None, None
i = 0
while i < len(a):
    if a[i] == "-X": method = a[i + 1]; i += 2
    elif a[i] == "--data": data = json.loads(a[i + 1]); i += 2
    elif a[i] == "--header": i += 2
    elif a[i].startswith("-"): i += 1
    else: url = a[i]; i += 1
with open(state + ".log", "a") as log: log.write(f"{method} {url}\n")
if method == "GET": print(json.dumps(notes))
elif method == "POST": notes.append({"id": 200 + len(notes), "body": data["body"]})
elif method == "PUT":
    nid = int(url.rsplit("/", 1)[1])
    next(n for n in notes if n["id"] == nid)["body"] = data["body"]
json.dump(notes, open(state, "w"))
EOF
chmod +x "$T/bin/gh" "$T/bin/curl"

# steps FILE JOB EVENT: the job's shell steps, one "ENV<tab>NAME=VALUE", "RUN<tab>text",
# "ALWAYS<tab>text" (a step that runs after a failure too: if: always(), GitLab's after_script) or
# "USES<tab>action<tab>paths" line each (newlines in values as \n), GitHub expressions replaced
steps() {
	python3 - "$@" <<'EOF'
import json, os, re, sys, yaml
path, job, event = sys.argv[1:4]
doc = yaml.safe_load(open(path))
known = {
    "github.event.pull_request.base.sha": os.environ["T_BASE"],
    "github.event.pull_request.head.sha": os.environ["T_HEAD"],
    "github.event.pull_request.number": "7",
    "github.token": "fake-token",
    "github.event_name": event, "github.ref": "refs/pull/7/merge", "github.run_id": "1",
    "runner.name": "scratch",
}
def sub(v):
    def one(m):
        e = m.group(1).strip()
        if e not in known:
            sys.exit(f"ci_recipe_test: unknown expression ${{{{ {e} }}}} in {path}: teach the test")
        return known[e]
    return re.sub(r"\$\{\{(.*?)\}\}", one, str(v))
def env_lines(env):
    for k, v in (env or {}).items():
        print("ENV\t%s=%s" % (k, sub(v).replace("\n", "\\n")))
if "jobs" in doc:   # GitHub Actions
    env_lines(doc.get("env"))
    j = doc["jobs"][job]
    env_lines(j.get("env"))
    for st in j["steps"]:
        env_lines(st.get("env"))
        if "run" in st:   # ALWAYS: it runs after a failed step too (if: always() ...)
            kind = "ALWAYS" if "always()" in str(st.get("if", "")) else "RUN"
            print(kind + "\t" + sub(st["run"]).replace("\n", "\\n"))
        else:
            paths = (st.get("with") or {}).get("path", "")
            print("USES\t%s\t%s" % (st["uses"], sub(paths).replace("\n", "\\n")))
else:               # GitLab CI
    env_lines(doc.get("variables"))
    j = doc[job]
    env_lines(j.get("variables"))
    for line in j.get("script", []):
        print("RUN\t" + line)
    for line in j.get("after_script", []):
        print("ALWAYS\t" + line)
    for p in (j.get("artifacts") or {}).get("paths", []):
        print("USES\tartifacts\t" + p)
EOF
}

# run_job FILE JOB EVENT: run the job's steps in $repo like its runner; sets job_status (the
# status of the first failing run step, or 0) and fails the test on a missing artifact path.
run_job() {
	local line kind rest st
	job_status=0
	steps "$@" >"$T/steps" || { fail "steps of $2 in $1"; return; }
	(
		cd "$repo"
		# what the runners set: GitHub Actions, GitLab CI
		export PATH="$T/bin:$PATH" FAKE_API="$T/api.json" GITHUB_STEP_SUMMARY="$T/step_summary.md"
		export GITHUB_REPOSITORY=owner/scratch GITHUB_ACTIONS=true
		export CI_API_V4_URL=https://gitlab.example/api/v4 CI_PROJECT_ID=1 CI_MERGE_REQUEST_IID=7
		export BENCHDB_GITLAB_TOKEN=fake CI_MERGE_REQUEST_DIFF_BASE_SHA="$T_BASE" CI_COMMIT_SHA="$T_HEAD"
		status=0
		while IFS=$'\t' read -r kind rest; do
			case $kind in
			ENV) export "${rest%%=*}=$(printf '%b' "${rest#*=}")" ;;
			RUN | ALWAYS)
				# the project's settings, over the recipe's own (benchdb's); the contention guard
				# off: the peer sleeps, so its share of time waiting for a CPU is large on any
				# loaded machine (0.4-0.9 at a load average of 15 here), and the test is about
				# the recipe's steps, not the machine
				export BENCH_SWEEP=bench/sweep.yaml BENCH_BUILD= BENCH_RUNNER="$RUNNER" BENCH_REPORT="$REPORT"
				export BENCH_REGRESS_ARGS="--cpu-wait-level 100 --cpu-wait-gap 100"
				export BENCH_CHANGES_ARGS="--cpu-wait-level 100 --cpu-wait-gap 100"
				[ "$kind" = RUN ] && [ "$status" != 0 ] && continue   # later steps of a failed job
				bash -eo pipefail -c "$(printf '%b' "$rest")" </dev/null
				st=$?
				echo "step '$(printf '%b' "$rest" | head -1)': exit $st"
				[ "$status" = 0 ] && status=$st
				;;
			USES)
				paths=${rest#*$'\t'}
				case $rest in
				*upload-artifact* | artifacts*)
					for p in $(printf '%b' "$paths"); do
						[ -e "$p" ] || echo "MISSING ARTIFACT $p"
					done ;;
				esac ;;
			esac
		done <"$T/steps"
		exit "$status"
	) >"$T/job.log" 2>&1
	job_status=$?
	grep -q "MISSING ARTIFACT" "$T/job.log" && fail "$1 $2: an artifact path does not exist: $(grep MISSING "$T/job.log")"
}

# ---- GitHub: the pull request's job ----------------------------------------------------------
export T_BASE=$base T_HEAD=$slow
git_ checkout -q "$slow"
run_job "$SRC/docs/ci/github-benchmarks.yml" pull-request pull_request
check "github pull request, 3x slower head: the gate fails (exit $job_status)" [ "$job_status" = 1 ]
[ "$job_status" = 1 ] || cat "$T/job.log" >&2
check "the summary starts with the marker" [ "$(head -1 "$repo/bench-out/summary.md")" = "<!-- benchdb: report regress -->" ]
check "then the verdict" grep -q "^### .* REGRESSION$" <(sed -n 2p "$repo/bench-out/summary.md")
contains "$repo/bench-out/summary.md" "^\*\*1 case\*\* compared: 1 slower, 0 faster, 0 same, 0 unsure, 0 contended" "the counts"
contains "$repo/bench-out/summary.md" "^\| work float32 fwd B1 H1 S64 D16 .*\| slower +\|$" "the slower case listed"
contains "$repo/bench-out/summary.md" "^Smallest slowdown these runs detect" "the detectable size"
contains "$repo/bench-out/summary.md" "^<details><summary>all 1 case," "the details folded"
contains "$repo/bench-out/summary.md" "3 interleaved runs a side of .bench/sweep.yaml." "where it was measured"
check "the summary fits a comment (65536 characters)" [ "$(wc -m <"$repo/bench-out/summary.md")" -lt 65536 ]
contains "$T/step_summary.md" "REGRESSION" "the job summary has it"
check "3 interleaved runs a side" [ "$(sql "$repo/bench-pr.db" "select group_concat(label) from (select label from runs order by id)" | tr ',' '\n' | sed 's/-[0-9a-f]*$//' | tr '\n' ' ')" = "ci-base ci-head ci-head ci-base ci-base ci-head " ]
check "one comment posted" [ "$(python3 -c "import json; print(len(json.load(open('$T/api.json'))))")" = 1 ]
check "the comment is the summary" python3 -c "import json,sys; c=json.load(open('$T/api.json'))[0]['body']; sys.exit(not (c.startswith('<!-- benchdb: report regress -->') and 'REGRESSION' in c))"
# a second push to the pull request: the same comment, updated
run_job "$SRC/docs/ci/github-benchmarks.yml" pull-request pull_request
check "second push: still one comment" [ "$(python3 -c "import json; print(len(json.load(open('$T/api.json'))))")" = 1 ]
check "second push: the comment was updated (PATCH)" grep -q '^PATCH repos/.*/issues/comments/100$' "$T/api.json.log"
size=$(wc -c <"$repo/bench-out/summary.md")
note "pull request summary: $size bytes; head of it:"
head -12 "$repo/bench-out/summary.md"
check "the summary fits a comment (< 65536 bytes: $size)" [ "$size" -lt 65536 ]

# A/A: a pull request that changes no code does not fail as slower
export T_HEAD=$same
git_ checkout -q "$same"
rm -f "$repo/bench-pr.db"
run_job "$SRC/docs/ci/github-benchmarks.yml" pull-request pull_request
note "A/A pull request: exit $job_status"
check "A/A pull request: not a regression (exit $job_status)" [ "$job_status" != 1 ]

# ---- GitLab: the merge request's job -----------------------------------------------------------
export T_HEAD=$slow
git_ checkout -q "$slow"
rm -rf "$repo/bench-pr.db" "$repo/bench-out" "$T/api.json" "$T/api.json.log"
run_job "$SRC/docs/ci/gitlab-ci.yml" benchmarks:merge-request merge_request_event
check "gitlab merge request, slower head: the job fails (exit $job_status)" [ "$job_status" = 1 ]
[ "$job_status" = 1 ] || cat "$T/job.log" >&2
check "gitlab: one note posted by after_script" [ "$(python3 -c "import json; print(len(json.load(open('$T/api.json'))))")" = 1 ]
run_job "$SRC/docs/ci/gitlab-ci.yml" benchmarks:merge-request merge_request_event
check "gitlab: second pipeline, the note updated (PUT)" grep -q '^PUT .*/notes/200$' "$T/api.json.log"

# ---- nightly: a history that steps -------------------------------------------------------------
git_ checkout -q "$base"
rm -rf "$repo/bench-out"
run_job "$SRC/docs/ci/github-benchmarks.yml" nightly schedule
check "first night: 6 runs seed the history" [ "$(sql "$repo/nightly.db" "select count(*) from runs where label = 'nightly'")" = 6 ]
check "first night: steady, exit 0 (exit $job_status)" [ "$job_status" = 0 ]
[ "$job_status" = 0 ] || cat "$T/job.log" >&2
for night in 2 3; do
	run_job "$SRC/docs/ci/github-benchmarks.yml" nightly schedule
	check "night $night on the base commit: exit 0 (exit $job_status)" [ "$job_status" = 0 ]
done
git_ checkout -q "$slow"
for night in 4 5 6 7; do
	run_job "$SRC/docs/ci/gitlab-ci.yml" benchmarks:nightly schedule   # the other recipe, same database
done
check "four nights after the slower commit: the nightly fails (exit $job_status)" [ "$job_status" = 1 ]
[ "$job_status" = 1 ] || cat "$T/job.log" >&2
check "the nightly summary's marker, then its verdict" [ "$(sed -n 1,2p "$repo/bench-out/changes.md")" = "$(printf '<!-- benchdb: report changes -->\n### ❌ SLOWER')" ]
contains "$repo/bench-out/changes.md" '^\*\*SLOWER\*\*' "the nightly summary's verdict"
contains "$T/step_summary.md" "SLOWER" "the job summary has it"
check "the site written" [ -s "$repo/bench-out/site/index.html" ]
contains "$repo/bench-out/site/index.html" "1 slower</span>" "the site shows the slower case"
check "12 nightly runs (6, 1, 1, then 4)" [ "$(sql "$repo/nightly.db" "select count(*) from runs where label = 'nightly'")" = 12 ]

# usage
expect_status 2 "no BENCH_SWEEP" env -u BENCH_SWEEP bash "$SRC/docs/ci/benchdb-ci.sh" nightly
contains "$T/err" "set BENCH_SWEEP" "says what to set"
expect_status 2 "an unknown step" bash "$SRC/docs/ci/benchdb-ci.sh" deploy
finish ci_recipe
