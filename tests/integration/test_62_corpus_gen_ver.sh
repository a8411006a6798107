#!/bin/bash
# The version-dependent rows of the generated corpus
# (corpus/table.txt's families tagged ver, expanded by corpus/gen_corpus.awk
# with only=ver: at least 60 requests) on the single node of lib.sh, in the
# guests too (test_61 runs the whole corpus on three nodes, which the
# guests lack): submitted through the real sbatch with cli_filter/lua and
# contrib/cli_filter.lua (sbatch --test-only), run as a batch job by the
# real slurmd with memcore.so. Refused at submission exactly when the
# launch refuses it (the one node: lib_corpus.sh's agreement); every
# disagreement is printed, and the run time.
# guest: trixie sid
# guest: why: the option forms, --export rules and the allocation Slurm
#   completes differ by release (--tres-per-task from 23.02, --export-file
#   from 26.05); the host runs 22.05's
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_corpus.sh"
# In make check in the guests (0 disagreements on 24.11.5 and 26.05.5:
# 60 requests, 55 run, 5 skipped as options the release lacks; 220-300 s
# a guest). On the host test_61 runs these rows with the rest of the
# corpus on 22.05, so this one runs there only with MC_CORPUS_GEN=1
# (make corpus-gen).
# timeout: 900
[ -n "${MC_GUEST_SUITE:-}" ] || [ "${MC_CORPUS_GEN:-0}" = 1 ] || mc_skip "on the host, test_61 runs the version-dependent rows with the whole corpus on Slurm 22.05 (MC_CORPUS_GEN=1, make corpus-gen, runs this test here too)"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
TABLE=$MC_TOP/tests/integration/corpus/table.txt
MC_GPU_TYPE=t4
MC_DEBUG=info
MC_JOB_TIMEOUT=300
MC_CORPUS_WAIT=600
# one partition per setting of the table, on the one node
parts=$(sed -n 's/^part[ \t]\+//p' "$TABLE" | sed 's/[ \t]*|[ \t]*/|/g' |
	while IFS='|' read -r name set kind; do
		echo "PartitionName=p_$name Nodes=mc-node1 $set MaxTime=INFINITE State=UP"
	done)
MC_SLURM_CONF_LINES="CliFilterPlugins=cli_filter/lua
$parts"
mc_cluster_start
SLURM_VER=$(sinfo -V | awk '{print $2}')
NODE_CONF=$MC_CONF_DIR/memcore.conf
printf 'Bind=none\nTopologyFile=%s\n' "$TOPO" >"$NODE_CONF"
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$NODE_CONF"
mc_corpus_login $'Bind=none\nGpuTypeMemory=t4:15472384K'

mc_corpus_targets() { echo "${PARTS[$1]}:"; }   # the one node

CORPUS=$MC_WORK/generated-ver.txt
awk -f "$MC_TOP/tests/integration/corpus/gen_corpus.awk" -v only=ver "$TABLE" >"$CORPUS"
assert_eq 0 $? "the table expands"
mc_corpus_read "$CORPUS"
assert_eq 1 "$((N >= 60))" "the version-dependent rows hold at least 60 requests ($N)"
t0=$SECONDS
mc_corpus_submit
t1=$SECONDS
mc_corpus_launch
t2=$SECONDS
mc_corpus_compare
mc_log "generated corpus, version-dependent rows, on Slurm $SLURM_VER: $N requests, $CASES run, ${#SKIPPED[@]} skipped, $DIS disagreements, $LETS let through, $BROKEN harness failures; submit $((t1 - t0)) s, launch $((t2 - t1)) s"
assert_eq 0 "$BROKEN" "every launch ended as ran or refused by memcore"
assert_eq 0 "$DIS" "submit and launch agree on all $CASES requests (Slurm $SLURM_VER)"
