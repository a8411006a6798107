#!/bin/bash
# Slurm as the oracle (issue 41 item 1): a seeded generator draws job
# requests from the grammar of the options memcore(8)'s submission table
# models (combinations: -N, -n, --ntasks-per-node, -c, --cpus-per-gpu,
# every GPU form, typed GPUs, --ntasks-per-gpu, --mem/--mem-per-gpu/
# --mem-per-cpu and 0, --exclusive, --threads-per-core, --hint, --mincpus,
# --sockets-per-node/--cores-per-socket), each submitted with the real
# sbatch to a real slurmctld in one of 32 partitions (4 node shapes x 8
# settings of corpus/table.txt: DefMemPerGPU/CPU/Node, DefCpuPerGPU,
# MaxMemPerCPU/Node, OverSubscribe=EXCLUSIVE). What memcore predicts a node
# gets (`memcore check --partition P --slurm-options JSON --json`: the
# shape's "grant", mc_slurm_alloc) is compared with what slurmctld
# allocated (`scontrol -d show job`: each node's CPU_IDs, Mem and GRES,
# and NumTasks), not only the verdict. The JSON is what Slurm's own
# cli_filter/lua hands memcore (slurm.json_cli_options, dumped by a
# filter of this test). A disagreement is shrunk (options dropped one at a
# time while it still disagrees) and printed with its seed and index.
#
# The cluster is a slurmctld alone (no slurmd, as tests/bench/
# ctld_partition.sh): State=CLOUD nodes (PrivateData=cloud, no-op
# Resume/SuspendProgram, a ResumeTimeout longer than the run), which
# slurmctld allocates and leaves CONFIGURING with the allocation visible;
# gres.conf names device files so that it knows each GPU (per-node GRES
# with IDX). Each job is read and cancelled before the next.
#
# Knobs: MC_ORACLE_N requests (default 200), MC_ORACLE_SEED (default 41,
# so that make check asks the same; "random": one drawn and printed),
# MC_ORACLE_SHRINK=0 to print disagreements unshrunk, MC_ORACLE_REPLAY=FILE
# to ask the requests of FILE ("PARTITION OPTIONS..." a line) instead. A disagreement of a
# family corpus/oracle_known.txt lists (not modelled yet) is counted and
# printed as known; any other fails the test. The long run (README "Slurm as the oracle"):
#   MC_ORACLE_N=2000 MC_ORACLE_SEED=41 MC_TEST_TIMEOUT=7200 \
#     MEMCORE_BUILD=$PWD/build bash tests/integration/run.sh test_63_oracle
# A request the oracle found once becomes a row of corpus/table.txt.
#
# Node shapes, from the hwloc exports in tests/data (memcore audit, as
# lib_multinode's mc_mn_shape: a socket per NUMA node): t4 = AWS
# g4dn.metal (2 x 24 x 2, 8 x T4), v100 = IBM AC922 lassen (2 x 20 x 4,
# SMT4, 4 x V100), h200 = Lenovo SD665-N V3 (8 x 16 x 2, 4 x H200), a100 =
# JUWELS Booster (2 x EPYC 7402, 4 x A100) declared ThreadsPerCore=1 (a
# site hiding SMT in slurm.conf). Three nodes each partition.
# guest: no: the guests' run is the knob above in tests/vm (slow under TCG)
# timeout: 900
MC_GPUS=8 MC_DEBUG=info
# A slurmctld alone shares no slurmd cgroup with another test's cluster
# (lib.sh's reason for one cluster at a time) and takes free ports: its
# own lock, so a long run does not hold the other tests back.
: "${MC_LOCK_FILE:=/tmp/memcore-test-oracle.lock}"
. "$(dirname "$0")/lib.sh"

N=${MC_ORACLE_N:-200}
SEED=${MC_ORACLE_SEED:-41}
[ "$SEED" = random ] && SEED=$(( $(date +%s) % 100000 ))
SHRINK=${MC_ORACLE_SHRINK:-1}
[[ $N =~ ^[0-9]+$ && $SEED =~ ^[0-9]+$ ]] || mc_die "MC_ORACLE_N=$N, MC_ORACLE_SEED=$SEED: each a number"
command -v jq >/dev/null || mc_die "missing jq (make deps)"

# --- node shapes and partitions ---------------------------------------------
# shape NAME XML TYPE [TPC]: the slurm.conf words of a node of that machine
declare -A SHAPE TPC_OF GPUS_OF SOCKETS_OF CPS_OF
shape() {
	local a s tpc
	# (exit 1 is a rule the machine fails: the facts are there)
	a=$("$MEMCORE_BUILD/memcore" audit --json --topology "$MC_TOP/tests/data/$2.xml")
	jq -e .cores >/dev/null <<<"$a" || mc_die "memcore audit --topology $2.xml gave no facts"
	s=$(jq '.numa_nodes as $n | if .cores % $n == 0 then $n else 1 end' <<<"$a")
	tpc=${4:-$(jq '.pus / .cores | floor' <<<"$a")}
	SHAPE[$1]="Sockets=$s CoresPerSocket=$(($(jq .cores <<<"$a") / s)) ThreadsPerCore=$tpc RealMemory=$(jq '.host_ram_bytes / 1048576 | floor' <<<"$a") Gres=gpu:$3:$(jq '.gpus | length' <<<"$a")"
	TPC_OF[$1]=$tpc SOCKETS_OF[$1]=$s CPS_OF[$1]=$(($(jq .cores <<<"$a") / s))
	GPUS_OF[$1]=$(jq '.gpus | length' <<<"$a")
}
shape t4 aws-g4dn-metal-2xxeon8259cl-8xt4 t4
shape v100 ibm-ac922-lassen-2xpower9-4xv100 v100
shape h200 lenovo-sd665nv3-2xepyc9555-nps4-4xh200 h200
shape a100 juwels-booster-2xepyc7402-nps4-4xa100-pcionly a100 1
SHAPES=(t4 v100 h200 a100)
# The partition settings of corpus/table.txt's part rows.
declare -A SETTING
while IFS='|' read -r name set _; do
	name=${name#part}; name=${name// /}; set=$(xargs <<<"$set")
	SETTING[$name]=$set
done < <(grep '^part ' "$MC_TOP/tests/integration/corpus/table.txt")
SETTINGS=("${!SETTING[@]}")
[ ${#SETTINGS[@]} -ge 8 ] || mc_die "corpus/table.txt: ${#SETTINGS[@]} part rows, not 8"

eval "_mc_write_configs_plain() $(declare -f _mc_write_configs | tail -n +2)"
_mc_write_configs() {
	local sh st
	_mc_write_configs_plain
	{
		grep -v -e '^NodeName=' -e '^PartitionName=' -e '^DebugFlags=' "$SLURM_CONF"
		# Each partition its own three nodes: a batch of jobs in
		# distinct partitions is allocated side by side, no job
		# taking another's cores.
		for sh in "${SHAPES[@]}"; do
			for st in "${SETTINGS[@]}"; do
				echo "NodeName=$sh$st[1-3] NodeAddr=127.0.0.1 ${SHAPE[$sh]} State=CLOUD"
				echo "PartitionName=${sh}_$st Nodes=$sh$st[1-3] MaxTime=INFINITE State=UP ${SETTING[$st]}"
			done
		done
		echo "PrivateData=cloud"
		echo "SuspendProgram=/bin/true"; echo "ResumeProgram=/bin/true"
		echo "SuspendTime=-1"; echo "ResumeTimeout=36000"
		echo "CliFilterPlugins=cli_filter/lua"
	} >"$SLURM_CONF.o" && mv "$SLURM_CONF.o" "$SLURM_CONF"
	{
		echo "AutoDetect=off"
		# Each GPU bound to a socket (Cores=), as AutoDetect=nvml
		# binds them: GPU i to socket i x S / G.
		local i sk cps
		for sh in "${SHAPES[@]}"; do
			sk=${SOCKETS_OF[$sh]} cps=${CPS_OF[$sh]}
			for st in "${SETTINGS[@]}"; do
				for ((i = 0; i < GPUS_OF[$sh]; i++)); do
					c0=$((i * sk / GPUS_OF[$sh] * cps))
					echo "NodeName=$sh$st[1-3] Name=gpu Type=$sh File=$MC_GPU_DEV_DIR/gpu$i Cores=$c0-$((c0 + cps - 1))"
				done
			done
		done
	} >"$MC_CONF_DIR/gres.conf"
	# The options as Slurm's cli_filter/lua hands them to memcore's
	# filter (contrib/cli_filter.lua), written where the test reads them.
	cat >"$MC_CONF_DIR/cli_filter.lua" <<EOF
function slurm_cli_setup_defaults(options, early) return slurm.SUCCESS end
function slurm_cli_pre_submit(options, offset)
	local f = io.open("$MC_WORK/opts.json", "w")
	f:write(slurm.json_cli_options(options)); f:close()
	return slurm.SUCCESS
end
function slurm_cli_post_submit(offset, jobid, stepid) return slurm.SUCCESS end
EOF
}
_mc_start_nodes() { :; }	# a slurmctld alone
MC_START_TIMEOUT=120
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
echo "GpuTypeMemory=t4:16G,v100:16G,h200:141G,a100:40G" >"$CONF"

# --- the generator ------------------------------------------------------------
# pick WORD...: one of the words into P (bash's RANDOM, seeded: the same
# seed draws the same requests; no subshell, which would not advance it).
pick() { local a=("$@"); P=${a[RANDOM % ${#a[@]}]}; }
chance() { [ $((RANDOM % 100)) -lt "$1" ]; }
# gen: sets PART and OPTS (an array of sbatch options) for one request.
gen() {
	local sh st k type=
	pick "${SHAPES[@]}"; sh=$P
	pick "${SETTINGS[@]}"; st=$P
	PART=${sh}_$st OPTS=()
	chance 20 && type=$sh:
	pick n0 n0 n1 n1 n1 n2 n12; case $P in
	n1) OPTS+=(-N1) ;; n2) OPTS+=(-N2) ;; n12) OPTS+=(-N1-2) ;;
	esac
	pick none none n n tpn; case $P in
	n) pick 1 2 3 4 6 8 12 16; OPTS+=(-n"$P") ;;
	tpn) pick 1 2 4 8; OPTS+=(--ntasks-per-node="$P") ;;
	esac
	pick none c c cpg; case $P in
	c) pick 1 2 3 4 6 8 12 24; OPTS+=(-c"$P") ;;
	cpg) pick 1 2 4 6 8 12 16; OPTS+=(--cpus-per-gpu="$P") ;;
	esac
	pick 1 1 2 2 4 4 8; k=$P
	[ "$k" -gt "${GPUS_OF[$sh]}" ] && chance 70 && k=${GPUS_OF[$sh]}
	pick gpn gpn gres gpus gpt gps; case $P in
	gpn) OPTS+=(--gpus-per-node="$type$k") ;;
	gres) OPTS+=(--gres=gpu:"$type$k") ;;
	gpus) OPTS+=(--gpus="$type$k") ;;
	gpt) pick 1 1 2; OPTS+=(--gpus-per-task="$P")
	     # sbatch: --gpus-per-task needs -n (or --ntasks-per-node)
	     [[ " ${OPTS[*]} " = *" -n"* ]] || { pick 2 4 6 8 12; OPTS+=(-n"$P"); } ;;
	# (--gpus-per-socket needs --sockets-per-node; sbatch 22.05 has no
	# --tres-per-node)
	gps) pick 1 2; OPTS+=(--gpus-per-socket="$P"); pick 1 2; OPTS+=(--sockets-per-node="$P") ;;
	esac
	chance 10 && { pick 1 2; OPTS+=(--ntasks-per-gpu="$P"); }
	pick none none mem mem mpg mpc zero; case $P in
	mem) pick 16 64 100 150 200; OPTS+=(--mem="$P"G) ;;
	mpg) pick 8 20 24 40; OPTS+=(--mem-per-gpu="$P"G) ;;
	mpc) pick 1000 2000 3000 4G; OPTS+=(--mem-per-cpu="$P") ;;
	zero) pick --mem --mem-per-gpu --mem-per-cpu; OPTS+=("$P"=0) ;;
	esac
	pick none none none none none excl user; case $P in
	excl) OPTS+=(--exclusive) ;; user) OPTS+=(--exclusive=user) ;;
	esac
	pick none none none none tpc1 tpc2 nomt cb; case $P in
	tpc1) OPTS+=(--threads-per-core=1) ;; tpc2) OPTS+=(--threads-per-core=2) ;;
	nomt) OPTS+=(--hint=nomultithread) ;; cb) OPTS+=(--hint=compute_bound) ;;
	esac
	chance 8 && { pick 8 16 48; OPTS+=(--mincpus="$P"); }
	chance 5 && { pick 4 8; OPTS+=(--cores-per-socket="$P"); }
	return 0
}

# --- one request against Slurm and memcore -------------------------------------
# cpu_count "0-3,48-51": CPUs in a Slurm CPU_IDs list.
cpu_count() {
	awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n }' <<<"$1"
}
# gres_gpus "gpu:t4:8(IDX:0-7)": its GPUs (0 for none).
gres_gpus() { sed -n 's/.*gpu[^,(]*:\([0-9][0-9]*\)(.*/\1/p' <<<"$1" | awk '{ n += $1 } END { print n + 0 }'; }

# submit PART OPTS...: sbatch, then memcore's prediction from the options
# Slurm's cli_filter handed over; sets SUB_ID (empty: Slurm refused it,
# R and WHY say so) and SUB_PRED.
submit() {
	local part=$1
	shift
	SUB_ID= SUB_PRED=
	rm -f "$MC_WORK/opts.json"
	SUB_ID=$(sbatch --parsable -p "$part" -o /dev/null "$@" --wrap true 2>"$MC_WORK/sbatch.err")
	if [ -z "$SUB_ID" ]; then
		R=slurm-refused WHY=$(grep -m1 . "$MC_WORK/sbatch.err"); return
	fi
	[ -s "$MC_WORK/opts.json" ] || mc_die "the test's cli_filter wrote no options for: sbatch -p $part $*"
	SUB_PRED=$("$MEMCORE_BUILD/memcore" check --config "$CONF" --partition "$part" \
		--slurm-options "$(cat "$MC_WORK/opts.json")" --slurm-command sbatch --json 2>"$MC_WORK/check.err")
}
# settle: wait (5 s at most) until no job waits for the scheduler (a
# job pending for another reason stays so: MaxMemPerLimit,
# PartitionConfig).
settle() {
	local tries
	for ((tries = 0; tries < 250; tries++)); do
		squeue -h -t PD -o %r | grep -qx 'None\|Priority\|Resources' || return 0
		sleep 0.02
	done
}
# cancel_all: every job cancelled and gone.
cancel_all() {
	local tries
	scancel --user=root 2>/dev/null
	for ((tries = 0; tries < 600; tries++)); do
		[ -z "$(squeue -h -o %i)" ] && return 0
		sleep 0.05
	done
	mc_die "jobs not gone 30 s after scancel: $(squeue)"
}
# judge ID PART PRED: sets R (agree | disagree | pending | excluded |
# let-through) and WHY (the figures compared).
judge() {
	local id=$1 part=$2 pred=$3 out g st line ok=1 why=
	out=$(scontrol -d show job "$id" 2>/dev/null)
	st=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$out")
	if [ "$st" = PENDING ]; then
		R=pending WHY=$(grep -o 'Reason=[^ ]*' <<<"$out"); return
	fi
	# one jq: the first shape's grant, the placement line, the let-through
	local p_core p_mem p_gpu p_fewest p_tasks tpc place let
	read -r p_core p_gpu p_tasks p_mem p_fewest place let < <(jq -r '[(.shapes[0].grant // {}) |
		(.cores, .gpus, .tasks, (if .mem_bytes then .mem_bytes / 1048576 | floor else null end), .cores_fewest)] +
		[(if $p.placement then "yes" else "no" end), (if $p.let_through then "yes" else "no" end)] |
		map(if . == null then "-" else tostring end) | join(" ")' --argjson p "${pred:-null}" <<<"${pred:-null}" 2>/dev/null)
	if [ "${p_core:--}" = - ]; then
		R=excluded WHY="memcore: $(jq -r '.explanation[0] // empty' <<<"$pred" 2>/dev/null)$(head -c 200 "$MC_WORK/check.err")"; return
	fi
	# Slurm allocates whole cores (CR_Core_Memory): its CPU_IDs are every
	# thread of them, whatever --threads-per-core or --hint leave usable;
	# the cores are compared.
	tpc=${TPC_OF[${part%%_*}]}
	[ "$place" = yes ] || place=
	local m_core=0 m_mem=0 m_gpu=0 c mem gp n_tasks n_nodes
	while read -r line; do
		c=$(cpu_count "$(sed -n 's/.*CPU_IDs=\([^ ]*\).*/\1/p' <<<"$line")")
		c=$(((c + tpc - 1) / tpc))
		mem=$(sed -n 's/.* Mem=\([0-9]*\).*/\1/p' <<<"$line")
		gp=$(gres_gpus "$(sed -n 's/.*GRES=\([^ ]*\).*/\1/p' <<<"$line")")
		[ "$c" -gt "$m_core" ] && m_core=$c
		[ "${mem:-0}" -gt "$m_mem" ] && m_mem=$mem
		[ "$gp" -gt "$m_gpu" ] && m_gpu=$gp
		why+="${why:+; }$(sed -n 's/.*Nodes=\([^ ]*\).*/\1/p' <<<"$line"): $c cores ${mem}M $gp GPUs"
	done < <(grep '^ *Nodes=.* CPU_IDs=' <<<"$out")
	n_tasks=$(sed -n 's/.*NumTasks=\([0-9]*\).*/\1/p' <<<"$out")
	n_nodes=$(sed -n 's/.*NumNodes=\([0-9]*\).*/\1/p' <<<"$out")
	why="slurm: $why (NumNodes=$n_nodes NumTasks=$n_tasks); memcore: $p_core cores$([ "$p_fewest" -gt 0 ] && echo " (or as few as $p_fewest)") ${p_mem}M $p_gpu GPUs $p_tasks tasks a node${place:+ (placement: judged at its worst)}"
	# The prediction is the node that gets the most; where Slurm's
	# placement decides (a placement line: --gpus over -N, -n over -N)
	# memcore judges the most a node may get: Slurm's at most that.
	if [ -n "$place" ]; then
		[ "$m_gpu" -le "$p_gpu" ] && [ "$m_core" -le "$p_core" ] && [ "$m_mem" -le "$p_mem" ] || ok=0
	else
		[ "$m_gpu" = "$p_gpu" ] || ok=0
		if [ "$p_fewest" -gt 0 ]; then
			# Slurm decides between: a per-CPU memory with it
			[ "$m_core" -ge "$p_fewest" ] && [ "$m_core" -le "$p_core" ] || ok=0
			[ "$m_mem" -le "$p_mem" ] || ok=0
		else
			[ "$m_mem" = "$p_mem" ] || ok=0
			[ "$m_core" = "$p_core" ] || ok=0
		fi
	fi
	if [ $ok = 1 ]; then R=agree
	elif [ "$let" = yes ]; then R=let-through
	else R=disagree; fi
	WHY=$why
}

# ask PART OPTS...: one request alone: R and WHY.
ask() {
	local part=$1
	submit "$@"
	[ -n "$SUB_ID" ] || return 0
	settle
	judge "$SUB_ID" "$part" "$SUB_PRED"
	cancel_all
}

# shrink PART OPTS...: the smallest option list (one dropped at a time)
# that still disagrees, into SMALL.
shrink() {
	local part=$1 i changed=1 try
	shift
	SMALL=("$@")
	while [ $changed = 1 ] && [ ${#SMALL[@]} -gt 1 ]; do
		changed=0
		for ((i = 0; i < ${#SMALL[@]}; i++)); do
			try=("${SMALL[@]:0:i}" "${SMALL[@]:i+1}")
			ask "$part" "${try[@]}"
			if [ "$R" = disagree ]; then SMALL=("${try[@]}") changed=1; break; fi
		done
	done
	ask "$part" "${SMALL[@]}"
}

# --- the run --------------------------------------------------------------------
mc_log "oracle: $N requests, seed $SEED (MC_ORACLE_N, MC_ORACLE_SEED)"
RANDOM=$SEED
declare -A COUNT
DIS=()
t0=$SECONDS
# The known families (corpus/oracle_known.txt): NAME and ERE.
KNOWN_NAME=() KNOWN_ERE=()
while IFS='|' read -r name ere _; do
	KNOWN_NAME+=("$(xargs <<<"$name")") KNOWN_ERE+=("$(sed 's/^ *//; s/ *$//' <<<"$ere")")
done < <(grep -v -e '^#' -e '^ *$' "$MC_TOP/tests/integration/corpus/oracle_known.txt")
# known OPTS...: sets KNOWN to the family a disagreeing request is of.
known() {
	local i
	KNOWN=
	for i in "${!KNOWN_ERE[@]}"; do
		if grep -Eq -- "${KNOWN_ERE[i]}" <<<"$*"; then KNOWN=${KNOWN_NAME[i]}; return 0; fi
	done
	return 1
}
# note R: count it; a disagreement shrunk and kept.
note() {
	local r=$1 part=$2 full
	shift 2
	if [ "$R" = disagree ] && known -p "$part" "$@"; then
		R="known: $KNOWN"
		printf 'known (corpus/oracle_known.txt %s) #%s: sbatch -p %s %s: %s\n' "$KNOWN" "$r" "$part" "$*" "$WHY" >&2
	fi
	COUNT[$R]=$((${COUNT[$R]:-0} + 1))
	case $R in
	disagree)
		full="sbatch -p $part $*: $WHY"
		if [ "$SHRINK" = 1 ]; then
			shrink "$part" "$@"
			DIS+=("seed $SEED #$r: sbatch -p $part ${SMALL[*]}: $WHY (drawn as: $full)")
		else
			DIS+=("seed $SEED #$r: $full")
		fi
		printf 'DISAGREE %s\n' "${DIS[-1]}" >&2 ;;
	let-through) printf 'let through (not modelled) #%s: sbatch -p %s %s: %s\n' "$r" "$part" "$*" "$WHY" >&2 ;;
	*) [ -n "${MC_ORACLE_VERBOSE:-}" ] && printf '%s #%s: sbatch -p %s %s: %s\n' "$R" "$r" "$part" "$*" "$WHY" >&2 ;;
	esac
	return 0
}
# The rows of corpus/oracle.txt first, one at a time.
ROWS=0
while IFS='|' read -r name part opts _; do
	name=$(xargs <<<"$name") part=$(xargs <<<"$part")
	read -ra OPTS <<<"$opts"
	ask "$part" "${OPTS[@]}"
	ROWS=$((ROWS + 1))
	assert_eq agree "$R" "corpus/oracle.txt $name: sbatch -p $part ${OPTS[*]}: $WHY"
done < <(grep -v -e '^#' -e '^ *$' "$MC_TOP/tests/integration/corpus/oracle.txt")
[ "$ROWS" -ge 10 ] || mc_die "corpus/oracle.txt: $ROWS rows"

# Batches of requests in distinct partitions (so on distinct nodes):
# all submitted, settled, judged, cancelled. The requests are drawn
# first, in order, so a seed draws the same ones whatever the shrinking.
REQ_PART=() REQ_OPTS=()
if [ -n "${MC_ORACLE_REPLAY:-}" ]; then
	# "PARTITION OPTIONS..." a line (a run's DISAGREE lines, cut so)
	r=0
	while read -r PART rest; do
		[ -n "$PART" ] || continue
		r=$((r + 1)) REQ_PART[r]=$PART REQ_OPTS[r]=$rest
	done <"$MC_ORACLE_REPLAY"
	N=$r
	mc_log "oracle: replaying $N requests of $MC_ORACLE_REPLAY"
fi
for ((r = 1; r <= N; r++)); do
	[ -n "${REQ_PART[r]:-}" ] && continue
	gen
	printf -v 'REQ_OPTS[r]' '%q ' "${OPTS[@]}"
	REQ_PART[r]=$PART
done
r=1
while [ $r -le $N ]; do
	declare -A used=()
	B_R=() B_ID=() B_PRED=()
	while [ $r -le $N ] && [ -z "${used[${REQ_PART[r]}]:-}" ]; do
		used[${REQ_PART[r]}]=1
		eval "OPTS=(${REQ_OPTS[r]})"
		submit "${REQ_PART[r]}" "${OPTS[@]}"
		if [ -z "$SUB_ID" ]; then note "$r" "${REQ_PART[r]}" "${OPTS[@]}"
		else B_R+=("$r") B_ID+=("$SUB_ID") B_PRED+=("$SUB_PRED"); fi
		r=$((r + 1))
	done
	unset used
	settle
	RES_R=() RES_WHY=()
	for i in "${!B_R[@]}"; do
		judge "${B_ID[i]}" "${REQ_PART[${B_R[i]}]}" "${B_PRED[i]}"
		RES_R[i]=$R RES_WHY[i]=$WHY
	done
	cancel_all
	for i in "${!B_R[@]}"; do
		R=${RES_R[i]} WHY=${RES_WHY[i]}
		eval "OPTS=(${REQ_OPTS[${B_R[i]}]})"
		note "${B_R[i]}" "${REQ_PART[${B_R[i]}]}" "${OPTS[@]}"
	done
done
took=$((SECONDS - t0))
summary="oracle: $N requests, seed $SEED, ${took}s: $(for k in "${!COUNT[@]}"; do printf '%s %s, ' "$k" "${COUNT[$k]}"; done)"
mc_log "${summary%, }"
echo "${summary%, }" >"$MC_LOG_DIR/oracle.summary"
printf '%s\n' "${DIS[@]}" >"$MC_LOG_DIR/oracle.disagreements"
assert_eq 0 "${#DIS[@]}" "oracle: no disagreement outside the known families (corpus/oracle_known.txt) in $N requests (seed $SEED)$(printf '\n  %s' "${DIS[@]}")"
compared=$((${COUNT[agree]:-0} + ${COUNT[disagree]:-0}))
assert_eq true "$([ $((compared * 2)) -ge "$N" ] && echo true || echo false)" "oracle: at least half the requests were allocated and compared ($compared of $N)"
