#!/bin/bash
# The submit-time answer against the launch, over a corpus of requests
# (tests/integration/corpus/submit_launch.txt): every
# request is submitted through the real sbatch with Slurm's cli_filter/lua
# and contrib/cli_filter.lua (sbatch --test-only: the filter runs as for a
# real submission, nothing is queued), and run as a batch job on each node
# shape of its partition by the real slurmd with memcore.so (the batch step
# and, in it, an srun step of all the job's tasks: the step a -n48 job runs) (a slurm.conf
# without CliFilterPlugins, the same cluster). For every request: passed
# at submission exactly when a node it could get ran it and the launch
# refused it on none (Slurm, not memcore, picks the node; lib_corpus.sh);
# every disagreement is printed, and any fails the test.
# Nodes (lib_multinode.sh): mc-n1, mc-n2 claim an AWS g4dn.metal (8 x T4,
# typed t4, 32 shards), mc-n3 an IBM AC922 (4 x V100, typed v100, 400
# MPS shares), each memcore
# reading its own topology; mc-c[1-4] are State=CLOUD nodes of the g4dn
# shape, powered down and hidden from the node API (no PrivateData=cloud),
# in partition elastic with mc-n3; a hidden node's launch runs on mc-n1 or
# mc-n2 in partition etwin, which has elastic's settings.
# Also: for every node shape and three policies, `memcore audit` says "ok"
# exactly when `memcore check` of the full-node step with the policy's
# defaults fits; and the login host's shape cache (cli/mc_shape_cache.c):
# a partition changed in slurmctld is seen at once, a damaged cache or a
# directory not the user's own is said so and never changes the answer.
. "$(dirname "$0")/lib_multinode.sh"
. "$(dirname "$0")/lib_corpus.sh"

T8=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
T4=$MC_TOP/tests/data/ibm-ac922-lassen-2xpower9-4xv100.xml
CORPUS=$MC_TOP/tests/integration/corpus/submit_launch.txt
MC_MN_NODES="mc-n1:$T8 mc-n2:$T8 mc-n3:$T4"
POLICY=("Bind=none")
mc_mn_policy "${POLICY[@]}"
MC_DEBUG=info
MC_JOB_TIMEOUT=300

# lib_multinode's configs, then: typed GPUs, shards on the g4dn nodes, the
# partitions of the corpus, the cloud nodes, the cli_filter.
eval "_mc_write_configs_mn() $(declare -f _mc_write_configs | tail -n +2)"
_mc_write_configs() {
	local g4dn
	_mc_write_configs_mn
	g4dn=$(mc_mn_shape "$T8")
	sed -i -e '/^NodeName=mc-n[12] /s/Gres=gpu:8/Gres=gpu:t4:8,shard:32/' \
	       -e '/^NodeName=mc-n3 /s/Gres=gpu:4/Gres=gpu:v100:4,mps:400/' \
	       -e 's/^GresTypes=gpu$/GresTypes=gpu,shard,mps/' \
	       -e '/^PartitionName=/d' "$SLURM_CONF"
	cat >>"$SLURM_CONF" <<EOF
NodeName=mc-c[1-4] ${g4dn/Gres=gpu:8/Gres=gpu:t4:8} State=CLOUD
PartitionName=gpu Nodes=mc-n[1-3] Default=YES MaxTime=INFINITE State=UP
PartitionName=g4 Nodes=mc-n[1-2] DefMemPerGPU=24000 DefCpuPerGPU=6 MaxTime=INFINITE State=UP
PartitionName=DEFAULT DefMemPerGPU=30000 DefCpuPerGPU=6 MaxTime=INFINITE State=UP
PartitionName=dflt Nodes=mc-n[1-3]
PartitionName=elastic Nodes=mc-n3,mc-c[1-4]
PartitionName=etwin Nodes=mc-n[1-2]
CliFilterPlugins=cli_filter/lua
SuspendProgram=/bin/true
ResumeProgram=/bin/true
SuspendTime=3600
SuspendExcNodes=mc-n[1-3]
ResumeTimeout=600
EOF
	sed -i -e '/NodeName=mc-n[12] /s/Name=gpu /Name=gpu Type=t4 /' \
	       -e '/NodeName=mc-n3 /s/Name=gpu /Name=gpu Type=v100 /' "$MC_CONF_DIR/gres.conf"
	echo "NodeName=mc-n[1-2] Name=shard Count=32" >>"$MC_CONF_DIR/gres.conf"
	echo "NodeName=mc-n3 Name=mps Count=400" >>"$MC_CONF_DIR/gres.conf"
}
mc_cluster_start
SLURM_VER=$(sinfo -V | awk '{print $2}')

# The login host's policy: the nodes' (without a TopologyFile: the nodes
# come from slurmctld) and the GPU memory slurmctld does not know, exactly
# as the topologies give it (15843721216 and 16911433728 bytes).
mc_corpus_login "$(printf '%s\n' "${POLICY[@]}" "GpuTypeMemory=t4:15472384K,v100:16515072K")"
hidden=$(scontrol -o show node 2>/dev/null | grep -c 'NodeName=mc-c')
assert_eq 0 "$hidden" "the powered-down cloud nodes are hidden from the node API"

# The nodes a request could get, one per shape: "PARTITION:NODE" for the
# launch (a hidden cloud node's shape: partition etwin). g4dn requests
# alternate between mc-n1 and mc-n2 to run two at a time.
g4dn_node() { [ $(($1 % 2)) = 0 ] && echo mc-n1 || echo mc-n2; }
shapes_of() { # PARTITION INDEX
	local n; n=$(g4dn_node "$2")
	case $1 in
	gpu|-|dflt) echo "$1:$n $1:mc-n3" ;;
	g4) echo "g4:$n" ;;
	elastic) echo "elastic:mc-n3 etwin:$n" ;;
	esac
}
mc_corpus_targets() { # INDEX
	if [ "${WHERE[$1]}" = any ]; then echo "${PARTS[$1]}:"
	else shapes_of "${PARTS[$1]}" "$1"; fi
}

mc_corpus_read "$CORPUS"
assert_eq 1 "$((N >= 60))" "the corpus holds at least 60 requests ($N)"
mc_corpus_submit
mc_corpus_launch
mc_corpus_compare
mc_log "corpus: $CASES requests run, ${#SKIPPED[@]} skipped, $DIS disagreements, $LETS let through on nodes that cannot be judged, $BROKEN harness failures"
assert_eq 0 "$BROKEN" "every launch ended as ran or refused by memcore"
assert_eq 0 "$DIS" "submit and launch agree on all $CASES requests"
mc_jobs_idle 30; mc_mn_all_idle 30
assert_eq 0 $? "every node IDLE after the corpus: $(mc_mn_states)"

# --- audit against check, per node shape and policy -------------------------
# The full-node step: every GPU of the node, its cores and memory (check's
# defaults), the policy's DataloaderWorkers.
for pol in "" "RamPerWorker=16G" "DataloaderWorkers=5"; do
	printf '%s\n' "${POLICY[@]}" $pol >"$MC_WORK/audit.conf"
	for t in "$T8" "$T4"; do
		g=$("$MEMCORE_BUILD/memcore" audit --json --config "$MC_WORK/audit.conf" --topology "$t" | jq '.gpus | length')
		mc_run "$MEMCORE_BUILD/memcore" audit --config "$MC_WORK/audit.conf" --topology "$t"
		a=$MC_RC aout=$MC_OUT
		mc_run "$MEMCORE_BUILD/memcore" check --config "$MC_WORK/audit.conf" --topology "$t" --gpus "$g"
		assert_eq "$MC_RC" "$a" "$(basename "$t" .xml) ${pol:-defaults}: audit ok exactly when the full-node step fits (audit rc $a, check rc $MC_RC)" ||
			printf '    audit: %s\n    check: %s\n' "$(head -n3 <<<"$aout" | tr '\n' ' ')" "$(head -n1 <<<"$MC_OUT")" >&2
	done
done

# --- the shape cache -------------------------------------------------------------
CK=(check --config "$LOGIN_CONF" --json --partition g4 --gpus 8 --mem 200G --cpus-per-gpu 6)
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
ref=$MC_OUT
assert_eq 2 "$(jq .nodes <<<"$ref")" "g4 has two nodes"
f=$(ls "$MEMCORE_CACHE_DIR"/shapes-* 2>/dev/null | head -n1)
assert_ne "" "$f" "the cli_filter's calls left a shape cache"
assert_eq 700 "$(stat -c %a "$MEMCORE_CACHE_DIR")" "the cache directory is 0700"
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "a warm call gives the same answer"
assert_eq "" "$MC_ERR" "a warm call says nothing on stderr"
# A changed partition is seen at once: slurmctld's update time moved.
scontrol update PartitionName=g4 Nodes=mc-n1
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq 1 "$(jq .nodes <<<"$MC_OUT")" "after scontrol update, g4 has one node at once"
scontrol update PartitionName=g4 Nodes=mc-n[1-2]
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "and two again"
# A node change (its state) moves slurmctld's node update time but no
# shape: the cache stays valid (test_58 counts the loads with sdiag), and
# the answer, the same 4 hidden nodes, is the same.
EL=(check --config "$LOGIN_CONF" --partition elastic --gpus 8 --mem 150G --cpus-per-gpu 6)
mc_run "$MEMCORE_BUILD/memcore" "${EL[@]}"
el=$MC_OUT
assert_contains "$el" "memcore: 4 nodes of partition elastic cannot be judged: mc-c[1-4]" "elastic: the 4 hidden nodes named"
for st in "DRAIN Reason=corpus" RESUME; do
	scontrol update NodeName=mc-n3 State=$st
	mc_run "$MEMCORE_BUILD/memcore" "${EL[@]}"
	assert_eq "$el" "$MC_OUT" "elastic after mc-n3 ${st%% *}: the same answer, the same 4 hidden nodes"
done
# Every cache file: one byte flipped, then one byte more.
for f in "$MEMCORE_CACHE_DIR"/shapes-*; do
	printf '\x5a' | dd of="$f" bs=1 seek=1200 conv=notrunc status=none
done
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "a damaged cache: the same answer"
assert_match "$MC_ERR" "^memcore: shape cache $MEMCORE_CACHE_DIR/shapes-[0-9a-f]{16}: checksum mismatch \(corrupt\): loading the nodes from slurmctld$" "a damaged cache: said so"
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "" "$MC_ERR" "and replaced: the next call says nothing"
for f in "$MEMCORE_CACHE_DIR"/shapes-*; do printf 'x' >>"$f"; done
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "a cache one byte long: the same answer"
assert_contains "$MC_ERR" ": wrong size: loading the nodes from slurmctld" "a cache one byte long: said so"
chmod 0755 "$MEMCORE_CACHE_DIR"
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "a directory others can read: the same answer"
assert_eq "memcore: shape cache directory $MEMCORE_CACHE_DIR is not this user's own 0700 directory: not used" "$MC_ERR" "a directory others can read: not used, said so"
chmod 0700 "$MEMCORE_CACHE_DIR"
# A cache file another user owns, or a symlink in its place: not read.
for f in "$MEMCORE_CACHE_DIR"/shapes-*; do chown nobody "$f"; done
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "a cache file of another user: the same answer"
assert_contains "$MC_ERR" ": not a regular file of this user, written by nobody else: loading the nodes from slurmctld" "a cache file of another user: said so"
for f in "$MEMCORE_CACHE_DIR"/shapes-*; do
	[ "$(stat -c %U "$f")" = root ] && { cp "$f" "$MC_WORK/real-cache"; rm -f "$f"; ln -s "$MC_WORK/real-cache" "$f"; }
done
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "a symlink for the cache file: the same answer"
assert_contains "$MC_ERR" ": Too many levels of symbolic links: loading the nodes from slurmctld" "a symlink for the cache file: not followed, said so"
assert_file "$MC_WORK/real-cache" "the symlink's target is left alone"
# Under valgrind: a cold call (cache written) and a warm one (cache read,
# revalidated), no error and no definite leak.
VG=(valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite)
rm -rf "$MEMCORE_CACHE_DIR"
for c in cold warm; do
	mc_run "${VG[@]}" "$MEMCORE_BUILD/memcore" "${CK[@]}"
	assert_eq "$ref" "$MC_OUT" "valgrind, $c: the same answer"
	assert_not_contains "$MC_ERR" "==" "valgrind, $c: nothing reported"
done
# Without MEMCORE_CACHE_DIR: $XDG_RUNTIME_DIR/memcore when that is the
# caller's own directory; another user's (sudo keeps the variable) is left
# alone, and /tmp/memcore-<uid> serves instead.
mkdir -p "$MC_WORK/xdg-own" "$MC_WORK/xdg-other" && chmod 0700 "$MC_WORK/xdg-own" &&
	chown nobody "$MC_WORK/xdg-other"
mc_run env -u MEMCORE_CACHE_DIR XDG_RUNTIME_DIR="$MC_WORK/xdg-own" "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "XDG_RUNTIME_DIR: the same answer"
assert_match "$(ls "$MC_WORK/xdg-own/memcore" 2>&1)" '^shapes-[0-9a-f]{16}$' "the cache in \$XDG_RUNTIME_DIR/memcore"
before=$(ls "/tmp/memcore-$(id -u)" 2>/dev/null)
mc_run env -u MEMCORE_CACHE_DIR XDG_RUNTIME_DIR="$MC_WORK/xdg-other" "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "another user's XDG_RUNTIME_DIR: the same answer"
assert_eq "" "$(ls -A "$MC_WORK/xdg-other")" "another user's XDG_RUNTIME_DIR is left alone"
new=$(comm -13 <(printf '%s\n' "$before") <(ls "/tmp/memcore-$(id -u)" 2>/dev/null))
assert_match "$new" '^shapes-[0-9a-f]{16}$' "the cache in /tmp/memcore-$(id -u) instead"
for f in $new; do rm -f "/tmp/memcore-$(id -u)/$f"; done
# Bounded: a directory of more than 64 caches keeps the one just written.
rm -f "$MEMCORE_CACHE_DIR"/shapes-*
for ((k = 0; k < 70; k++)); do echo x >"$MEMCORE_CACHE_DIR/shapes-dummy$k"; done
mc_run "$MEMCORE_BUILD/memcore" "${CK[@]}"
assert_eq "$ref" "$MC_OUT" "70 other caches: the same answer"
assert_match "$(ls "$MEMCORE_CACHE_DIR")" '^shapes-[0-9a-f]{16}$' "70 other caches: only the one just written is kept"
