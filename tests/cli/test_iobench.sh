#!/bin/bash
# memcore iobench on local disk: three shards of Arrow-sized rows (the
# book's layout, smaller: 3 x 16 MiB), LocalScratch another directory of
# the same disk. The decision is "as is" (staging gains nothing on the
# same disk), the shuffled/sequential ratio is printed beside the tests'
# own measurement of the same patterns (tests/integration/progs/
# mc_readpattern.c, compiled here, no memcore code), the page cache of
# the sample was dropped before each pattern (0 pages resident, mincore,
# in memcore's figures and in the program's), the scratch copy is gone
# afterwards, and the figure is kept in the user's cache, 0600. On tmpfs
# the drop cannot release pages: said. Bad input: exit 2.
. "$(dirname "$0")/lib.sh"

# The dataset on disk: not tmpfs, whose pages are the files.
BASE=$TMP
if [ "$(stat -f -c %T "$TMP")" = tmpfs ]; then
	BASE=$TOP/build/test-iobench.$$
	mkdir -p "$BASE"
	trap 'rm -rf "$TMP" "$BASE"' EXIT
fi
DS=$BASE/ds SC=$BASE/scratch
mkdir -p "$DS" "$SC"
for i in 0 1 2; do head -c 16M /dev/urandom >"$DS/shard$i.arrow"; done
sync
cc -O2 -o "$TMP/mc_readpattern" "$TOP/tests/integration/progs/mc_readpattern.c" || fail "cc mc_readpattern.c"
export XDG_CACHE_HOME=$TMP/cache

# 1. The table and the decision, as JSON. Timings on a shared machine
# are noisy: the verdict is checked against the rule on the run's own
# figures every time, and the local-disk outcome (as is, and the same
# ratio as the test's own program within 3x) may take up to 3 tries, each
# a fresh measurement of both; all tries are printed.
j() { python3 -c "import json,sys; d=json.load(open('$TMP/out')); print($1)"; }
ok=0
for try in 1 2 3; do
	run_mc iobench --json --config "$TMP/empty.conf" --scratch "$SC" "$DS"
	expect_eq "iobench rc" "$RC" 0
	RATIO=$(j 'round(d["shuffled_over_sequential"], 2)')
	GAIN=$(j 'round(d["gain_from_scratch"], 2)')
	V=$(j 'd["verdict"]')
	RULE=$(awk -v r="$RATIO" -v g="$GAIN" 'BEGIN { print g >= 2 ? "stage" : r >= 20 ? "pre-shuffle" : "as is" }')
	expect_eq "try $try: the verdict follows the rule on its own figures (ratio $RATIO, gain $GAIN)" "$V" "$RULE"
	"$TMP/mc_readpattern" 32768 "$DS"/shard*.arrow >"$TMP/own" || fail "mc_readpattern"
	OWN=$(sed -n 's/^ratio=\([0-9.]*\).*/\1/p' "$TMP/own")
	echo "try $try: local disk ($(stat -f -c %T "$DS")): shuffled/sequential: memcore iobench $RATIO, mc_readpattern $OWN; shuffled here over scratch $GAIN; verdict $V"
	# The same pattern measured apart: within a factor of 3 of each
	# other, and both below the pre-shuffle threshold.
	if [ "$V" = "as is" ] && awk -v a="$RATIO" -v b="$OWN" 'BEGIN { r = a / b; exit !(r < 3 && r > 1 / 3 && a < 20 && b < 20) }'; then
		ok=1; break
	fi
done
expect_eq "local disk: read it as is, memcore's ratio beside mc_readpattern's (within 3x), in one of 3 tries" "$ok" 1
expect_eq "sample bytes" "$(j 'd["sample_bytes"]')" $((48 << 20))
expect_eq "rows of 32 KiB" "$(j 'd["rows"]')" 1536
expect_eq "0 pages resident before each pattern (here)" \
	"$(j 'sorted(set(d["here"]["resident_pages_before"].values()))')" "[0]"
expect_eq "0 pages resident before each pattern (scratch)" \
	"$(j 'sorted(set(d["scratch"]["resident_pages_before"].values()))')" "[0]"
expect_contains "mc_readpattern: 0 pages resident before its shuffled pass" "$(cat "$TMP/own")" "shuf resident=0 "
expect_eq "the scratch copy is removed" "$(ls -A "$SC")" ""
K=$(j 'd["kept"]')
expect_eq "the figure is kept in the user's cache, 0600" "$(stat -c %a "$K" 2>&1)" 600
expect_contains "... keyed by filesystem" "$K" "$XDG_CACHE_HOME/memcore/iobench-$(printf %08x $((0x$(stat -f -c %t "$DS"))))-"
expect_contains "... the figure" "$(cat "$K")" "memcore-iobench 1 fs=$(stat -f -c %t "$DS") "
expect_eq "the anon memory of the tool stays under 32 MiB" "$(j 'int(d["here"]["anon_peak_bytes"] < (32 << 20))')" 1

# 2. The book's table as text, the decision with its reason.
run_mc iobench --no-keep --config "$TMP/empty.conf" --scratch "$SC" "$DS"
expect_eq "text rc" "$RC" 0
for p in "sequential read()" "mmap, rows in order" "mmap, shuffled rows"; do
	expect_contains "the table has $p" "$OUT" "  $p "
done
expect_contains "header" "$OUT" "memcore: iobench: a sample of 48 MiB in 3 files, rows of 32768 bytes (1536 rows)"
expect_contains "scratch column" "$OUT" "local scratch $SC (a copy of the sample, removed):"
expect_contains "the decision, with its reason" "$OUT" "memcore: iobench: shuffled mmap is "
expect_eq "no progress without a terminal" "$ERR" ""

# 3. Without a scratch: said, one column.
run_mc iobench --no-keep --config "$TMP/empty.conf" --sample 8M "$DS"
expect_contains "no scratch: said" "$OUT" "local scratch: not measured: no local scratch (LocalScratch= in memcore.conf, or --scratch DIR)"
expect_contains "8 MiB sample of one file" "$OUT" "a sample of 8 MiB in 1 files (the dataset holds more)"

# 4. tmpfs keeps its pages: the drop is said not to have released them.
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && SHM=$(mktemp -d /dev/shm/mc-iobench.XXXXXX); then
	head -c 4M /dev/urandom >"$SHM/a.arrow"
	run_mc iobench --no-keep --no-scratch --config "$TMP/empty.conf" "$SHM"
	expect_contains "tmpfs: the kernel kept the pages, said" "$ERR" "memcore: iobench: here: the kernel kept 1024 of 1024 pages of the sample cached before sequential read()"
	rm -rf "$SHM"
fi

# 5. A cache directory others can write: nothing kept there.
chmod 0777 "$XDG_CACHE_HOME/memcore"
run_mc iobench --config "$TMP/empty.conf" --sample 1M --no-scratch "$DS"
expect_contains "a shared cache directory is not written" "$ERR" "memcore: iobench: the figure is not kept: $XDG_CACHE_HOME/memcore: not a directory of yours alone"
chmod 0700 "$XDG_CACHE_HOME/memcore"

# 5b. A scratch others may write without the sticky bit: not used (another
# user could swap the directory iobench makes there for a link).
mkdir -p "$BASE/open" && chmod 0777 "$BASE/open"
run_mc iobench --no-keep --config "$TMP/empty.conf" --sample 1M --scratch "$BASE/open" "$DS"
expect_contains "a non-sticky shared scratch is not used, said" "$OUT" "local scratch: not measured: $BASE/open: others may write it and it is not sticky"
expect_eq "... nothing made there" "$(ls -A "$BASE/open")" ""
chmod 1777 "$BASE/open"
run_mc iobench --no-keep --config "$TMP/empty.conf" --sample 1M --scratch "$BASE/open" "$DS"
expect_contains "a sticky shared scratch is used" "$OUT" "local scratch $BASE/open (a copy of the sample, removed):"

# 6. Bad input.
run_mc iobench --config "$TMP/empty.conf" "$BASE/missing"
expect_eq "missing path rc" "$RC" 2
expect_contains "missing path named" "$ERR" "memcore: iobench: $BASE/missing: No such file or directory"
run_mc iobench --sample 0 "$DS"
expect_eq "--sample 0 rc" "$RC" 2
run_mc iobench
expect_eq "no PATH rc" "$RC" 2
finish
