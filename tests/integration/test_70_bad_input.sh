#!/bin/bash
# Bad input a user (or an admin's plugstack line) can give memcore through
# the real sbatch/srun/salloc, as one table: each row has the exact exit
# status and a piece of the message; after every row the node is IDLE,
# never DRAIN. Options and their MEMCORE_* variables are refused by the
# command before anything is queued (exit 255); what only slurmstepd sees
# (a faked _SLURM_SPANK_OPTION_* variable, a bad plugstack argument) refuses
# GPU steps at launch (exit 1) with the reason, while CPU-only steps run.
# Security rows: nothing a user sets lowers enforcement; as user nobody, a
# partition forged into the step's environment (a preloaded shim the test
# builds) does not choose the policy, and a malformed SLURM_SHARDS_ON_NODE
# is the user's error under OnError=allow too, and nothing on a CPU-only
# step.
. "$(dirname "$0")/lib.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
# A second partition whose memcore.conf line checks nothing (the forged
# partition rows below).
MC_SLURM_CONF_LINES="PartitionName=lax Nodes=$MC_NODE_NAME MaxTime=INFINITE State=UP"
mc_cluster_start
CONF=$MC_CONF_DIR/memcore.conf
PLUG="required $MEMCORE_BUILD/memcore.so config=$CONF"
policy() { { echo "TopologyFile=$TOPO"; printf '%s\n' "$@"; } >"$CONF"; }
mc_set_plugstack "$PLUG"
policy "AllowUserWarn=no"

# One GPU with enough RAM and cores: fits unless an option breaks it.
ONE=(-N1 -n1 --gpus=1 --mem=50G -c 6)
# 8 GPUs with 100G: short of RAM (190.04 GiB needed).
SHORT=(-N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=100G)
ROWS=0

# row EXIT NEEDLE CMD...: CMD exits EXIT, NEEDLE is in its stderr (or the
# output), nothing is left queued, the node is IDLE.
row() {
	local want=$1 needle=$2
	shift 2
	ROWS=$((ROWS + 1))
	mc_run "$@"
	assert_rc "$want" "row $ROWS: exit $want: $*"
	assert_contains "$MC_ERR$MC_OUT" "$needle" "row $ROWS: says '$needle'"
	assert_node_idle "row $ROWS: node IDLE"
}
# batch_row STATE NEEDLE SBATCH-ARGS...: the job ends in STATE with NEEDLE in
# its output file.
batch_row() {
	local want=$1 needle=$2 jid
	shift 2
	ROWS=$((ROWS + 1))
	jid=$(mc_sbatch "$@")
	assert_ne "" "$jid" "row $ROWS: sbatch $* queued"
	assert_eq "$want" "$(mc_wait_job "$jid")" "row $ROWS: sbatch $* ends $want"
	assert_file_contains "$(mc_job_out "$jid")" "$needle"
	assert_node_idle "row $ROWS: node IDLE"
}

# --- options: refused by the command, nothing queued -----------------------
row 255 "memcore: --dataloader-workers=: empty value" srun "${ONE[@]}" --dataloader-workers= true
row 255 "memcore: --dataloader-workers=-1:" srun "${ONE[@]}" --dataloader-workers=-1 true
row 255 "memcore: --dataloader-workers=99999999999: out of range" srun "${ONE[@]}" --dataloader-workers=99999999999 true
row 255 "memcore: --dataloader-workers=18446744073709551617: out of range" srun "${ONE[@]}" --dataloader-workers=18446744073709551617 true
row 255 "memcore: --dataloader-workers=abc:" srun "${ONE[@]}" --dataloader-workers=abc true
row 255 "memcore: --dataloader-workers=2x: not a whole number" srun "${ONE[@]}" --dataloader-workers=2x true
row 255 "given twice with different values" srun "${ONE[@]}" --dataloader-workers=1 --dataloader-workers=2 true
# Several DataLoaders as a sum (8+2): a bad form is refused the same way.
row 255 "memcore: --dataloader-workers=8+: an empty part" srun "${ONE[@]}" --dataloader-workers=8+ true
row 255 "memcore: --dataloader-workers=a+1: 'a': not a number" sbatch "${ONE[@]}" --dataloader-workers=a+1 --wrap true
row 255 "more than 8 DataLoaders" salloc "${ONE[@]}" --dataloader-workers=1+1+1+1+1+1+1+1+1 true
row 255 "memcore: --model-params=7Q: unknown suffix 'Q'" srun "${ONE[@]}" --model-params=7Q true
row 255 "memcore: --model-params=-7B:" srun "${ONE[@]}" --model-params=-7B true
row 255 "memcore: --zero-stage=4: expected a ZeRO stage 0, 1, 2 or 3" srun "${ONE[@]}" --zero-stage=4 true
row 255 "memcore: --offload=everything: expected none, optimizer, all or params" srun "${ONE[@]}" --offload=everything true
row 255 "memcore: --memcore=loud:" srun "${ONE[@]}" --memcore=loud true
row 255 "memcore: --memcore=off:" srun "${ONE[@]}" --memcore=off true
row 255 "memcore: --zero-stage=4:" sbatch "${ONE[@]}" --zero-stage=4 --wrap true
row 255 "memcore: --offload=everything:" sbatch "${ONE[@]}" --offload=everything --wrap true
row 255 "memcore: --memcore=loud:" salloc "${ONE[@]}" --memcore=loud true
# The same value through the environment: a bad variable stops the command
# too, from init_post_opt (exit 1: "Plugin stack post-option processing
# failed"), before anything is queued.
row 1 "memcore: MEMCORE_DATALOADER_WORKERS=abc:" env MEMCORE_DATALOADER_WORKERS=abc srun "${ONE[@]}" true
row 1 "memcore: MEMCORE_ZERO_STAGE=4:" env MEMCORE_ZERO_STAGE=4 sbatch "${ONE[@]}" --wrap true
row 1 "memcore: MEMCORE_OFFLOAD=everything:" env MEMCORE_OFFLOAD=everything srun "${ONE[@]}" true
row 1 "memcore: MEMCORE_DATALOADER_WORKERS=8++2: an empty part" env MEMCORE_DATALOADER_WORKERS=8++2 srun "${ONE[@]}" true
# An empty variable is an unset one: the step runs with the policy's default.
mc_run env MEMCORE_DATALOADER_WORKERS= MEMCORE_OFFLOAD= srun "${ONE[@]}" true
assert_rc 0 "empty MEMCORE_* variables count as unset"
row 1 "memcore: MEMCORE_MODE=off:" env MEMCORE_MODE=off srun "${ONE[@]}" true
# Variable and option agree, or the option wins: the step runs.
row 0 "ran" env MEMCORE_DATALOADER_WORKERS=2 srun "${ONE[@]}" --dataloader-workers=2 echo ran
row 0 "ran" env MEMCORE_DATALOADER_WORKERS=abc srun "${ONE[@]}" --dataloader-workers=2 echo ran
# A long value is read whole, never taken as unset (slurmstepd's fixed
# buffer once dropped it: a long bogus MEMCORE_MODE ran, a long
# MEMCORE_DATALOADER_WORKERS fell back to the default). Over 255
# characters it is refused, naming the variable: by srun from its own
# environment, and by slurmstepd when it reaches only the job's
# (srun --export=ALL,VAR=... bypasses srun's own check).
LONG_MODE=$(printf '0%.0s' $(seq 300))bogus
LONG_WORKERS=$(printf '0%.0s' $(seq 300))1
OK_WORKERS=$(printf '0%.0s' $(seq 254))1
row 1 "memcore: MEMCORE_MODE: a value of 305 characters is too long (at most 255)" env MEMCORE_MODE=$LONG_MODE srun "${ONE[@]}" true
row 1 "MEMCORE_MODE: a value of 305 characters is too long (at most 255)" srun --export=ALL,MEMCORE_MODE=$LONG_MODE "${ONE[@]}" true
assert_contains "$MC_ERR" "memcore: step " "slurmstepd's refusal names the step"
row 1 "MEMCORE_DATALOADER_WORKERS: a value of 301 characters is too long" srun --export=ALL,MEMCORE_DATALOADER_WORKERS=$LONG_WORKERS "${ONE[@]}" true
row 1 "memcore: MEMCORE_DATALOADER_WORKERS: a value of 301 characters is too long" env MEMCORE_DATALOADER_WORKERS=$LONG_WORKERS sbatch "${ONE[@]}" --wrap true
# 255 characters: read whole by slurmstepd and used (1 worker, not the
# default 2: MEMCORE_DATALOADER_WORKERS is exported to the task as 1).
row 0 "workers=1" srun --export=ALL,MEMCORE_DATALOADER_WORKERS=$OK_WORKERS "${ONE[@]}" bash -c 'echo workers=$MEMCORE_DATALOADER_WORKERS'
# Options that can never go together (--offload without the ZeRO stage it
# needs, or without --model-params): refused in init_post_opt once all
# options and variables are known, before anything is queued.
row 1 "memcore: --offload=all (parameter offload) needs --zero-stage=3" sbatch --gpus=1 --mem=30G -c 3 --offload=all --wrap true
row 1 "memcore: --offload=all (parameter offload) needs --zero-stage=3" srun --gpus=1 --mem=30G -c 3 --offload=all true
row 1 "memcore: --offload=all (parameter offload) needs --zero-stage=3" salloc --gpus=1 --mem=30G -c 3 --offload=all true
row 1 "--zero-stage=3, not 1 or 2" srun "${ONE[@]}" --model-params=7B --zero-stage=2 --offload=all true
row 1 "add --zero-stage, or drop --offload (from the environment: MEMCORE_OFFLOAD)" env MEMCORE_OFFLOAD=optimizer sbatch "${ONE[@]}" --model-params=7B --wrap true
row 1 "memcore: --offload=optimizer needs --model-params" sbatch "${ONE[@]}" --zero-stage=2 --offload=optimizer --wrap true
assert_eq "" "$(squeue -h -o %i)" "nothing queued after the refused options"

# --- refused at launch: the verdict names the reason -----------------------
row 1 "more than MaxDataloaderWorkers=64" srun "${ONE[@]}" --dataloader-workers=1024 true
row 1 "--dataloader-workers=65: more than MaxDataloaderWorkers=64" srun "${ONE[@]}" --dataloader-workers=60+5 true

# --- security: nothing a user sets lowers enforcement ----------------------
# --memcore=warn where AllowUserWarn=no: refused, and told so.
row 1 "AllowUserWarn=no" srun "${SHORT[@]}" --memcore=warn true
row 1 "AllowUserWarn=no" env MEMCORE_MODE=warn srun "${SHORT[@]}" true
# Slurm 22.05 hands options to slurmstepd as _SLURM_SPANK_OPTION_<plugin>_
# <option> variables in the job's environment (spank_get_remote_options_env),
# so a user can export one instead of giving the option: it is still only an
# option (AllowUserWarn=no holds), and a bad value is refused at launch.
row 1 "AllowUserWarn=no" env _SLURM_SPANK_OPTION_memcore_memcore=warn srun "${SHORT[@]}" true
row 1 "memcore: step" env _SLURM_SPANK_OPTION_memcore_dataloader_workers=abc srun "${ONE[@]}" true
assert_contains "$MC_ERR" "--dataloader-workers=abc" "a faked option's bad value is named"
row 1 "out of range" env _SLURM_SPANK_OPTION_memcore_dataloader_workers=99999999999 srun "${ONE[@]}" true
# Slurm's own GPU variables exported by the user do not change the GPUs
# memcore counts: Slurm sets them for GPU steps; a batch step reads only
# SLURM_JOB_GPUS (an exported SLURM_STEP_GPUS once made a count mismatch
# that OnError=allow ran unchecked).
row 1 "190.04 GiB needed" env SLURM_GPUS_ON_NODE=0 srun "${SHORT[@]}" true
row 1 "190.04 GiB needed" env SLURM_STEP_GPUS=0 srun "${SHORT[@]}" true
policy "AllowUserWarn=no" "OnError=allow"
export SLURM_STEP_GPUS=0
batch_row FAILED "190.04 GiB needed" "${SHORT[@]}" --wrap "echo batch-ran"
unset SLURM_STEP_GPUS
batch_row FAILED "190.04 GiB needed" --export=ALL,SLURM_GPUS_ON_NODE=1,SLURM_JOB_GPUS=0 "${SHORT[@]}" --wrap "echo batch-ran"
policy "AllowUserWarn=no"
# A CPU-only step with junk in Slurm's GPU variables is left alone.
row 0 "cpu-ran" env SLURM_GPUS_ON_NODE=abc SLURM_STEP_GPUS=junk srun -N1 -n1 --mem=1G echo cpu-ran

# --- the job's environment is the user's, as user nobody -------------------
# The partition picks memcore.conf's PartitionName= line, so it is slurmd's
# (the job prolog's record, mc_jobview.h), never the step's
# SLURM_JOB_PARTITION: srun overwrites an exported one and one given with
# --export, but a preloaded shim that rewrites srun's setenv() reaches the
# step (verified on 22.05). The prolog runs only when slurmd started with
# memcore in its plugstack: slurmd is restarted with the line. A malformed
# SLURM_SHARDS_ON_NODE (Slurm writes a count or nothing) is the user's
# error under every OnError; on a CPU-only step it is nothing at all.
U=$MC_WORK/u
mkdir -p "$U" && chmod 1777 "$U"
nobody_row() { # EXIT NEEDLE CMD...: as row, run by user nobody in $U
	local want=$1 needle=$2
	shift 2
	row "$want" "$needle" runuser -u nobody -- env -C "$U" "$@"
}
cat >"$U/shim.c" <<'EOF_SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
/* srun sets the step's SLURM_JOB_PARTITION with setenv(): forge it. */
int setenv(const char *n, const char *v, int o)
{
	static int (*real)(const char *, const char *, int);
	const char *f = getenv("SHIM_PARTITION");

	if (!real)
		real = (int (*)(const char *, const char *, int))
			dlsym(RTLD_NEXT, "setenv");
	if (n && f && !strcmp(n, "SLURM_JOB_PARTITION"))
		v = f;
	return real(n, v, o);
}
EOF_SHIM
gcc -shared -fPIC -o "$U/shim.so" "$U/shim.c" -ldl || mc_die "cannot build the shim"
chmod 0755 "$U/shim.so"
id nobody >/dev/null 2>&1 || mc_die "no user nobody"
mc_set_plugstack "$PLUG cache=$MC_WORK/state/d/memcore-node-facts"
mc_restart_slurmd || mc_die "slurmd did not come back"
policy "AllowUserWarn=no" "PartitionName=lax Mode=off"
SHIM=(env LD_PRELOAD=$U/shim.so)
# Control: the shim reaches the step's environment, and -p lax is Mode=off.
nobody_row 0 "step-partition=lax" "${SHIM[@]}" SHIM_PARTITION=lax srun "${ONE[@]}" bash -c 'echo step-partition=$SLURM_JOB_PARTITION'
nobody_row 0 "lax-ran" srun -p lax "${SHORT[@]}" echo lax-ran
# The forged partition does not choose the policy: refused as in gpu.
nobody_row 1 "190.04 GiB needed" "${SHIM[@]}" SHIM_PARTITION=lax srun "${SHORT[@]}" echo forged-ran
assert_not_contains "$MC_OUT" "forged-ran" "a step with a forged partition never ran"
jid=$(sed -n 's/.*step \([0-9]*\)\.0 on.*/\1/p' <<<"$MC_ERR" | head -n1)
rec=$MC_WORK/state/d/memcore-job-$jid
for ((i = 0; i < 50; i++)); do [ -e "$rec" ] || break; sleep 0.1; done
assert_eq "" "$(ls "$rec" 2>/dev/null)" "job $jid's record is gone with the job (epilog)"
nobody_row 1 "190.04 GiB needed" env SLURM_JOB_PARTITION=lax srun "${SHORT[@]}" true
nobody_row 1 "190.04 GiB needed" srun --export=ALL,SLURM_JOB_PARTITION=lax "${SHORT[@]}" true
policy "AllowUserWarn=no" "PartitionName=lax Mode=off" "OnError=allow"
# An over-long forged partition is not read at all: no set-up error that
# OnError=allow would run unchecked.
LONG_PART=$(printf 'p%.0s' $(seq 200))
nobody_row 1 "190.04 GiB needed" "${SHIM[@]}" SHIM_PARTITION=$LONG_PART srun "${SHORT[@]}" true
# A malformed shard count on a GPU step: the user's, refused under
# OnError=allow too, and said to be the job's, not the administrator's.
nobody_row 1 "SLURM_SHARDS_ON_NODE=xx in the job's environment" env SLURM_SHARDS_ON_NODE=xx srun "${ONE[@]}" echo shard-ran
assert_contains "$MC_ERR" "set by the job: unset it" "OnError=allow: the malformed shard count is the job's"
assert_not_contains "$MC_OUT" "shard-ran" "OnError=allow: the step never ran unchecked"
# A well-formed count on a GPU step of a node without shards: Slurm never
# set it, so it is the job's too, not a set-up error OnError=allow runs.
nobody_row 1 "SLURM_SHARDS_ON_NODE=2 in the job's environment, but this node has no shards" env SLURM_SHARDS_ON_NODE=2 srun "${ONE[@]}" echo shard-ran
assert_contains "$MC_ERR" "the job did: unset it" "OnError=allow: the hand-set shard count is the job's"
assert_not_contains "$MC_OUT" "shard-ran" "OnError=allow: ... and the step never ran unchecked"
policy "AllowUserWarn=no" "PartitionName=lax Mode=off"
nobody_row 1 "SLURM_SHARDS_ON_NODE=xx in the job's environment" env SLURM_SHARDS_ON_NODE=xx srun "${ONE[@]}" true
assert_not_contains "$MC_ERR" "administrator" "the default refusal blames nobody's set-up"
# A CPU-only step with a hand-set shard count runs untouched.
nobody_row 0 "cpu-ran" env SLURM_SHARDS_ON_NODE=xx srun -N1 -n1 --mem=1G echo cpu-ran
nobody_row 0 "cpu-ran" env SLURM_SHARDS_ON_NODE=2 srun -N1 -n1 --mem=1G echo cpu-ran
assert_not_contains "$MC_ERR" "memcore" "... and memcore says nothing about it"
mc_set_plugstack "$PLUG"
policy "AllowUserWarn=no"

# --- plugstack arguments: GPU steps refused with the reason, CPU steps run -
plug_row() { # PLUGSTACK-LINE NEEDLE
	mc_set_plugstack "$1"
	row 1 "$2" srun "${ONE[@]}" true
	assert_contains "$MC_ERR" "GPU steps cannot start until the administrator fixes it" "plugstack '$1': says whose to fix"
	row 0 "cpu-ran" srun -N1 -n1 --mem=1G echo cpu-ran
}
plug_row "$PLUG bogus=1" "plugstack.conf: bogus=1: unknown key"
plug_row "$PLUG mode" "plugstack.conf: 'mode': expected key=value"
plug_row "$PLUG ramperworker=4Q" "plugstack.conf: ramperworker=4Q: unknown size suffix 'Q'"
plug_row "required $MEMCORE_BUILD/memcore.so config=" "config=: missing value"
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$MC_WORK/none.conf"
row 1 "$MC_WORK/none.conf: No such file or directory" srun "${ONE[@]}" true
row 0 "cpu-ran" srun -N1 -n1 --mem=1G echo cpu-ran
mc_set_plugstack "$PLUG"
row 0 "ran" srun "${ONE[@]}" echo ran

mc_log "$ROWS rows"
[ "$ROWS" -ge 40 ] || assert_eq ">=40" "$ROWS" "rows in the table"
assert_eq "" "$(squeue -h -o %i)" "nothing left queued"
assert_not_contains "$(scontrol show node)" "DRAIN" "the node was never drained"
