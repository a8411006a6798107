#!/bin/bash
# tests/valgrind.sh MEMCORE - `memcore check` and `memcore audit` under
# valgrind memcheck on every topology in tests/data/ (etc/memcore.conf),
# and with the Node* keys instead of a topology: zero errors, exit 2 or
# less (1 is memcore's "refused"). MC_JOBS runs at a time (default: the
# CPUs; valgrind is CPU-bound, so a 2-core machine halves the time).
# make valgrind; part of make check.
set -u
cli=${1:?usage: tests/valgrind.sh MEMCORE}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vg=(valgrind -q --error-exitcode=99 --leak-check=full
	--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect)
printf 'NodeRam=700G\nNodeCores=32\nNodeGpus=8\nGpuMemory=80G\nHostRamPerGpuRam=1.5\n' >"$tmp/nodekeys.conf"
# one case a line: the config, then memcore's arguments
{
	for x in "$top"/tests/data/*.xml; do
		printf '%s\n' "$top/etc/memcore.conf check --gpus 1 --mem 64G --dataloader-workers 2 --json --topology $x" \
			"$top/etc/memcore.conf audit --topology $x"
	done
	printf '%s\n' "$tmp/nodekeys.conf audit" "$tmp/nodekeys.conf audit --json" "$tmp/nodekeys.conf check --gpus 8 --json"
} >"$tmp/cases"
# one_case N CONF ARGS...: valgrind's report in $tmp/N.err; "ok" or the failure
one_case() {
	local n=$1 conf=$2 rc=0; shift 2
	"${vg[@]}" "$cli" "$@" --config "$conf" >/dev/null 2>"$tmp/$n.err" || rc=$?
	if [ $rc -gt 2 ] || grep -q '^==' "$tmp/$n.err"; then
		cat "$tmp/$n.err"
		echo "FAIL: valgrind memcore $* --config $conf (exit $rc)"
		return 1
	fi
}
export -f one_case; export cli tmp
export VG="${vg[*]}"
n=$(wc -l <"$tmp/cases")
# shellcheck disable=SC2016
nl -ba "$tmp/cases" | xargs -P "${MC_JOBS:-$(nproc)}" -L 1 bash -c 'vg=($VG); one_case "$@"' _ || exit 1
echo "valgrind: $n runs of memcore check/audit, 0 errors"
