#!/bin/bash
# memcore audit --write-cache / --cache: the node-facts cache carries the
# same facts as hwloc gives, for every topology in tests/data (the JSON of
# both is identical); a damaged cache is refused with the reason (exit 2).
. "$(dirname "$0")/lib.sh"

for xml in "$DATA"/*.xml; do
	n=$(basename "$xml" .xml)
	run_mc audit --config "$TMP/empty.conf" --topology "$xml" --json --write-cache "$TMP/$n.cache"
	want_rc=$RC want=$OUT
	[ "$RC" -le 1 ] || { fail "$n: audit --write-cache exit $RC: $ERR"; continue; }
	run_mc audit --config "$TMP/empty.conf" --cache "$TMP/$n.cache" --json
	expect_eq "$n: audit --cache exit" "$RC" "$want_rc"
	expect_eq "$n: the cache's JSON is hwloc's" "$OUT" "$want"
	expect_eq "$n: cache mode" "$(stat -c %a "$TMP/$n.cache")" 644
done

c=$TMP/aws-g4dn-metal-2xxeon8259cl-8xt4.cache
run_mc audit --config "$TMP/empty.conf" --cache "$c"
expect_contains "text output names the cache" "$OUT" "cache $c: memcore "
expect_contains "text output names the host" "$OUT" "host $(hostname)"
expect_contains "text output has the facts" "$OUT" "8 GPUs"

printf '\x01' | dd of="$c" bs=1 seek=3000 conv=notrunc status=none
run_mc audit --config "$TMP/empty.conf" --cache "$c"
expect_eq "corrupt cache: exit" "$RC" 2
expect_eq "corrupt cache: reason" "$ERR" "memcore: cache $c: checksum mismatch (corrupt)"
run_mc audit --config "$TMP/empty.conf" --cache "$TMP/absent"
expect_eq "missing cache: exit" "$RC" 2
expect_contains "missing cache: reason" "$ERR" "No such file or directory"
run_mc audit --cache "$c" --topology "$DATA/local-2numa-2gpu.xml"
expect_eq "--cache with --topology: usage error" "$RC" 2
run_mc audit --config "$TMP/empty.conf" --topology "$DATA/local-2numa-2gpu.xml" --write-cache "$TMP/no/dir/c"
expect_eq "--write-cache into a missing directory: exit" "$RC" 2
expect_contains "--write-cache: reason" "$ERR" "No such file or directory"
finish
