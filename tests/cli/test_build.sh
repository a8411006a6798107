#!/bin/bash
# The build: memcore.so exports only what Slurm looks up (slurm_spank_*,
# plugin_*, spank_*), both binaries carry full RELRO, NX and the stack
# protector, and `make install` honours DESTDIR and PREFIX.
. "$(dirname "$0")/lib.sh"
B=$(dirname "$MEMCORE")
SO=$B/memcore.so

exports=$(nm -D --defined-only "$SO" | awk '{print $3}' | sort)
[ -n "$exports" ] || fail "no exported symbols read from $SO"
bad=$(grep -Ev '^(slurm_spank_|plugin_|spank_)' <<<"$exports")
expect_eq "symbols beyond the SPANK ones" "$bad" ""
for s in slurm_spank_init slurm_spank_task_init_privileged plugin_name plugin_type plugin_version spank_plugin_version; do
	grep -qx "$s" <<<"$exports" || fail "$SO does not export $s"
done

# The map (spank/memcore.map) and the exports agree exactly: every name it
# lists is defined and exported, every exported symbol is one it lists (a
# pattern such as slurm_spank_* matches at least one).
map=$TOP/spank/memcore.map
listed=$(sed -n '/global:/,/local:/p' "$map" | grep -Eo '^[[:space:]]*[A-Za-z_*]+;' | tr -d ' \t;')
[ -n "$listed" ] || fail "no global names read from $map"
for name in $listed; do
	n=0
	for e in $exports; do
		# shellcheck disable=SC2053
		[[ $e == $name ]] && n=$((n + 1))
	done
	[ "$n" -gt 0 ] || fail "$map lists $name, which memcore.so does not define"
done
for e in $exports; do
	m=0
	for name in $listed; do [[ $e == $name ]] && m=1; done
	[ "$m" = 1 ] || fail "memcore.so exports $e, which $map does not list"
done

# A user's build with their own CFLAGS: -O0 (glibc warns about
# _FORTIFY_SOURCE there on newer releases) and an extra warning their
# compiler gives (-Wconversion here, which memcore's code does warn on):
# a warning must not fail the build (no -Werror outside make check), while
# make check does turn warnings into errors.
o0=$TMP/o0
# (a user's own make: nothing inherited from a make check that runs this)
log=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u WERROR make -C "$TOP" B="$o0" CFLAGS="-O0 -Wconversion" -j2 "$o0/memcore.so" "$o0/memcore" 2>&1)
rc=$?
expect_eq "make CFLAGS='-O0 -Wconversion': exit status" "$rc" 0
[ -x "$o0/memcore" ] || fail "make CFLAGS=-O0: no memcore built"
expect_contains "make CFLAGS=-O0: warnings were there to fail on" "$log" "warning:"
grep -q -- '-Werror' <<<"$log" && fail "make CFLAGS=-O0 compiled with -Werror"
"$o0/memcore" --version >/dev/null || fail "the -O0 memcore does not run"
chk=$(make -C "$TOP" -n check 2>/dev/null | grep -E 'MAKE|make' | grep -c -- 'WERROR=-Werror')
[ "$chk" -ge 1 ] || fail "make check does not build with WERROR=-Werror"
werr=$(make -C "$TOP" B="$TMP/werr" WERROR=-Werror -n "$TMP/werr/util/mc_util.o" 2>/dev/null)
expect_contains "WERROR=-Werror reaches the compiler" "$werr" "-Werror"

# libslurm only in the command (node facts from slurmctld): slurmstepd must
# never load a second libslurm through the plugin.
readelf -dW "$SO" | grep NEEDED | grep -q libslurm && fail "$SO links libslurm"
readelf -dW "$MEMCORE" | grep NEEDED | grep -q libslurm || fail "$MEMCORE does not link libslurm"

for f in "$SO" "$MEMCORE"; do
	readelf -lW "$f" | grep -q GNU_RELRO || fail "$f: no RELRO segment"
	readelf -dW "$f" | grep -Eq 'BIND_NOW|FLAGS.*NOW' || fail "$f: not BIND_NOW (full RELRO)"
	readelf -lW "$f" | grep GNU_STACK | grep -q RWE && fail "$f: executable stack"
	nm -D "$f" | grep -q __stack_chk_fail || fail "$f: no stack protector"
	nm -D "$f" | grep -q '_chk@' || fail "$f: no _FORTIFY_SOURCE checked calls"
done

# The command is a PIE; the flags that give the above are the build's own
# (a CFLAGS= from the environment cannot drop them: they sit in HARDEN).
readelf -hW "$MEMCORE" | grep -q 'Type: *DYN' || fail "$MEMCORE: not a PIE"
flags=$(make -s -C "$TOP" -pn 2>/dev/null | grep -E '^HARDEN +:?=' | head -n 1)
for f in -D_FORTIFY_SOURCE=2 -fstack-protector-strong; do
	expect_contains "Makefile HARDEN has $f" "$flags" "$f"
done

# make install into a DESTDIR puts every file under it, nowhere else.
dest=$TMP/dest
make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/usr SLURM_PLUGIN_DIR=/usr/lib/slurm-test >/dev/null ||
	fail "make install DESTDIR failed"
for f in usr/lib/slurm-test/memcore.so usr/bin/memcore usr/share/man/man8/memcore.8 \
	usr/share/man/man5/memcore.conf.5 etc/slurm/memcore.conf etc/slurm/plugstack.conf.d/memcore.conf; do
	[ -f "$dest/$f" ] || fail "make install: $f missing under DESTDIR"
done
expect_contains "plugstack snippet" "$(cat "$dest/etc/slurm/plugstack.conf.d/memcore.conf")" \
	"required /usr/lib/slurm-test/memcore.so config=/etc/slurm/memcore.conf"
# The installed policy file is the shipped one and parses.
run_mc audit --config "$dest/etc/slurm/memcore.conf" --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml"
expect_eq "shipped memcore.conf parses (audit exit)" "$RC" 0

# memcore(8)'s FILES names where the package puts the shared files
# (/usr/share) and where make install does with its default PREFIX
# (/usr/local/share), and make install does put them there.
dest2=$TMP/dest-default
make -s -C "$TOP" install DESTDIR="$dest2" SLURM_PLUGIN_DIR=/usr/lib/slurm-test >/dev/null ||
	fail "make install DESTDIR (default PREFIX) failed"
files=$(MANWIDTH=200 man -l "$TOP/docs/memcore.8" 2>/dev/null | sed -n '/^FILES/,/^SEE ALSO/p')
for f in memcore/cli_filter.lua doc/memcore/examples/ memcore/grafana/memcore.json memcore/prometheus/consoles/memcore.html; do
	[ -e "$dest2/usr/local/share/$f" ] || fail "make install: /usr/local/share/$f missing"
	expect_contains "memcore(8) FILES: package path" "$files" "/usr/share/$f"
	expect_contains "memcore(8) FILES: make install path" "$files" "/usr/local/share/$f"
done

# The man pages render without warnings.
for m in "$TOP/docs/memcore.8" "$TOP/docs/memcore.conf.5"; do
	w=$(MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
	expect_eq "man --warnings $m" "$w" ""
done
# One version, set in the Makefile (VERSION): the command says it, the
# plugin carries it (slurmd's start line, tests/integration/test_40), and
# the packages and man pages agree with it.
V=$(make -s --no-print-directory -C "$TOP" version)
expect_eq "make version is the Makefile's VERSION" "$V" "$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")"
[[ $V =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "make version: '$V' is not X.Y.Z"
expect_eq "memcore --version" "$("$MEMCORE" --version)" "memcore $V"
grep -aq "^$V\$" <(strings "$SO") || fail "$SO does not carry the string $V"
expect_eq "contrib/debian/changelog: the newest entry" \
	"$(head -n1 "$TOP/contrib/debian/changelog" | sed -n 's/^memcore (\([^)]*\)).*/\1/p')" "$V"
if command -v dpkg-parsechangelog >/dev/null; then
	expect_eq "dpkg-parsechangelog -S Version" \
		"$(dpkg-parsechangelog -l "$TOP/contrib/debian/changelog" -S Version)" "$V"
fi
expect_eq "contrib/memcore.spec Version:" "$(sed -n 's/^Version: *//p' "$TOP/contrib/memcore.spec")" "$V"
expect_eq "contrib/memcore.spec: the newest %changelog entry" \
	"$(sed -n '/^%changelog/{n;s/.* - \([0-9.]*\)-[0-9]*$/\1/p;q}' "$TOP/contrib/memcore.spec")" "$V"
expect_contains "contrib/memcore.spec: the tarball it names" "$(cat "$TOP/contrib/memcore.spec")" "memcore-$V.tar.gz"
for m in "$TOP/docs/memcore.8" "$TOP/docs/memcore.conf.5"; do
	expect_contains "$(basename "$m"): .TH names the version" "$(head -n1 "$m")" "\"memcore $V\""
done
finish
