#!/bin/bash
# The submit-time answer against the launch for the request forms that
# differ by Slurm version (in the guest tier): the corpus
# tests/integration/corpus/forms.txt (--tres-per-task, Slurm >= 23.02;
# --gpu-bind and --tres-bind, which 26.05 makes one option; and ordinary
# forms as a control), on the single node of lib.sh (test_57 needs three
# nodes, which the guests lack). Each request is submitted through the real
# sbatch with Slurm's cli_filter/lua and contrib/cli_filter.lua (sbatch
# --test-only: the filter runs as for a real submission, nothing is queued)
# and run as a batch job with an srun step by the real slurmd with
# memcore.so (a slurm.conf without CliFilterPlugins, the same cluster).
# Refused at submission exactly when the launch refuses it; every
# disagreement is printed, and any fails the test. A request whose option
# the running sbatch does not know is skipped with the Slurm version, never
# counted as agreement. Then the job's environment (corpus/env.txt):
# MEMCORE_* from sbatch's environment under --export, SBATCH_EXPORT and
# --export-file, whose rules change with the release (NIL from 23.02.3,
# an --export-file without --export dropped from 26.05). And the
# allocation forms Slurm completes itself after the filter
# (corpus/alloc.txt).
# guest: trixie sid
# guest: why: the option forms differ by Slurm release (--tres-per-task
#   from 23.02, --gpu-bind/--tres-bind in 26.05); the host runs 22.05's
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_corpus.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
CORPUS=$MC_TOP/tests/integration/corpus/forms.txt
MC_GPU_TYPE=t4
MC_DEBUG=info
MC_JOB_TIMEOUT=300
# excl: the same node, OverSubscribe=EXCLUSIVE; mmn: MaxMemPerNode
# (corpus/alloc.txt)
MC_SLURM_CONF_LINES="CliFilterPlugins=cli_filter/lua
PartitionName=excl Nodes=mc-node1 OverSubscribe=EXCLUSIVE
PartitionName=mmn Nodes=mc-node1 MaxMemPerNode=180000"
mc_cluster_start
SLURM_VER=$(sinfo -V | awk '{print $2}')

# The node's policy (SPANK, its own topology) and the login host's (the
# node from slurmctld, the GPU memory slurmctld does not know, exactly as
# the topology gives it: 15843721216 bytes).
NODE_CONF=$MC_CONF_DIR/memcore.conf
printf 'Bind=none\nTopologyFile=%s\n' "$TOPO" >"$NODE_CONF"
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$NODE_CONF"
mc_corpus_login $'Bind=none\nGpuTypeMemory=t4:15472384K'

mc_corpus_targets() { echo "${PARTS[$1]}:"; }   # the one node: Slurm places it

mc_corpus_read "$CORPUS"
assert_eq 13 "$N" "the corpus holds 13 requests"
mc_corpus_submit
mc_corpus_launch
mc_corpus_compare
mc_log "forms corpus on Slurm $SLURM_VER: $CASES requests run, ${#SKIPPED[@]} skipped, $DIS disagreements, $LETS let through, $BROKEN harness failures"
assert_eq 0 "$BROKEN" "every launch ended as ran or refused by memcore"
assert_eq 0 "$DIS" "submit and launch agree on all $CASES requests (Slurm $SLURM_VER)"
assert_eq 0 "$LETS" "a single judged node: nothing let through unjudged"
# The control forms are known to every version: never skipped, and each
# pair has one request that runs and one refused at both ends.
for c in gpn mem_per_gpu gpt; do
	for k in fit short; do
		i=-1; for ((j = 0; j < N; j++)); do [ "${NAMES[j]}" = "${c}_$k" ] && i=$j; done
		want=passed; [ $k = short ] && want=refused
		assert_eq "$want" "${SUBMIT[$i]:-skipped}" "${c}_$k: $want at submission"
	done
done

# The job's environment: MEMCORE_* as the job will have them (--export,
# SBATCH_EXPORT, --export-file), by each release's rules.
mc_jobs_idle 30
mc_corpus_read "$MC_TOP/tests/integration/corpus/env.txt"
assert_eq 15 "$N" "the environment corpus holds 15 requests"
mc_corpus_submit
mc_corpus_launch
mc_corpus_compare
mc_log "environment corpus on Slurm $SLURM_VER: $CASES requests run, ${#SKIPPED[@]} skipped, $DIS disagreements, $BROKEN harness failures"
assert_eq 0 "$BROKEN" "environment corpus: every launch ended as ran or refused by memcore"
assert_eq 0 "$DIS" "environment corpus: submit and launch agree on all $CASES requests (Slurm $SLURM_VER)"
assert_eq 15 "$CASES" "environment corpus: every request judged (none skipped)"
# Each answer is the one the rules give, not only the same at both ends:
# _fit runs, _short is refused; --export-file alone is dropped from 26.05.
file_want=passed; mc_corpus_ver_ge "$SLURM_VER" 26.05 && file_want=refused
for ((j = 0; j < N; j++)); do
	case ${NAMES[j]} in
	*_fit) want=passed ;; *_short) want=refused ;; env_file) want=$file_want ;; *) continue ;;
	esac
	assert_eq "$want" "${SUBMIT[$j]:-skipped}" "${NAMES[j]}: $want at submission (Slurm $SLURM_VER)"
done

# Allocation forms Slurm completes itself after the filter (--mincpus,
# --ntasks-per-gpu, implied tasks, OverSubscribe=EXCLUSIVE, MaxMemPerNode).
mc_jobs_idle 30
mc_corpus_read "$MC_TOP/tests/integration/corpus/alloc.txt"
assert_eq 14 "$N" "the allocation corpus holds 14 requests"
mc_corpus_submit
mc_corpus_launch
mc_corpus_compare
mc_log "allocation corpus on Slurm $SLURM_VER: $CASES requests run, ${#SKIPPED[@]} skipped, $DIS disagreements, $BROKEN harness failures"
assert_eq 0 "$BROKEN" "allocation corpus: every launch ended as ran or refused by memcore"
assert_eq 0 "$DIS" "allocation corpus: submit and launch agree on all $CASES requests (Slurm $SLURM_VER)"
assert_eq 14 "$CASES" "allocation corpus: every request judged (none skipped)"
for ((j = 0; j < N; j++)); do
	want=passed; [[ ${NAMES[j]} == *_short ]] && want=refused
	assert_eq "$want" "${SUBMIT[$j]:-skipped}" "${NAMES[j]}: $want at submission (Slurm $SLURM_VER)"
done
mc_jobs_idle 30
assert_node_idle "the node IDLE after the corpus"
