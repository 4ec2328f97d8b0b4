#!/usr/bin/env bash
# docs/ci/benchdb-ci.sh: the steps of the CI recipes (docs/ci/README.md) — the pull-request gate
# and the nightly history — so that the GitHub Actions workflow and the GitLab CI file both call
# the same tested shell (tests/cli/ci_recipe_test.sh runs their steps on a scratch repository).
#
#   benchdb-ci.sh pr-measure BASE HEAD   build BASE and HEAD in worktrees, run the sweep of each
#                                        on this machine in interleaved rounds (base, head, head,
#                                        base, ...), every run into $BENCH_DB
#   benchdb-ci.sh pr-gate                report regress of head against base: the summary in
#                                        $BENCH_OUT/summary.md (and $GITHUB_STEP_SUMMARY); exit
#                                        0 no regression, 1 slower, 2 cannot tell
#   benchdb-ci.sh nightly                build here, run the sweep labelled $BENCH_LABEL into
#                                        $BENCH_DB (6 runs when the database is new, to seed the
#                                        history), then report changes (exit 1 slower, 2 cannot
#                                        tell) and the static site in $BENCH_OUT/site
#   benchdb-ci.sh comment-github         post $BENCH_OUT/summary.md on the pull request, or update
#                                        the comment it posted before (gh; GH_TOKEN, PR_NUMBER,
#                                        GITHUB_REPOSITORY)
#   benchdb-ci.sh comment-gitlab         the same on a GitLab merge request (curl;
#                                        BENCHDB_GITLAB_TOKEN, CI_API_V4_URL, CI_PROJECT_ID,
#                                        CI_MERGE_REQUEST_IID)
#
# Settings (environment):
#   BENCH_SWEEP     the sweep, relative to the repository root (required)
#   BENCH_BUILD     command that builds a checkout, run in its root (default: none)
#   BENCH_RUNNER    the runner: a path relative to a checkout is that checkout's own (benchdb's
#                   kernels: build/runner/runner), anything else a command (default: runner)
#   BENCH_REPORT    the report program, the same way, from the head checkout (default: report)
#   BENCH_DB        the database (default: bench-ci.db); the nightly keeps it between runs,
#                   pr-measure starts it anew
#   BENCH_OUT       folder for worktrees, summaries and the site (default: bench-out)
#   BENCH_ROUNDS    pr-measure: interleaved rounds, each one run a side (default: 3)
#   BENCH_LABEL     nightly: the history's label (default: nightly)
#   BENCH_REPEAT    nightly: runs per night (default: 1; 6 when the database is new)
#   BENCH_REGRESS_ARGS, BENCH_CHANGES_ARGS: more options for report regress / changes (the
#                   latter go to report site too, so that the site says what the gate said)
set -euo pipefail

: "${BENCH_BUILD:=}" "${BENCH_RUNNER:=runner}" "${BENCH_REPORT:=report}" "${BENCH_DB:=bench-ci.db}"
: "${BENCH_OUT:=bench-out}" "${BENCH_ROUNDS:=3}" "${BENCH_LABEL:=nightly}" "${BENCH_REPEAT:=1}"
: "${BENCH_REGRESS_ARGS:=}" "${BENCH_CHANGES_ARGS:=}"
MARKER='<!-- benchdb: report regress -->'   # what `report regress --format summary` opens with

die() { echo "benchdb-ci: $*" >&2; exit 2; }
need_sweep() { [ -n "${BENCH_SWEEP:-}" ] || die "set BENCH_SWEEP to the sweep to run (relative to the repository root)"; }
# tool CHECKOUT PROGRAM: the program as a command line for that checkout
tool() {
	case "$2" in
	*/*) case "$2" in /*) echo "$2" ;; *) echo "$1/$2" ;; esac ;;
	*) echo "$2" ;;
	esac
}
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
summary_out() {
	[ -n "${GITHUB_STEP_SUMMARY:-}" ] && cat "$1" >>"$GITHUB_STEP_SUMMARY"
	return 0
}

pr_measure() {
	need_sweep
	local base=$1 head=$2 out db side dir round order
	out=$(abspath "$BENCH_OUT")
	db=$(abspath "$BENCH_DB")
	mkdir -p "$out"
	# the pull request's database is scratch: this job's runs only (a workspace kept between jobs,
	# as on a self-hosted runner, would otherwise add a re-run's runs to the last one's)
	rm -f "$db" "$db-wal" "$db-shm"
	for side in base head; do
		dir=$out/wt-$side
		git worktree remove --force "$dir" 2>/dev/null || rm -rf "$dir"
		git worktree add --detach "$dir" "$([ $side = base ] && echo "$base" || echo "$head")" >/dev/null
		if [ -n "$BENCH_BUILD" ]; then
			echo "benchdb-ci: building $side ($(git -C "$dir" rev-parse --short HEAD))"
			(cd "$dir" && eval "$BENCH_BUILD") || die "the build of $side failed"
		fi
	done
	# labels of this head's runs, so that a database kept between jobs holds each push apart
	local tag
	tag=$(git -C "$out/wt-head" rev-parse --short=12 HEAD)
	echo "ci-base-$tag ci-head-$tag" >"$out/labels"
	# interleaved rounds, the order alternating (ABBA...): drift on the machine reaches both sides
	for ((round = 1; round <= BENCH_ROUNDS; round++)); do
		order="base head"
		[ $((round % 2)) = 0 ] && order="head base"
		for side in $order; do
			dir=$out/wt-$side
			echo "benchdb-ci: round $round of $BENCH_ROUNDS: $side"
			# progress goes to the job log; a closed pipe never ends the sweep
			$(tool "$dir" "$BENCH_RUNNER") run "$dir/$BENCH_SWEEP" --db "$db" --label "ci-$side-$tag" ||
				die "runner run failed for $side (round $round)"
		done
	done
}

pr_gate() {
	local out status=0 report base_label head_label
	out=$(abspath "$BENCH_OUT")
	[ -s "$out/labels" ] || die "no $BENCH_OUT/labels: run pr-measure first"
	read -r base_label head_label <"$out/labels"
	report=$(tool "$out/wt-head" "$BENCH_REPORT")
	# shellcheck disable=SC2086
	$report regress --db "$BENCH_DB" --baseline-label "$base_label" --candidate-label "$head_label" \
		--format summary $BENCH_REGRESS_ARGS >"$out/regress.md" 2>"$out/regress.err" || status=$?
	# the summary (the verdict first, its marker the first line), then where it was measured
	{
		cat "$out/regress.md"
		echo
		echo "<sub>Head $(git -C "$out/wt-head" rev-parse --short HEAD) against base $(git -C "$out/wt-base" rev-parse --short HEAD): $BENCH_ROUNDS interleaved runs a side of \`$BENCH_SWEEP\` on $(hostname); exit $status.</sub>"
	} >"$out/summary.md"
	[ -s "$out/regress.md" ] || { cat "$out/regress.err" >&2; die "report regress wrote nothing (exit $status)"; }
	summary_out "$out/summary.md"
	cat "$out/regress.err" >&2
	return $status
}

nightly() {
	need_sweep
	local out db repeat status=0
	out=$(abspath "$BENCH_OUT")
	db=$(abspath "$BENCH_DB")
	mkdir -p "$out"
	if [ -n "$BENCH_BUILD" ]; then
		eval "$BENCH_BUILD" || die "the build failed"
	fi
	repeat=$BENCH_REPEAT
	if [ ! -s "$db" ]; then
		repeat=6   # a new history: enough runs at once for change points (2 x --min-segment)
		echo "benchdb-ci: $BENCH_DB is new: $repeat runs to seed the history"
	fi
	for ((i = 0; i < repeat; i++)); do
		$(tool "$PWD" "$BENCH_RUNNER") run "$BENCH_SWEEP" --db "$db" --label "$BENCH_LABEL" ||
			die "runner run failed"
	done
	local report
	report=$(tool "$PWD" "$BENCH_REPORT")
	# shellcheck disable=SC2086
	$report changes --db "$db" --label "$BENCH_LABEL" --format summary $BENCH_CHANGES_ARGS \
		>"$out/changes.md" || status=$?
	summary_out "$out/changes.md"
	# shellcheck disable=SC2086
	$report site --db "$db" --label "$BENCH_LABEL" $BENCH_CHANGES_ARGS -o "$out/site" >/dev/null ||
		die "report site failed"
	return $status
}

# comment_body: the summary, cut to what a comment takes (GitHub: 65536 characters)
comment_body() {
	local f=$BENCH_OUT/summary.md
	[ -s "$f" ] || die "no $f: run pr-gate first"
	head -c 60000 "$f"
}

comment_github() {
	: "${PR_NUMBER:?set PR_NUMBER}" "${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY}"
	local body id
	body=$(comment_body)
	id=$(gh api "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" --paginate \
		--jq ".[] | select(.body | startswith(\"$MARKER\")) | .id" | head -1)
	if [ -n "$id" ]; then
		gh api -X PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -f body="$body" >/dev/null
		echo "benchdb-ci: updated comment $id"
	else
		gh api -X POST "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" -f body="$body" >/dev/null
		echo "benchdb-ci: posted a comment"
	fi
}

comment_gitlab() {
	: "${BENCHDB_GITLAB_TOKEN:?set BENCHDB_GITLAB_TOKEN (a project access token with api scope)}"
	: "${CI_API_V4_URL:?}" "${CI_PROJECT_ID:?}" "${CI_MERGE_REQUEST_IID:?}"
	local api=$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes
	local body id
	body=$(comment_body | python3 -c 'import json,sys; print(json.dumps({"body": sys.stdin.read()}))')
	id=$(curl -sf --header "PRIVATE-TOKEN: $BENCHDB_GITLAB_TOKEN" "$api?per_page=100" |
		python3 -c 'import json,sys; m=sys.argv[1]; print(next((str(n["id"]) for n in json.load(sys.stdin) if n["body"].startswith(m)), ""))' "$MARKER")
	if [ -n "$id" ]; then
		curl -sf -X PUT --header "PRIVATE-TOKEN: $BENCHDB_GITLAB_TOKEN" \
			--header "Content-Type: application/json" --data "$body" "$api/$id" >/dev/null
		echo "benchdb-ci: updated note $id"
	else
		curl -sf -X POST --header "PRIVATE-TOKEN: $BENCHDB_GITLAB_TOKEN" \
			--header "Content-Type: application/json" --data "$body" "$api" >/dev/null
		echo "benchdb-ci: posted a note"
	fi
}

case "${1:-}" in
pr-measure) [ $# = 3 ] || die "usage: benchdb-ci.sh pr-measure BASE HEAD"; pr_measure "$2" "$3" ;;
pr-gate) pr_gate ;;
nightly) nightly ;;
comment-github) comment_github ;;
comment-gitlab) comment_gitlab ;;
*) die "usage: benchdb-ci.sh pr-measure BASE HEAD | pr-gate | nightly | comment-github | comment-gitlab" ;;
esac
