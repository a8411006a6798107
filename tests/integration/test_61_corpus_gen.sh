#!/bin/bash
# The submit-time answer against the launch over a generated corpus (issue
# 25 item 6): corpus/table.txt (option families x partition settings x
# memory forms) expanded by corpus/gen_corpus.awk into at least 300
# requests, each submitted through the real sbatch with Slurm's
# cli_filter/lua and contrib/cli_filter.lua (sbatch --test-only) and run
# as a batch job on each node shape of its partition by the real slurmd
# with memcore.so (a slurm.conf without CliFilterPlugins, the same
# cluster); placement rows (tag any) once, placed by Slurm. Passed at
# submission exactly when a launch ran it and memcore refused none (Slurm
# picks the node, lib_corpus.sh); every disagreement is printed
# with the request, the submit answer and each launch's, and the run time.
# Nodes as test_57's: mc-n1, mc-n2 claim an AWS g4dn.metal (8 x T4, typed
# t4), mc-n3 an IBM AC922 (4 x V100, typed v100).
# guest: no: three slurmd (lib_multinode's namespaces); the guests run the
#   version-dependent rows on one node (test_62_corpus_gen_ver.sh)
. "$(dirname "$0")/lib_multinode.sh"
. "$(dirname "$0")/lib_corpus.sh"
# In make check since it found 0 disagreements on 22.05.8 (316 requests
# run, 8 let through; about 270 s, most of it the launch side's jobs):
# tests/integration/NOTES.md, "The generated corpus".
# timeout: 900

T8=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
T4=$MC_TOP/tests/data/ibm-ac922-lassen-2xpower9-4xv100.xml
TABLE=$MC_TOP/tests/integration/corpus/table.txt
MC_MN_NODES="mc-n1:$T8 mc-n2:$T8 mc-n3:$T4"
POLICY=("Bind=none")
mc_mn_policy "${POLICY[@]}"
MC_DEBUG=info
MC_JOB_TIMEOUT=300
MC_CORPUS_WAIT=900

# lib_multinode's configs, then typed GPUs, one partition per setting of
# the table over all three nodes, one per shape (placement rows), the
# cli_filter.
eval "_mc_write_configs_mn() $(declare -f _mc_write_configs | tail -n +2)"
_mc_write_configs() {
	local name set kind
	_mc_write_configs_mn
	sed -i -e '/^NodeName=mc-n[12] /s/Gres=gpu:8/Gres=gpu:t4:8/' \
	       -e '/^NodeName=mc-n3 /s/Gres=gpu:4/Gres=gpu:v100:4/' \
	       -e '/^PartitionName=/d' "$SLURM_CONF"
	while IFS='|' read -r name set kind; do
		echo "PartitionName=p_${name#part } Nodes=mc-n[1-3] $set MaxTime=INFINITE State=UP"
	done < <(sed -n 's/^part[ \t]\+//p' "$TABLE" | sed 's/[ \t]*|[ \t]*/|/g') >>"$SLURM_CONF"
	cat >>"$SLURM_CONF" <<EOC
PartitionName=gpu Nodes=mc-n[1-3] Default=YES MaxTime=INFINITE State=UP
PartitionName=p_t4 Nodes=mc-n[1-2] MaxTime=INFINITE State=UP
PartitionName=p_v100 Nodes=mc-n3 MaxTime=INFINITE State=UP
CliFilterPlugins=cli_filter/lua
EOC
	sed -i -e '/NodeName=mc-n[12] /s/Name=gpu /Name=gpu Type=t4 /' \
	       -e '/NodeName=mc-n3 /s/Name=gpu /Name=gpu Type=v100 /' "$MC_CONF_DIR/gres.conf"
}
mc_cluster_start
SLURM_VER=$(sinfo -V | awk '{print $2}')
mc_corpus_login "$(printf '%s\n' "${POLICY[@]}" "GpuTypeMemory=t4:15472384K,v100:16515072K")"

# "each": one launch per shape, pinned (g4dn rows alternate mc-n1/mc-n2);
# "any": Slurm places it in the partition (or list) of the row.
mc_corpus_targets() {
	local n=mc-n1; [ $(($1 % 2)) = 0 ] || n=mc-n2
	if [ "${WHERE[$1]}" = any ]; then echo "${PARTS[$1]}:"
	else echo "${PARTS[$1]}:$n ${PARTS[$1]}:mc-n3"; fi
}

CORPUS=$MC_WORK/generated.txt
awk -f "$MC_TOP/tests/integration/corpus/gen_corpus.awk" "$TABLE" >"$CORPUS"
assert_eq 0 $? "the table expands"
mc_corpus_read "$CORPUS"
assert_eq 1 "$((N >= 300))" "the generated corpus holds at least 300 requests ($N)"
t0=$SECONDS
mc_corpus_submit
t1=$SECONDS
mc_corpus_launch
t2=$SECONDS
mc_corpus_compare
mc_log "generated corpus on Slurm $SLURM_VER: $N requests, $CASES run, ${#SKIPPED[@]} skipped, $DIS disagreements, $LETS let through, $BROKEN harness failures; submit $((t1 - t0)) s, launch $((t2 - t1)) s"
assert_eq 0 "$BROKEN" "every launch ended as ran or refused by memcore"
assert_eq 0 "$DIS" "submit and launch agree on all $CASES generated requests (Slurm $SLURM_VER)"
