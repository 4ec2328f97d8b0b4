#!/usr/bin/env bash
# tests/cli/site_test.sh: `report site` — the static site written from a planted nightly history
# (a 10% step at run 41 of 50, a pull request's runs labelled pr-7 that must stay out) and a real
# run of tests/cli/tiny.yaml; checked without a browser (static), and in Debian's chromium
# (browser: every page loaded from the file system without an error, every link and image
# resolved, screenshots of the index and of the slower case's history page whose content is
# asserted; exit 77, skipped, where chromium is not installed: .ci/run installs it).
#   site_test.sh static|browser RUNNER REPORT MAKE_PLANTED
set -u
MODE=$1
RUNNER=$2
REPORT=$3
PLANTED=$4
source "$(dirname "$0")/lib.sh"
CHECK="$SRC/tests/site/browser_check.py"

db=$T/site.db
check "planted history" "$PLANTED" "$db" --cases 4 --between 0.03 --seed 5 nightly:40t:1 nightly:8t:1.10 pr-7:3t:1.3 nightly:2t:1.1 >/dev/null
check "a real run labelled nightly" "$RUNNER" run "$SRC/tests/cli/tiny.yaml" --db "$db" --label nightly >/dev/null 2>&1
real=$(sql "$db" "select max(id) from runs")
expect_status 0 "report site" "$REPORT" site --db "$db" -o "$T/site" --label nightly --title "Nightly of the test"
contains "$T/out" "^report site: [0-9]+ files in .*/site \(51 runs, " "the summary line"
for f in index.html runs.html case-0.html "run-$real.html"; do
	check "$f written" [ -s "$T/site/$f" ]
done
cmp_page=$(ls "$T/site" | grep '^compare-' | head -1)
check "a compare page for the label" [ -n "$cmp_page" ]
# the case whose history stepped: its page, from the index's link
s256=$(grep -o 'href="case-[0-9]*.html">flash float32 fwd B8 H1 S256 D64<' "$T/site/index.html" | grep -o 'case-[0-9]*')
check "the index links the S256 case" [ -n "$s256" ]

if [ "$MODE" = static ]; then
	expect_status 0 "every link and image names a file; no script, no absolute URL" python3 "$CHECK" --static "$T/site"
	# the label's compare page says what `report compare` says of the same two runs: the run the
	# unit, judged against the noise between runs (the planted runs differ within that noise)
	base_run=${cmp_page#compare-}; base_run=${base_run%%-*}
	cand_run=${cmp_page%.html}; cand_run=${cand_run##*-}
	expect_status 0 "report compare of the compare page's runs" "$REPORT" compare --db "$db" --baseline "$base_run" --run "$cand_run" --format html
	grep -E '^<(tr><td|li)>' "$T/out" >"$T/cmp_rows"
	check "report compare has rows and notes" [ "$(wc -l <"$T/cmp_rows")" -gt 4 ]
	check "every row and note of report compare is on $cmp_page: $(grep -vxF -f "$T/site/$cmp_page" "$T/cmp_rows" | head -c 300)" \
		[ -z "$(grep -vxF -f "$T/site/$cmp_page" "$T/cmp_rows")" ]
	contains "$T/site/index.html" "4 slower</span>" "the verdict counts the 4 slower cases"
	contains "$T/site/$s256.html" "slower \+[0-9.]+% since run 41" "the case page names the change"
	contains "$T/site/$s256.html" 'src="charts/'"$s256"'.svg"' "the case page shows its chart"
	check "its chart written" test -s "$T/site/charts/$s256.svg" -a -s "$T/site/charts/$s256.png"
	contains "$T/site/run-$real.html" 'src="charts/run-'"$real"'/latency.svg"' "the real run's latency chart"
	# under it its notes, one item each, as `report plot latency` prints them (but the cases not
	# plotted, which the page's table notes already name)
	"$REPORT" plot latency --db "$db" --run "$real" -o "$T/plot" | sed -n 's/^  note: //p' | grep -v 'not plotted' |
		sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e "s/'/\&#39;/g" -e 's/"/\&quot;/g' >"$T/plot_notes"
	check "report plot gives the real run's chart notes" [ "$(wc -l <"$T/plot_notes")" -ge 1 ]
	while IFS= read -r n; do
		check "the run page's chart note: $n" grep -qxF "<li>$n</li>" "$T/site/run-$real.html"
	done <"$T/plot_notes"
	lacks "$T/site/runs.html" "pr-7" "the pull request's runs stay out of the nightly site"
	contains "$T/site/index.html" "too few runs" "the real run's cases: too few runs"
	# without gnuplot: pages without charts, said so, nothing dangling
	GNUPLOT=/nonexistent/gnuplot expect_status 0 "no gnuplot: still a site" "$REPORT" site --db "$db" -o "$T/nochart" --label nightly
	contains "$T/out" "no charts: gnuplot is not installed" "the summary says so"
	contains "$T/nochart/$s256.html" "no chart: gnuplot is not installed" "the page says so"
	expect_status 0 "no gnuplot: links still resolve" python3 "$CHECK" --static "$T/nochart"
	# a gnuplot that crashes: every page without its chart says why, and so does stderr
	printf '#!/bin/sh\ncat >/dev/null\nkill -SEGV $$\n' >"$T/crash-gnuplot"
	chmod +x "$T/crash-gnuplot"
	GNUPLOT=$T/crash-gnuplot expect_status 0 "a crashing gnuplot: still a site" "$REPORT" site --db "$db" -o "$T/crashed" --label nightly
	contains "$T/err" "chart not drawn: gnuplot was killed by signal 11 writing chart '.*/run-$real/latency'" "stderr names the run's chart that failed"
	contains "$T/out" "; [0-9]+ charts not drawn \(above\)" "the summary counts the charts not drawn"
	contains "$T/crashed/run-$real.html" "no chart: gnuplot was killed by signal 11" "the run page says why its latency chart is missing"
	contains "$T/crashed/$s256.html" "no chart: gnuplot was killed by signal 11" "the case page says why"
	expect_status 0 "a crashing gnuplot: links still resolve" python3 "$CHECK" --static "$T/crashed"
	# usage and failures
	expect_status 2 "no -o" "$REPORT" site --db "$db"
	contains "$T/err" "give the folder to write: -o DIR" "says what is missing"
	touch "$T/file"
	expect_status 1 "-o names a file" "$REPORT" site --db "$db" -o "$T/file"
	contains "$T/err" "is not a directory|cannot create" "names the problem"
	expect_status 2 "--min-segment 1" "$REPORT" site --db "$db" -o "$T/x" --min-segment 1
	# a filter that keeps no case (a mistyped label) is refused, not an empty site with exit 0
	expect_status 2 "a label no run has" "$REPORT" site --db "$db" -o "$T/nolabel" --label nightlly
	contains "$T/err" "^report site: no case matches --label nightlly .*nothing written" "says nothing matches"
	check "no folder made" [ ! -e "$T/nolabel" ]
	expect_status 2 "a --where no case has" "$REPORT" site --db "$db" -o "$T/nolabel" --where seq_len=999
	# a second site into the same folder, of one case and the pull request's 3 runs: nothing the
	# first wrote and the second did not is left behind; what the user put there stays
	check "the first site has several case pages" [ "$(ls "$T/site" | grep -c '^case-')" -gt 1 ]
	echo mine >"$T/site/notes.txt"
	echo mine >"$T/site/charts/run-999999"
	expect_status 0 "a site of one case into the same folder" "$REPORT" site --db "$db" -o "$T/site" --label pr-7 --where seq_len=256
	check "one case page left (of $(ls "$T/site" | grep '^case-' | tr '\n' ' '))" [ "$(ls "$T/site" | grep -c '^case-[0-9]*\.html$')" = 1 ]
	check "one case chart left" [ "$(ls "$T/site/charts" | grep -c '^case-')" = 2 ]
	check "the 3 runs' pages left" [ "$(ls "$T/site" | grep -c '^run-[0-9]*\.html$')" = 3 ]
	check "the real run's page is gone" [ ! -e "$T/site/run-$real.html" ]
	check "the real run's chart folder is gone" [ ! -e "$T/site/charts/run-$real" ]
	check "the user's own file stays" grep -q mine "$T/site/notes.txt"
	check "a file named like a run's chart folder stays" grep -q mine "$T/site/charts/run-999999"
	expect_status 0 "the second site's links resolve" python3 "$CHECK" --static "$T/site"
	GNUPLOT=/nonexistent/gnuplot expect_status 0 "again, without gnuplot" "$REPORT" site --db "$db" -o "$T/site" --label pr-7 --where seq_len=256
	check "no chart of the sites before is left ($(find "$T/site/charts" -type f | wc -l) files)" [ -z "$(find "$T/site/charts" -type f ! -name run-999999)" ]
	finish site_static
	exit
fi

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	echo "skipped: chromium is not installed (apt-get install chromium; .ci/run does)"
	exit 77
fi
expect_status 0 "every page loads in chromium without an error, every link and image resolves" \
	python3 "$CHECK" "$chromium" "$T/site" "$T/shots" --screenshot index.html --screenshot "$s256.html"
[ -s "$T/err" ] && cat "$T/err" >&2
grep '^FAIL' "$T/out" >&2
contains "$T/out" "^[0-9]+ pages loaded" "the crawl reached the pages"
pages=$(ls "$T/site"/*.html | wc -l)
check "every page of the site reached from the index ($pages)" grep -q "^$pages pages loaded" "$T/out"
# what a person sees: the index's verdict and cases, the history page's change and chart
contains "$T/shots/index.txt" "Newest runs: 4 slower, 0 contended" "index: the verdict"
contains "$T/shots/index.txt" "flash float32 fwd B8 H1 S256 D64" "index: the cases"
contains "$T/shots/index.txt" "Newest run: $real" "index: the newest run's tables"
contains "$T/shots/$s256.txt" "slower \+[0-9.]+% since run 41" "history page: the change"
contains "$T/shots/$s256.txt" "41.*slower \+[0-9.]+% \[" "history page: the change point's run"
colour() { python3 "$CHECK" --colour "$1" "$2" "$3"; }
for shot in index "$s256"; do
	check "$shot screenshot is 1280 px wide" python3 -c "import struct,sys; d=open('$T/shots/$shot.png','rb').read(24); sys.exit(struct.unpack('>I', d[16:20])[0] != 1280)"
	band=$(colour "$T/shots/$shot.png" d3e7f1 4)
	red=$(colour "$T/shots/$shot.png" c0392b 8)
	note "$shot.png: $band pixels of the run-to-run band, $red of the slower change's red"
	check "$shot: the band is drawn ($band pixels)" [ "$band" -ge 10000 ]
	check "$shot: the change point is marked ($red pixels)" [ "$red" -ge 200 ]
done
[ -n "${SITE_SHOTS:-}" ] && cp "$T/shots/index.png" "$T/shots/$s256.png" "$SITE_SHOTS/"
finish site_browser
