# Shared helpers for the memcore command's tests. $MEMCORE is the binary.
set -u
: "${MEMCORE:?set MEMCORE to the memcore binary}"
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DATA=$TOP/tests/data
FAILS=0
TMP=$(mktemp -d)
: >"$TMP/empty.conf"
# No slurm.conf: the node comes from --topology, Node* keys or this host,
# never from a slurmctld the test machine may run (tests that want one set
# SLURM_CONF themselves).
export SLURM_CONF=$TMP/no-slurm.conf
trap 'rm -rf "$TMP"' EXIT

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# expect_eq WHAT GOT WANT
expect_eq() {
	if [ "$2" != "$3" ]; then fail "$1: got '$2', want '$3'"; fi
}

# expect_near WHAT GOT WANT TOLERANCE (floats)
expect_near() {
	awk -v g="$2" -v w="$3" -v t="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }' ||
		fail "$1: got $2, want $3 +- $4"
}

# expect_contains WHAT TEXT NEEDLE
expect_contains() {
	case "$2" in *"$3"*) ;; *) fail "$1: '$3' not in: $2" ;; esac
}

# fmt_bytes BYTES: the figure as memcore prints sizes (util/mc_parse.c
# mc_fmt_bytes: B, KiB, MiB or GiB, whole or with two decimals, rounded).
fmt_bytes() {
	local b=$1 u=0 div=1 h units=(B KiB MiB GiB)
	while [ $u -lt 3 ] && [ $((b / div)) -ge 1024 ]; do div=$((div * 1024)) u=$((u + 1)); done
	if [ $((b % div)) = 0 ]; then
		printf '%s %s\n' $((b / div)) "${units[u]}"
	else
		h=$(((b * 100 + div / 2) / div))
		printf '%d.%02d %s\n' $((h / 100)) $((h % 100)) "${units[u]}"
	fi
}

# run_mc: runs memcore, sets OUT, ERR and RC.
run_mc() {
	RC=0
	"$MEMCORE" "$@" >"$TMP/out" 2>"$TMP/err" || RC=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
}

# dead_slurm_conf FILE: a slurm.conf whose slurmctld never answers (port 9,
# 2 s timeout): memcore's "slurmctld could not be reached" (exit 3).
dead_slurm_conf() {
	cat >"$1" <<'CONF'
ClusterName=nowhere
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=9
AuthType=auth/none
MessageTimeout=2
NodeName=n1 CPUs=1
PartitionName=p Nodes=n1 Default=YES
CONF
}

finish() {
	if [ "$FAILS" -ne 0 ]; then echo "$FAILS failure(s)"; exit 1; fi
	echo "ok"
}
