#!/bin/bash
# tests/data/ATTRIBUTION.md is self-contained: every XML file here has a
# row in its table and a sha256 in its Checksums list, and the listed
# checksums match the files.
. "$(dirname "$0")/lib.sh"

ATTR=$DATA/ATTRIBUTION.md
sed -n '/^[0-9a-f]\{64\}  [^ /]*\.xml$/p' "$ATTR" >"$TMP/sums"
expect_eq "checksum lines" "$(wc -l <"$TMP/sums")" \
	"$(find "$DATA" -maxdepth 1 -name '*.xml' | wc -l)"
if ! RES=$(cd "$DATA" && sha256sum --strict -c "$TMP/sums" 2>&1); then
	fail "checksums in ATTRIBUTION.md do not match: $RES"
fi
for f in "$DATA"/*.xml; do
	b=$(basename "$f")
	grep -q "^[0-9a-f]\{64\}  $b\$" "$TMP/sums" ||
		fail "$b: no sha256 in ATTRIBUTION.md"
	grep -q "^| \`$b\` |" "$ATTR" ||
		fail "$b: no row in ATTRIBUTION.md's table"
done
# Nothing outside the repository is referred to.
if grep -n 'shared/topologies\|SOURCES\.md\|SHA256SUMS' "$ATTR"; then
	fail "ATTRIBUTION.md refers to files outside the repository"
fi
finish
