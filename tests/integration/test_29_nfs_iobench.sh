#!/bin/bash
# guest: bookworm
# memcore iobench on a real NFS mount (NFSv4 over loopback, the kernel's
# nfsd serving a directory of the guest's disk) and on the guest's local
# disk, as the job's user (nobody), LocalScratch a directory of the local
# disk for the other column:
#  - the same 48 MiB of rows (3 shards) on NFS: "stage it"; a copy of the
#    same files on local disk: "as is"; each shuffled/sequential ratio
#    printed beside the tests' own measurement of the same patterns
#    (progs/mc_readpattern.c, no memcore code), which must agree on the
#    direction: NFS's ratio above local disk's, in both;
#    Seen at 22:25 on 2026-12-07: NFS 1.97 (mc_readpattern 3.00), shuffled
#    4.98x LocalScratch's: stage; local disk 1.49 (2.13), 0.58x: as is.
#    Over loopback the NFS ratio itself is modest: the decision rests on
#    the scratch column, which is what staging would give;
#  - the page cache of the sample dropped before each pattern: 0 resident
#    pages (mincore) in memcore's figures and in the program's, on NFS too
#    (the client's cache; the server's own page cache still holds the
#    export, so the NFS figure is what the RPCs over loopback cost: a
#    lower bound of a real network's);
#  - the launch note quotes the book before the measurement and says
#    "measured here on DATE" after it (the figure kept in nobody's cache,
#    keyed by the mount's source and type: NFS gives no f_fsid), and
#    memcore check --dataset says the same.
# guest: why: a real NFS mount over loopback: the host kernel has no nfs module
. "$(dirname "$0")/lib.sh"

why=$(mc_nfs_usable) || mc_skip "no NFS over loopback here: $why (the bookworm guest of tests/vm has it: bash tests/vm/check.sh bookworm -- test_29_nfs_iobench)"
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
[ -x "$PROGS/mc_readpattern" ] || mc_die "$PROGS/mc_readpattern missing: make progs"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
# Shuffled page faults over NFS are slow under TCG.
MC_CMD_TIMEOUT=900
mc_cluster_start
EXP=$MC_WORK/export NFS=$MC_WORK/nfs
mc_nfs_mount "$EXP" "$NFS"
assert_eq "6969 nfs" "$(stat -f -c '%t %T' "$NFS")" "the mount is NFS (statfs NFS_SUPER_MAGIC)"
mc_small_policy
CONF=$MC_CONF_DIR/memcore.conf
# LocalScratch on the guest's disk, beside the local copy of the dataset
# (its /tmp is a tmpfs, whose pages the drop cannot release: a scratch
# column read from memory would say "stage" of anything).
SCR=$MC_WORK/tmp/lscratch
mkdir -p "$SCR" && chmod 1777 "$SCR"
echo "LocalScratch=$SCR" >>"$CONF"
mc_restart_slurmd

mkdir -p "$EXP/ds"
for i in 0 1 2; do dd if=/dev/urandom of="$EXP/ds/shard$i.arrow" bs=1M count=16 conv=fsync status=none; done
chown -R nobody: "$EXP/ds"
LOCAL=$MC_WORK/tmp/local-ds
cp -a "$EXP/ds" "$LOCAL" && sync
mc_log "the export on $(stat -f -c %T "$EXP"), the local copy on $(stat -f -c %T "$LOCAL"), LocalScratch on $(stat -f -c %T "$SCR")"
assert_eq "$(stat -f -c %t "$LOCAL")" "$(stat -f -c %t "$SCR")" "LocalScratch and the local copy are on the same kind of local filesystem"
U=$MC_WORK/tmp/iob-user
mkdir -p "$U" && chown nobody: "$U"
AS=(runuser -u nobody -- env XDG_CACHE_HOME="$U/cache")
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# --- Before any measurement: the note quotes the book, saying so.
mc_run "${AS[@]}" srun --chdir=/tmp -n1 --gpus=1 --mem=256M --dataset="$NFS/ds" true
assert_rc 0 "a step with its dataset on NFS runs (NetworkDataset=note)"
assert_contains "$MC_ERR" "memcore:   shuffled reads from a network filesystem are slow: 94.2 s per GiB on Lustre vs 0.78 s on local NVMe (the book's figure, not measured here: memcore iobench)" \
	"before memcore iobench: the book's figure, said as the book's"

# --- memcore iobench on NFS and on local disk, and the tests' own program.
bench() {	# bench NAME DIR: memcore iobench's JSON in $U/NAME.json, mc_readpattern's lines in $U/NAME.own
	mc_run "${AS[@]}" "$MEMCORE" iobench --json --config "$CONF" --time-limit 240 "$2"
	assert_rc 0 "$1: memcore iobench runs as the user"
	printf '%s\n' "$MC_OUT" >"$U/$1.json"
	[ -n "$MC_ERR" ] && mc_log "$1: iobench's stderr: $MC_ERR"
	mc_run "${AS[@]}" "$PROGS/mc_readpattern" 32768 "$2"/shard0.arrow "$2"/shard1.arrow "$2"/shard2.arrow
	assert_rc 0 "$1: mc_readpattern runs"
	printf '%s\n' "$MC_OUT" >"$U/$1.own"
}
declare -A R G V O
bench nfs "$NFS/ds"
bench local "$LOCAL"
for n in nfs local; do
	R[$n]=$(json "$U/$n.json" 'round(d["shuffled_over_sequential"], 2)')
	G[$n]=$(json "$U/$n.json" 'round(d["gain_from_scratch"], 2)')
	V[$n]=$(json "$U/$n.json" 'd["verdict"]')
	O[$n]=$(sed -n 's/^ratio=\([0-9.]*\).*/\1/p' "$U/$n.own")
	mc_log "$n: shuffled/sequential: memcore iobench ${R[$n]}, mc_readpattern ${O[$n]}; shuffled over LocalScratch's ${G[$n]}; verdict ${V[$n]}; seconds $(json "$U/$n.json" 'd["here"]["seconds"]')"
	assert_eq "[0]" "$(json "$U/$n.json" 'sorted(set(d["here"]["resident_pages_before"].values()))')" \
		"$n: 0 pages of the sample resident before each pattern (mincore, memcore's figures)"
	assert_contains "$(cat "$U/$n.own")" "shuf resident=0 " "$n: 0 pages resident before mc_readpattern's shuffled pass"
	assert_eq 0 "$(json "$U/$n.json" 'sum(d["here"]["cut"].values())')" "$n: no pattern cut at its time limit"
done
assert_eq stage "${V[nfs]}" "NFS: stage it (shuffled mmap ${G[nfs]}x slower than on LocalScratch)"
assert_eq "as is" "${V[local]}" "local disk: read it as is (shuffled mmap ${G[local]}x LocalScratch's, ${R[local]}x sequential)"
assert_eq 1 "$(awk -v a="${R[nfs]}" -v b="${R[local]}" 'BEGIN { print (a > b) ? 1 : 0 }')" \
	"memcore iobench: NFS's ratio ${R[nfs]} above local disk's ${R[local]}"
assert_eq 1 "$(awk -v a="${O[nfs]}" -v b="${O[local]}" 'BEGIN { print (a > b) ? 1 : 0 }')" \
	"mc_readpattern (the tests' own): NFS's ratio ${O[nfs]} above local disk's ${O[local]}"
assert_contains "$(json "$U/nfs.json" 'd["reason"]')" ": stage it (memcore stage $NFS/ds $SCR/job_\$SLURM_JOB_ID)" \
	"NFS: the reason ends with the staging command"
assert_eq "" "$(ls -A "$SCR" | grep -v '^\.memcore-removing$')" "the scratch copies are removed"
KEPT=$(json "$U/nfs.json" 'd["kept"]')
assert_eq "600 nobody" "$(stat -c '%a %U' "$KEPT" 2>&1)" "the NFS figure is kept in nobody's cache, 0600: $KEPT"

# --- The note and memcore check --dataset say the measured figure.
DAY=$(date -u +%F)
mc_run "${AS[@]}" srun --chdir=/tmp -n1 --gpus=1 --mem=256M --dataset="$NFS/ds" true
assert_rc 0 "after memcore iobench: the step runs"
mc_log "srun's note: $(grep '^memcore:' <<<"$MC_ERR")"
assert_contains "$MC_ERR" "memcore:   measured here on $DAY (memcore iobench): shuffled mmap takes " \
	"the launch note says the measured figure and its date"
assert_contains "$MC_ERR" "x local scratch's: stage it" "... and the decision"
assert_not_contains "$MC_ERR" "the book's figure" "... not the book's"
mc_run "${AS[@]}" "$MEMCORE" check --config "$CONF" --gpus 1 --mem 256M --dataset "$NFS/ds"
assert_contains "$MC_OUT" "memcore:   measured here on $DAY (memcore iobench): shuffled mmap takes " \
	"memcore check --dataset says the measured figure too"
# Another user's cache is not read: root's has no figure.
mc_run srun --chdir=/tmp -n1 --gpus=1 --mem=256M --dataset="$NFS/ds" true
assert_contains "$MC_ERR" "(the book's figure, not measured here: memcore iobench)" "root (no figure in its cache): the book's"
