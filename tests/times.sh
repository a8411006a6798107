#!/bin/bash
# tests/times.sh - where make check's minutes go.
#
#   tests/times.sh tier FILE NAME CMD...   run CMD; append "tier NAME SECONDS"
#                                          to FILE; exit with CMD's status
#   tests/times.sh report FILE [N]         each tier's time, then the N (10)
#                                          slowest tests with their seconds
#
# FILE holds tab-separated lines "KIND<TAB>NAME<TAB>SECONDS", KIND being
# `tier` or `test`. Tests are appended by the tiers themselves: make unit
# (each cmocka binary and tests/cli script), tests/integration/run.sh
# (MC_TIMES), tests/vm/check.sh (each guest's run.sh, named suite:test).
# The report is printed at the end of make check so that growth is seen
# when it happens (the README's figures come from it).
set -u
case ${1:-} in
tier)
	f=$2 name=$3; shift 3
	t0=${EPOCHREALTIME/,/.}
	"$@"
	rc=$?
	printf 'tier\t%s\t%s\n' "$name" \
		"$(awk -v a="$t0" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.0f", b - a }')" >>"$f"
	exit $rc
	;;
report)
	f=$2 n=${3:-10}
	[ -s "$f" ] || { echo "times: no record in $f" >&2; exit 0; }
	printf '\nmake check, where the time went (%s):\n  each tier (the guest tier runs beside the host tiers):\n' "$f"
	awk -F'\t' '$1 == "tier" { printf "  %6ss  %3d:%02d  %s\n", $3, $3 / 60, $3 % 60, $2 }' "$f"
	printf '  the %s slowest tests:\n' "$n"
	awk -F'\t' '$1 == "test" { printf "%s\t%s\n", $3, $2 }' "$f" | sort -t"$(printf '\t')" -k1,1nr |
		head -n "$n" | awk -F'\t' '{ printf "  %6ss  %s\n", $1, $2 }'
	;;
*)
	echo "usage: $0 tier FILE NAME CMD... | report FILE [N]" >&2
	exit 2
	;;
esac
