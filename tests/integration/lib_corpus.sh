# shellcheck shell=bash
# tests/integration/lib_corpus.sh - the submit-vs-launch differential of a
# request corpus, shared by test_57_corpus.sh (three nodes) and
# test_58_corpus_forms.sh (the single node, in the guests too).
#
# Source after lib.sh or lib_multinode.sh, once the cluster runs. The test
# sets SLURM_VER, calls mc_corpus_login (the login host, and NOFILTER, how
# the launch side submits), and defines mc_corpus_targets INDEX: the launches
# of a request, words "PARTITION:NODE" (NODE empty: Slurm chooses). Then:
#     mc_corpus_read FILE; mc_corpus_submit; mc_corpus_launch; mc_corpus_compare
# and assert on CASES, DIS, LETS, BROKEN, SKIPPED. Every case counts: no
# switch turns a family of cases off when a feature seems absent.
#
# Corpus lines: NAME | PARTITION | NODES | SBATCH OPTIONS | TAGS, where
# PARTITION "-" is no -p and a tag min=VERSION marks an option of that
# Slurm release and later. The job's environment: a tag env=NAME=VALUE
# (one per variable) is set in sbatch's environment on both sides, and a
# tag file=NAME=VALUE writes an --export-file (NUL-separated, as sbatch
# reads it) whose path replaces @FILE@ in the options. A tag nosrun runs
# the batch step alone (memcore judges it with the job's GPUs): from
# 24.05 an srun inside a job of --ntasks-per-gpu and -c dies of
# "SLURM_TRES_PER_TASK is mutually exclusive with --ntasks-per-gpu"
# (snakemake-executor-plugin-slurm#342, Slurm 24.05.3; seen on 24.11.5). A case the running sbatch does not know (its
# min= is newer, or sbatch says "unrecognized option") is skipped with the
# Slurm version: never counted, never agreement.

# The launch side reads each job's state once the queue is empty: slurmctld
# must still hold the first job then. Its whole wait ran past the default
# MinJobAge of 300 s under make check's load (test_61, 379 s) and the
# early jobs were gone ("broken()" though they ran). Before the cluster
# starts (every test sources this first).
MC_MIN_JOB_AGE=3600

# mc_corpus_login POLICY: the login host, once the cluster runs: its
# memcore.conf (POLICY, the file's lines) in LOGIN_CONF, the cli_filter
# calling memcore with it, the shape cache in the work directory, and
# NOFILTER, the cluster's slurm.conf without CliFilterPlugins (how the
# launch side submits).
mc_corpus_login() {
	LOGIN_CONF=$MC_CONF_DIR/memcore-login.conf
	printf '%s\n' "$1" >"$LOGIN_CONF"
	mc_cli_filter_install "$MC_CONF_DIR" "$LOGIN_CONF"
	export MEMCORE_CACHE_DIR=$MC_WORK/shape-cache
	NOFILTER=$MC_CONF_DIR/slurm-nofilter.conf
	grep -v '^CliFilterPlugins=' "$SLURM_CONF" >"$NOFILTER"
}

mc_corpus_ver_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }
_mc_corpus_part_opt() { [ "$1" = - ] || printf -- '-p\n%s\n' "$1"; }
# INDEX -> o (the options, @FILE@ replaced) and e (env NAME=VALUE...)
_mc_corpus_case() {
	local t f=$MC_WORK/corpus-$1.env
	e=(env)
	: >"$f"
	for t in ${TAGS[$1]}; do
		case $t in
		env=*) e+=("${t#env=}") ;;
		file=*) printf '%s\0' "${t#file=}" >>"$f" ;;
		esac
	done
	read -r -a o <<<"${OPTS[$1]//@FILE@/$f}"
}

# FILE -> NAMES PARTS WHERE OPTS TAGS, N
mc_corpus_read() {
	local name part where opts tags
	NAMES=() PARTS=() WHERE=() OPTS=() TAGS=()
	while IFS='|' read -r name part where opts tags; do
		name=$(echo $name)
		case $name in ''|\#*) continue ;; esac
		NAMES+=("$name"); PARTS+=("$(echo $part)"); WHERE+=("$(echo $where)")
		OPTS+=("$(echo $opts)"); TAGS+=("$(echo $tags)")
	done <"$1"
	N=${#NAMES[@]}
}

# The submit side: sbatch -v --test-only through the cli_filter (nothing is
# queued). -> SUBMIT[i] (passed|refused), SUBMIT_WHY[i], SKIPPED
mc_corpus_submit() {
	local i t o e p LET
	unset SUBMIT SUBMIT_WHY SUBMIT_DOUBT LAUNCH LAUNCH_JOB LAUNCH_WHY	# a second corpus
	declare -gA SUBMIT SUBMIT_WHY SUBMIT_DOUBT LAUNCH LAUNCH_JOB LAUNCH_WHY
	SKIPPED=()
	for ((i = 0; i < N; i++)); do
		t=${TAGS[i]}
		if [[ $t == *min=* ]] && ! mc_corpus_ver_ge "$SLURM_VER" "${t#*min=}"; then
			SKIPPED+=("${NAMES[i]} (Slurm $SLURM_VER < ${t#*min=})"); continue
		fi
		_mc_corpus_case "$i"
		mapfile -t p < <(_mc_corpus_part_opt "${PARTS[i]}")
		mc_run "${e[@]}" sbatch -v --test-only "${p[@]}" "${o[@]}" --wrap true
		if [ "$MC_RC" != 0 ] && LET=$(printf '%s\n' "$MC_ERR" | grep -m1 'unrecognized option'); then
			SKIPPED+=("${NAMES[i]} (Slurm $SLURM_VER's sbatch does not know it: $LET)"); continue
		fi
		# the first node the submission doubts (memcore(8) REFUSAL AT
		# SUBMISSION): the launch side runs the job there too
		LET=$(printf '%s\n' "$MC_ERR" | sed -n 's/.* the launch refuses it on \([^:]*\): keep the job off .*/\1/p' | head -n1)
		[ -n "$LET" ] && SUBMIT_DOUBT[$i]=$(scontrol show hostnames "$LET" | head -n1)
		if [ "$MC_RC" = 0 ]; then
			SUBMIT[$i]=passed
			LET=$(printf '%s\n' "$MC_ERR" | grep -m1 -o 'memcore: .* cannot be judged: .*') &&
				SUBMIT_WHY[$i]=$LET
		else
			SUBMIT[$i]=refused
			SUBMIT_WHY[$i]=$(printf '%s\n' "$MC_ERR" | grep -m1 -e '^memcore: ' -e 'error' || printf '%s' "$MC_ERR" | head -n1)
		fi
	done
}

# The launch side: every case the submit side judged, each target (and
# the first node the submission doubts, pinned, when no target goes
# there), a batch job running `srun true` (sbatch without the filter), all
# submitted at once, then waited for. -> LAUNCH["i node"] (ran|refused|unplaceable|held(REASON)|broken(STATE)), LAUNCH_WHY
mc_corpus_launch() {
	local i o e p w tg part node out id key targets end busy stuck st srun_bin wrap
	# Absolute paths: a job whose --export leaves no PATH still runs its step.
	srun_bin=$(command -v srun)
	for ((i = 0; i < N; i++)); do
		[ -n "${SUBMIT[$i]:-}" ] || continue
		_mc_corpus_case "$i"
		read -r -a targets <<<"$(mc_corpus_targets "$i")"
		# A node the submission doubts, where the targets do not go:
		# pinned there, the launch says whether the doubt holds.
		if [ -n "${SUBMIT_DOUBT[$i]:-}" ] &&
		   [[ " ${targets[*]} " != *":${SUBMIT_DOUBT[$i]} "* ]]; then
			targets+=("${PARTS[i]}:${SUBMIT_DOUBT[$i]}")
		fi
		for tg in "${targets[@]}"; do
			part=${tg%%:*} node=${tg#*:}
			mapfile -t p < <(_mc_corpus_part_opt "$part")
			w=(); [ -n "$node" ] && w=(-w "$node")
			out=$MC_JOB_DIR/case$i-${node:-any}.out
			wrap="$srun_bin /bin/true && echo ran on \$(/bin/hostname)"
			[[ " ${TAGS[i]} " == *" nosrun "* ]] && wrap='echo ran on $(/bin/hostname)'
			id=$(cd "$MC_JOB_DIR" && SLURM_CONF=$NOFILTER "${e[@]}" timeout 60 sbatch --parsable "${p[@]}" "${w[@]}" \
				"${o[@]}" -J "c$i" -o "$out" --wrap "$wrap" 2>"$out.sbatch")
			key="$i ${node:-any}"
			if [ -n "$id" ]; then LAUNCH_JOB[$key]=${id%%;*}
			else LAUNCH[$key]=unplaceable; LAUNCH_WHY[$key]=$(head -n1 "$out.sbatch"); fi
		done
	done
	# Until the queue is empty; a job still pending when nothing has run
	# for 20 s will never start (e.g. resources no node has): a harness failure.
	# A job Slurm keeps pending for good (a partition limit such as
	# MaxMemPerNode: MaxMemPerLimit; 22.05's "sync loop not progressing"
	# hold: JobHeldAdmin) never starts: cancelled at once, its reason
	# kept (-> LAUNCH "held(REASON)": no launch ran it).
	end=$((SECONDS + ${MC_CORPUS_WAIT:-300})) busy=$SECONDS
	declare -gA LAUNCH_HELD=()
	while [ -n "$(squeue -h -t PD,R,CG,CF -o %i 2>/dev/null)" ] && [ $SECONDS -lt $end ]; do
		while read -r id why; do
			LAUNCH_HELD[$id]=$why; scancel "$id" 2>/dev/null
		done < <(squeue -h -t PD -o '%i %r' 2>/dev/null | grep -E ' (MaxMemPerLimit|JobHeldAdmin|PartitionConfig|[A-Za-z]*Limit)$')
		[ -n "$(squeue -h -t R,CG,CF -o %i 2>/dev/null)" ] && busy=$SECONDS
		# Nothing has run for 20 s: the first pending job (the one
		# the others wait behind, "Priority") will not start (on 22.05
		# e.g. --hint=nomultithread, "Nodes required for job are
		# DOWN, DRAINED or reserved"): held, cancelled; the rest go on.
		if [ $((SECONDS - busy)) -ge 20 ]; then
			read -r id why < <(squeue -h -t PD -S -p,i -o '%i %r' 2>/dev/null)
			[ -n "${id:-}" ] || break
			LAUNCH_HELD[$id]="never started: $why"; scancel "$id" 2>/dev/null
			mc_log "launch job $id never started: $why"; busy=$SECONDS
		fi
		sleep 0.5
	done
	# Still pending with nothing running for 20 s: Slurm will not start
	# it (e.g. behind a job it holds, on 22.05 "Nodes required for job
	# are DOWN, DRAINED or reserved"): held too, its reason printed.
	stuck=$(squeue -h -t R,CG,CF -o '%j %i %T %r' 2>/dev/null)
	assert_eq "" "$stuck" "no launch job still running after the wait"
	while read -r id why; do
		[ -n "$id" ] || continue
		LAUNCH_HELD[$id]="still pending: $why"; mc_log "launch job $id still pending: $why"
	done < <(squeue -h -t PD -o '%i %r' 2>/dev/null)
	[ -z "$(squeue -h -o %i)" ] || scancel $(squeue -h -o %i) 2>/dev/null
	for key in "${!LAUNCH_JOB[@]}"; do
		id=${LAUNCH_JOB[$key]} i=${key% *} node=${key#* }
		out=$MC_JOB_DIR/case$i-$node.out
		st=$(mc_job_state "$id")
		if [ -n "${LAUNCH_HELD[$id]:-}" ]; then
			LAUNCH[$key]="held(${LAUNCH_HELD[$id]})"
			LAUNCH_WHY[$key]="Slurm kept it pending: ${LAUNCH_HELD[$id]}"
		elif [ "$st" = COMPLETED ] && grep -q '^ran on ' "$out"; then LAUNCH[$key]=ran
		elif [ "$st" = FAILED ] && grep -q 'memcore: ' "$out"; then
			LAUNCH[$key]=refused; LAUNCH_WHY[$key]=$(grep -m1 'memcore: ' "$out")
		else LAUNCH[$key]="broken($st)"; LAUNCH_WHY[$key]=$(head -c 300 "$out" 2>/dev/null | tr '\n' ' ')
		fi
	done
}

# For every judged case: passed at submission exactly when a launch ran it
# and none was refused by memcore (Slurm, not memcore, picks the node: a
# job the launch refuses on one of the nodes Slurm may give it is refused
# at submission; a node Slurm never gives it, unplaceable or held, is
# Slurm's answer). Prints every agreement and disagreement.
# -> CASES DIS LETS BROKEN
mc_corpus_compare() {
	local i key ran launch want line s
	DIS=0 BROKEN=0 CASES=0 LETS=0
	for ((i = 0; i < N; i++)); do
		[ -n "${SUBMIT[$i]:-}" ] || continue
		CASES=$((CASES + 1))
		ran=0 launch=''
		for key in "${!LAUNCH[@]}"; do
			[ "${key% *}" = "$i" ] || continue
			launch+=" ${key#* }=${LAUNCH[$key]}"
			[ "${LAUNCH[$key]}" = ran ] && ran=$((ran | 1))
			[ "${LAUNCH[$key]}" = refused ] && ran=$((ran | 2))
			[[ ${LAUNCH[$key]} == broken* ]] && { BROKEN=$((BROKEN + 1))
				mc_log "HARNESS ${NAMES[i]}: launch on ${key#* }: ${LAUNCH[$key]}: ${LAUNCH_WHY[$key]}"; }
		done
		want=passed; [ $ran = 1 ] || want=refused
		line="${NAMES[i]} [${PARTS[i]}] ${OPTS[i]}"
		[ -n "${TAGS[i]}" ] && line+=" {${TAGS[i]}}"
		line+=": submit=${SUBMIT[$i]} launch:$launch"
		if [ "${SUBMIT[$i]}" = "$want" ]; then
			printf 'agree: %s\n' "$line" >&2
			continue
		fi
		# Let through because some node of the partition cannot be
		# judged (never a refusal on the others' account), or because Slurm decides the job's cores only as
		# it allocates (--ntasks-per-gpu with -c, no -n): the
		# specified answer, counted and printed apart.
		if [[ ${SUBMIT_WHY[$i]:-} == *"cannot be judged"* ]]; then
			LETS=$((LETS + 1))
			printf 'LET THROUGH (cannot be judged at submission): %s\n    submit: %s\n' "$line" "${SUBMIT_WHY[$i]}" >&2
			continue
		fi
		DIS=$((DIS + 1)); printf 'DISAGREE: %s\n' "$line" >&2
		[ -n "${SUBMIT_WHY[$i]:-}" ] && printf '    submit: %s\n' "${SUBMIT_WHY[$i]}" >&2
		for key in "${!LAUNCH_WHY[@]}"; do
			[ "${key% *}" = "$i" ] && printf '    launch %s: %s\n' "${key#* }" "${LAUNCH_WHY[$key]}" >&2
		done
	done
	for s in "${SKIPPED[@]}"; do mc_log "skipped: $s"; done
}
