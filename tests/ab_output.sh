#!/bin/bash
# tests/ab_output.sh BASE_REV: does this tree's memcore print what BASE_REV's
# printed, byte for byte? For refactoring that must change no output.
#
# Builds BASE_REV's memcore in a temporary git worktree under /tmp and this
# tree's memcore, then runs both over every topology in tests/data/*.xml
# times a set of check, audit and plan option sets (taken from tests/cli),
# plus cases with the node described by memcore.conf, memcore's options
# and MEMCORE_* variables good and bad, the job's model and DeepSpeed files,
# a node-facts cache, memcore usage and keys, every command's option errors
# and help text and, where slurmctld is installed and this is root,
# --partition cases and memcore report (text, --json, --plot, --svg) against
# a private slurmctld (auth/none, loopback, its nodes DOWN: only its records
# matter; held jobs carry memcore's records). Each run's stdout, stderr and exit
# status are compared; the differing cases are printed with their diff.
# Exit 0 when none differ, 1 when some do, 2 when it could not run.
#
# The environment is fixed (env -i, LANG=C, a private HOME, SLURM_CONF of
# the private slurmctld or a missing file, the shape cache off) and argv[0]
# is "memcore" for both, so that only the binaries differ. AB_LOG=FILE
# appends each case and this tree's output to FILE (to see what is run).
set -u
BASE=${1:?usage: tests/ab_output.sh BASE_REV}
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA=$TOP/tests/data
W=$(mktemp -d /tmp/mc-ab.XXXXXX)
CTLD_PID=

cleanup() {
	[ -n "$CTLD_PID" ] && kill "$CTLD_PID" 2>/dev/null && wait "$CTLD_PID" 2>/dev/null
	git -C "$TOP" worktree remove --force "$W/base" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
die() { echo "ab_output: $*" >&2; exit 2; }

# --- the two binaries ----------------------------------------------------
git -C "$TOP" worktree add -q --detach "$W/base" "$BASE" ||
	die "cannot check out $BASE"
make -C "$W/base" -j2 build/memcore >"$W/base-build.log" 2>&1 ||
	{ tail -20 "$W/base-build.log"; die "$BASE does not build"; }
make -C "$TOP" -j2 build/memcore >"$W/head-build.log" 2>&1 ||
	{ tail -20 "$W/head-build.log"; die "this tree does not build"; }
mkdir -p "$W/a" "$W/b" "$W/home" "$W/out"
cp "$W/base/build/memcore" "$W/a/memcore"
cp "$TOP/build/memcore" "$W/b/memcore"
# memcore report's records (a job's AdminComment), made by BASE_REV's own
# engine so that both binaries read the same text.
cat >"$W/gen.c" <<'GEN'
/* A job's AdminComment with memcore's records of a few steps. */
#include <stdio.h>
#include <string.h>
#include "mc_jobrec.h"
#include "mc_summary.h"
#include "mc_timeline.h"

#define GIB (1ULL << 30)
static char cur[4 * MC_JOBREC_MAX], next[4 * MC_JOBREC_MAX];

static void add(struct mc_used *u, const char *step, const char *host)
{
	char rec[MC_SUMMARY_RECORD_MAX + 1];
	struct mc_advice a;

	mc_summary_advise(u, &a);
	if (mc_summary_record(u, &a, step, host, rec, sizeof(rec)) == 0 &&
	    mc_jobrec_merge(cur[0] ? cur : NULL, rec, next, sizeof(next),
			    MC_JOBREC_MAX) == 0)
		strcpy(cur, next);
}

static void series(struct mc_used *u, unsigned n, uint64_t top, bool cpu,
		   bool oom)
{
	struct mc_timeline tl;
	uint64_t cpu_us = 0, p;

	mc_timeline_init(&tl, 1000);
	memset(&u->peak, 0, sizeof(u->peak));
	for (unsigned k = 0; k < n; k++) {
		p = top / n * (k + 1);
		p -= p / 10 * (k % 3);
		cpu_us += 1000000ULL * (1 + k % 5);
		mc_timeline_add(&tl, (uint64_t)k * 1000000, p, p / 3, cpu,
				cpu_us, oom && k == n - 3);
		mc_peak_add(&u->peak, p + p / 3, p / 10 * 9, p / 10, p / 3);
	}
	mc_timeline_encode(&tl, u->timeline, sizeof(u->timeline));
	u->cpu_usec = cpu_us;
	u->wall_usec = (uint64_t)n * 1000000;
}

int main(int argc, char **argv)
{
	struct mc_used u;

	memset(&u, 0, sizeof(u));
	u.asked_bytes = 200 * GIB; u.gpus = 8; u.workers = 2;
	u.cores_allocated = 24; u.threads_per_core = 2;
	u.rule_bytes = 200 * GIB; u.rule_cores = 24;
	u.ram_per_worker_bytes = 4 * GIB;
	u.sample_interval_ms = 1000; u.cgroup_version = 2;
	u.kernel_peak_bytes = 150 * GIB;
	u.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_REFAULT | MC_SQUEEZE_STALL;
	series(&u, 300, 120 * GIB, true, false);
	add(&u, "5.0", "t4n1");
	u.refault_file_bytes = 300 * GIB; u.stall_usec = 100000000;
	u.mem_form = MC_MEM_PER_GPU;
	add(&u, "5.0", "t4n2");
	u.refault_file_bytes = 0; u.stall_usec = 0;
	u.mem_form = MC_MEM_PER_NODE;
	series(&u, 80, 210 * GIB, true, true);
	u.oom_kills = 2; u.max_events = 5;
	add(&u, "5.1", "t4n1");
	u.oom_kills = 0; u.max_events = 0; u.cgroup_version = 1;
	u.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_REFAULT;
	u.mem_form = MC_MEM_PER_CPU;
	series(&u, 20, 10 * GIB, false, false);
	add(&u, "5.batch", "t4n1");
	u.squeeze = 0;
	series(&u, 2, GIB, false, false);
	add(&u, "5.extern", "t4n1");
	/* "many": past the records' bound, an aggregate and cut timelines */
	for (int s = 0; argc > 1 && s < 40; s++) {
		char name[16];

		snprintf(name, sizeof(name), "5.%d", s + 2);
		u.cgroup_version = 2;
		u.squeeze = MC_SQUEEZE_MEASURED | MC_SQUEEZE_REFAULT |
			    MC_SQUEEZE_STALL;
		series(&u, 60 + s, (uint64_t)(s + 1) * 4 * GIB, true, s == 7);
		u.oom_kills = s == 7;
		add(&u, name, s % 2 ? "big1" : "t4n2");
	}
	printf("%s\n", cur);
	return 0;
}
GEN
cc -std=gnu11 -O1 $(for d in util formats cgroup policy data alloc report topology; do printf -- '-I%s ' "$W/base/$d"; done) \
	-o "$W/gen" "$W/gen.c" "$W/base/build/libmemcore.a" \
	$(pkg-config --libs hwloc libcgroup jansson 2>/dev/null) -lm 2>"$W/gen.log" ||
	{ cat "$W/gen.log"; die "cannot build the record generator"; }
git -C "$TOP" worktree remove --force "$W/base"

# --- configurations (tests/cli's) ----------------------------------------
C=$W/conf
mkdir -p "$C"
: >"$C/empty.conf"
printf 'RamPerWorker=5G\n' >"$C/rpw.conf"
printf 'HostRamPerGpuRam=1.5\n' >"$C/mi.conf"
printf 'HostRamPerGpuRam=1.5\nUnifiedMemory=no\n' >"$C/mi-no.conf"
printf 'Mode=warn\nAllowUserWarn=yes\n' >"$C/warn.conf"
printf 'HostRamPerGpuRam=2\nRamPerWorker=2G\nReservedCores=8\n' >"$C/ratio.conf"
printf 'GpuMemory=32G\n' >"$C/gpumem.conf"
printf 'RamPerTask=0\nReservedCores=4\nNodeRam=512G\nNodeCores=64\nNodeGpus=1\nRamPerWorker=5G\n' >"$C/node1.conf"
printf 'RamPerTask=0\nReservedCores=4\nNodeRam=1T\nNodeCores=64\nNodeGpus=4\n' >"$C/node4.conf"
printf 'RamPerTask=0\nReservedCores=4\nNodeRam=2T\nNodeCores=64\nNodeGpus=8\nRamPerWorker=4G\nGpuMemory=80G\n' >"$C/node8.conf"
printf 'PartitionName=big GpuMemory=80G NodeRam=2000G NodeCores=96 NodeGpus=8 Mode=warn AllowUserWarn=no\n' >"$C/login.conf"
printf 'TopologyFile=%s\nPartitionName=gpu Mode=warn\n' "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml" >"$C/topo.conf"
printf 'GpuTypeMemory=t4:16G,a100:40G\n' >"$C/gtm.conf"
# the job's DeepSpeed configs (tests/cli/test_jobfiles.sh's and more)
printf '{"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme"}}}\n' >"$C/ds-nvme.json"
printf '{"train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": true}, "zero_optimization": {"stage": 3}, "activation_checkpointing": {"cpu_checkpointing": true}}\n' >"$C/ds-act.json"
printf '{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu", "pin_memory": true}}}\n' >"$C/ds-z2.json"
printf '{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}, "stage3_gather_16bit_weights_on_model_save": true}, "bf16": {"enabled": "auto"}}\n' >"$C/ds-z3.json"
printf '{"zero_optimization": {"stage": 7}}\n' >"$C/ds-bad.json"
printf '{"zero_optimization": {"stage": "auto"}, "train_micro_batch_size_per_gpu": "auto"}\n' >"$C/ds-auto.json"
printf '{"zero_optimization": [1]}\n' >"$C/ds-type.json"
printf '{"model_type": "t5"}' >"$C/t5.json"
printf '{"model_type": "llama", "hidden_size": 4096}' >"$C/llama-part.json"
printf '{"model_type": "llama", "hidden_size": -1, "num_hidden_layers": 2, "intermediate_size": 10, "vocab_size": 10}' >"$C/llama-neg.json"
printf 'not json' >"$C/notjson.json"
# a node-facts cache, written once: both read the same one (its text
# names the time it was written)
env -i PATH=/usr/bin:/bin LANG=C "$W/a/memcore" audit --config "$C/empty.conf" \
	--topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml" \
	--write-cache "$C/t4.cache" >/dev/null 2>&1
cp "$C/t4.cache" "$C/bad.cache"
printf '\x01' | dd of="$C/bad.cache" bs=1 seek=3000 conv=notrunc status=none
printf 'GpuTypeMemory=t4:16G,a100:40G\nPartitionName=mixed Mode=warn AllowUserWarn=yes\n' >"$C/gtm-warn.conf"

# --- the option sets -----------------------------------------------------
# One a line, shell words (quotes kept). TOPO: run once per tests/data/*.xml
# with --topology (and --config empty.conf unless the line names one).
TOPO_CASES=$(cat <<'EOF'
check --gpus 1
check --gpus 2 --json
check --gpus 8 --dataloader-workers 2 --mem 400G --cores 16
check --gpus 4 --dataloader-workers 8 --mem 100G
check --gpus 4 --dataloader-workers 8 --mem 100G --json
check --gpus 8 --dataloader-workers 5 --mem 200G --cores 24 --json
check --gpus 2 --dataloader-workers 3+1 --mem 32G --cores 8
check --gpus 8 --dataloader-workers 2 --mem-per-gpu 20G --cpus 48
check --gpus 8 --dataloader-workers 2 --mem-per-gpu 24G --cpus 48 --json
check --gpus 2 --mem-per-cpu 4G --cpus 47
check --gpus 2 --cpus-per-gpu 2 --mem 64G
check --gpus 2 --cpus-per-gpu 2 --mem 800G --json
check --gpus 2 --cpus-per-task 4 --ntasks-per-node 2 --mem 64G --json
check --gpus 2 --cores 4 --job-cores 16 --mem 64G
check --gpus 4 --gpu-memory 40G --mem 300G
check --gpus 1 --gpu-type 1g.10gb --json
check --gpus 2 --gpu-type nvidia_h200_3g.71gb
check --gpus 2 --model-params 7B --zero-stage 2 --offload all
check --gpus 4 --model-params 7B --zero-stage 3 --offload optimizer --nodes 2 --json
check --gpus 8 --mem 720G --model-params 2851598336 --zero-stage 3 --zero-init no
check --gpus 4 --model-params 13B --zero-stage 3 --largest-layer-params 1B --zero-init yes
check --gpus 2 --model-params 7B --model-dtype bf16 --model-load rank0 --checkpoint-save all --save-optimizer yes
check --gpus 2 --model-config $DATA/models/llama-2-7b-hf.config.json --zero-stage 3 --offload all --cpu-checkpointing yes --seq-len 4096 --micro-batch 2 --model-parallel 2 --json
check --gpus 2 --ram-per-worker 8G --dataloader-workers 4
check --gpus 2 --dataset-in-memory=1G --json
check --gpus 8 --mem 400G --model-params 3B --zero-stage 2 --offload optimizer --json
check --shards 4 --json
check --shards 2 --shards-per-gpu 8 --cpus 6 --mem 9G --dataloader-workers 1
check --shards 1000 --shards-per-gpu 32
check --mps 25
check --mps 250 --json
check --gpus 1 --mem 16000000T --json
check --gpus 1 --mem 400G --mem-per-gpu 3G
check --gpus 1 --cores 2 --cpus 3
check --gpus 1 --dataloader-workers=x
check --gpus 0
check --gpus 99 --json
check --gpus 1 --nodelist gpu01
check --gpus 8 --partition gpu
check --slurm-options '{"gres":"gpu:2","mem":"100G"}'
check --slurm-options '{"gres":"gpu:4","exclusive":"exclusive"}' --json
check --slurm-options '{"gres":"gpu:2","hint":"nomultithread","cpus-per-gpu":"4","mem":"64G"}'
check --slurm-options '{"gpus-per-node":"8","cpus-per-gpu":"6","mem":"150G","nodes":"2"}' --json
check --slurm-options '{"gpus-per-node":"8","cpus-per-gpu":"6","mem":"150G","nodes":"1","test-only":"set","verbose":"1","wrap":"true","argv":[]}'
check --slurm-options '{"gres":"shard:4"}'
check --slurm-options '{"gres":"gres:mps:25","mem":"20G"}' --json
check --slurm-options '{"gpus":"4","mem-per-gpu":"20G"}'
check --slurm-options '{"gres":"gpu:8","mem":"100G","spank:memcore":"warn"}'
check --slurm-options '{"tres-per-task":"gres/gpu:1","ntasks":"4","cpus-per-task":"6","mem-per-cpu":"4G"}' --json
check --slurm-options '{"gres":"gpu:2","mincpus":"4","ntasks-per-tres":"1","mem":"50G"}'
check --slurm-options '{"gpus-per-task":"1","ntasks-per-node":"2","gpus-per-socket":"1"}' --json
check --slurm-options '{"gres":"gpu:a100:x"}'
check --slurm-options '{"gres": ["gpu:8"]}'
check --slurm-options '{"gres": "gres:gpu:h100:2", "mem": null, "gpus": "h100"}'
check --slurm-command srun --slurm-options '{"gres":"gpu:1","export":"NONE"}' --json
check --config mi.conf --gpus 4 --dataloader-workers 4 --json
check --config mi-no.conf --gpus 4 --dataloader-workers 4 --gpu-memory 96G
check --config warn.conf --gpus 8 --mem 10G
check --config warn.conf --gpus 8 --mem 10G --json
check --config rpw.conf --gpus 1 --dataloader-workers 4 --mem 32G --cores 8
check --config ratio.conf --gpus 4 --dataloader-workers 6 --json
check --config gpumem.conf --gpus 2 --mem 60G
audit
audit --json
audit --config ratio.conf
audit --config ratio.conf --json
audit --config gpumem.conf --json
audit --config mi-no.conf
audit --partition nope
plan
plan --json
plan --gpus 4 --dataloader-workers 2 --json
plan --gpus 2 --dataloader-workers 0
plan --gpus 2 --dataloader-workers 0 --cpu-list 0 --json
plan --gpus 1 --dataloader-workers 8
plan --gpus 1 --dataloader-workers 8 --cores 18-23,66-71
plan --dataloader-workers 2 --json
plan --gpus 4 --dataloader-workers 8+2
plan --gpus 2 --cores 4
plan --gpus 99
EOF
)
# Once each: the node from memcore.conf, other commands, the help texts.
# $DATA and $C are expanded.
ONCE_CASES=$(cat <<'EOF'
check --config $C/node1.conf --json --gpus 1 --gpu-memory 16G --dataloader-workers 4 --mem 32G --cores 8
check --config $C/node1.conf --gpus 1 --gpu-memory 16G --dataloader-workers 1 --mem 32G --cores 8
check --config $C/node4.conf --json --gpus 4 --gpu-memory 16G --dataloader-workers 8+2 --mem 512G --cores 64
check --config $C/node4.conf --gpus 4 --gpu-memory 80G --dataloader-workers 8 --mem 300G --cores 20
check --config $C/node8.conf --gpus 8 --dataloader-workers 2 --mem 400G --cores 16
check --config $C/node8.conf --gpus 8 --mem 720G --model-params 2851598336 --zero-stage 3 --zero-init no
check --config $C/node8.conf --gpus 2 --model-params 7B --zero-stage 2 --offload all --json
check --config $C/node8.conf --dataloader-workers 2
check --config $C/node8.conf --gpus 2 --cpus-per-gpu 2 --cpus-per-task 4
check --config $C/login.conf --partition big --gpus 16 --mem 400G --json
check --config $C/login.conf --partition big --gpus 8
check --config $C/login.conf --partition Big --gpus 8
check --config $C/topo.conf --partition gpus --gpus 8
check --config $C/topo.conf --partition gpu --gpus 8 --json
check --config $C/missing.conf --gpus 1
check --config $C/empty.conf --topology $C/missing.xml --gpus 1
MEMCORE_DATALOADER_WORKERS=6 check --config $C/node8.conf --gpus 4
MEMCORE_DATALOADER_WORKERS=6 check --config $C/node8.conf --gpus 4 --dataloader-workers 1
MEMCORE_MODEL_PARAMS=7 check --config $C/node8.conf --gpus 4
check --config $C/node8.conf --gpus 4 --model-params 7
check --config $C/node8.conf --gpus 4 --model-params 7B --model-params 8B
check --config $C/node8.conf --gpus 4 --zero-stage 4
MEMCORE_ZERO_STAGE=x check --config $C/node8.conf --gpus 4
check --config $C/node8.conf --gpus 4 --offload some
check --config $C/node8.conf --gpus 4 --zero-init maybe
MEMCORE_SEQ_LEN=0 check --config $C/node8.conf --gpus 4 --model-params 7B --zero-stage 3 --offload all --cpu-checkpointing yes
check --config $C/node8.conf --gpus 4 --micro-batch 0
check --config $C/node8.conf --gpus 4 --model-parallel 99999999
check --config $C/node8.conf --gpus 4 --ram-per-worker 0
check --config $C/node8.conf --gpus 4 --ram-per-worker 2000T
MEMCORE_RAM_PER_WORKER=6G check --config $C/node8.conf --gpus 4 --json
check --config $C/node8.conf --gpus 4 --dataset-in-memory=10
check --config $C/node8.conf --gpus 4 --dataset-in-memory=2000T
check --config $C/node8.conf --gpus 4 --dataset-in-memory=4G --json
check --config $C/node8.conf --gpus 4 --dataset ,a
check --config $C/node8.conf --gpus 4 --dataset a,,b
check --config $C/node8.conf --gpus 4 --deepspeed-config=
check --config $C/node8.conf --gpus 4 --model-config $C/missing.json
check --config $C/node8.conf --gpus 4 --deepspeed-config $C/missing.json
check --config $C/node8.conf --gpus 4 --model-dtype fp8
check --config $C/node8.conf --gpus 4 --model-load all
check --config $C/node8.conf --gpus 4 --checkpoint-save some
check --config $C/node8.conf --gpus 4 --save-optimizer perhaps
MEMCORE_MODE=bogus check --config $C/node8.conf --gpus 4
MEMCORE_MODE=warn check --config $C/node8.conf --gpus 8 --mem 10G
MEMCORE_MODE=explain check --config $C/node8.conf --gpus 2
check --config $C/node8.conf --gpus 4 --model-params 7B --model-dtype bf16 --model-load meta --checkpoint-save rank0 --save-optimizer no --json
check --config $C/node8.conf --gpus 4 --dataloader-workers 8+2+x
check --config $C/node8.conf --gpus 4 --dataloader-workers 4+4+4+4+4+4+4+4+4
check --config $C/node8.conf --gpus 8 --mem 600G --model-config $DATA/models/gpt-j-6b.config.json
check --config $C/node8.conf --gpus 2 --mem 300G --model-config $DATA/models/gpt-j-6b.config.json --zero-stage 3 --offload all --json
check --config $C/node8.conf --gpus 8 --mem 600G --model-config $DATA/models/gpt2.config.json
check --config $C/node8.conf --gpus 2 --mem 300G --model-config $DATA/models/gpt2.config.json --zero-stage 3 --offload all --json
check --config $C/node8.conf --gpus 8 --mem 600G --model-config $DATA/models/llama-2-13b-hf.config.json
check --config $C/node8.conf --gpus 2 --mem 300G --model-config $DATA/models/llama-2-13b-hf.config.json --zero-stage 3 --offload all --json
check --config $C/node8.conf --gpus 8 --mem 600G --model-config $DATA/models/llama-2-7b-hf.config.json
check --config $C/node8.conf --gpus 2 --mem 300G --model-config $DATA/models/llama-2-7b-hf.config.json --zero-stage 3 --offload all --json
check --config $C/node8.conf --gpus 8 --mem 600G --model-config $DATA/models/mistral-7b-v0.1.config.json
check --config $C/node8.conf --gpus 2 --mem 300G --model-config $DATA/models/mistral-7b-v0.1.config.json --zero-stage 3 --offload all --json
check --config $C/node8.conf --gpus 8 --mem 600G --model-config $DATA/models/mistral-nemo-base-2407.config.json
check --config $C/node8.conf --gpus 2 --mem 300G --model-config $DATA/models/mistral-nemo-base-2407.config.json --zero-stage 3 --offload all --json
check --config $C/node8.conf --gpus 8 --mem 600G --model-config $DATA/models/mixtral-8x7b-v0.1.config.json
check --config $C/node8.conf --gpus 2 --mem 300G --model-config $DATA/models/mixtral-8x7b-v0.1.config.json --zero-stage 3 --offload all --json
check --config $C/node8.conf --gpus 8 --mem 600G --model-config $DATA/models/qwen1.5-moe-a2.7b.config.json
check --config $C/node8.conf --gpus 2 --mem 300G --model-config $DATA/models/qwen1.5-moe-a2.7b.config.json --zero-stage 3 --offload all --json
check --config $C/node8.conf --gpus 8 --mem 600G --model-config $DATA/models/qwen2-0.5b.config.json
check --config $C/node8.conf --gpus 2 --mem 300G --model-config $DATA/models/qwen2-0.5b.config.json --zero-stage 3 --offload all --json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-nvme.json --model-config $DATA/models/llama-2-7b-hf.config.json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-nvme.json --model-params 7B --seq-len 2048 --json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-act.json --model-config $DATA/models/llama-2-7b-hf.config.json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-act.json --model-params 7B --seq-len 2048 --json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-z2.json --model-config $DATA/models/llama-2-7b-hf.config.json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-z2.json --model-params 7B --seq-len 2048 --json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-z3.json --model-config $DATA/models/llama-2-7b-hf.config.json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-z3.json --model-params 7B --seq-len 2048 --json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-bad.json --model-config $DATA/models/llama-2-7b-hf.config.json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-bad.json --model-params 7B --seq-len 2048 --json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-auto.json --model-config $DATA/models/llama-2-7b-hf.config.json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-auto.json --model-params 7B --seq-len 2048 --json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-type.json --model-config $DATA/models/llama-2-7b-hf.config.json
check --config $C/node8.conf --gpus 4 --mem 500G --deepspeed-config $C/ds-type.json --model-params 7B --seq-len 2048 --json
check --config $C/node8.conf --gpus 4 --model-config $C/t5.json
check --config $C/node8.conf --gpus 4 --model-config $C/llama-part.json
check --config $C/node8.conf --gpus 4 --model-config $C/llama-neg.json
check --config $C/node8.conf --gpus 4 --model-config $C/notjson.json
check --config $C/node8.conf --gpus 4 --deepspeed-config $C/notjson.json
audit --config $C/node8.conf
audit --config $C/node8.conf --json
audit --config $C/login.conf --partition big
audit --bogus
audit --config $C/empty.conf --cache $C/t4.cache
audit --config $C/empty.conf --cache $C/t4.cache --json
audit --config $C/empty.conf --cache $C/bad.cache
audit --config $C/empty.conf --cache $C/absent.cache
audit --config $C/empty.conf --cache $C/t4.cache --topology $DATA/local-2numa-2gpu.xml
audit --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --json --write-cache $W/out/written.cache
audit --config $C/empty.conf --all
audit --config $C/empty.conf --all --partition x
audit --config $C/empty.conf --cache $C/t4.cache --partition gpu
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --cpu-list 0-3 --cores 0-3
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --cpu-list 0-3 --cpu-list 0-4
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --cores 1
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --cores 0-3 --cpu-list 0-2
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --cpu-list 9999
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --cpu-list x
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --cpu-list 0-1000 --json
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --gpus 0
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --gpus x
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --dataloader-workers x
plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml extra
MEMCORE_DATALOADER_WORKERS=3 plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml
MEMCORE_DATALOADER_WORKERS=x plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml
MEMCORE_DATALOADER_WORKERS=3 plan --config $C/empty.conf --topology $DATA/local-2numa-2gpu.xml --dataloader-workers 1 --json
usage --cgroup $DATA/cgroup/v2/job_7/step_0
usage --cgroup $DATA/cgroup/v2/job_7/step_0 --json
usage --cgroup $DATA/cgroup/v1/slurm_n1/uid_0/job_7/step_0
usage --cgroup $DATA/cgroup/v1/slurm_n1/uid_0/job_7/step_0 --json
usage --cgroup $DATA/cgroup/v2/job_7
usage
usage --bogus
usage --cgroup
usage --pid 1 --cgroup /nonexistent
usage --pid x
usage --pid 999999999
usage --cgroup $DATA/cgroup/v2/job_7 extra
usage --cgroup /nonexistent --json
check --bogus
check --gpus
check --gpus 1 --gpus 2 --config $C/node8.conf
check --gpus 1 --gpus 1 --config $C/node8.conf
check --config $C/node8.conf --gpus 1 stray
check --config $C/node8.conf --gpus 1 --mem 1G --mem 2G
check --config $C/node8.conf --gpus 1 --nodes 2 --nodes 3
check --config $C/node8.conf --gpus 1 --gpu-type a --gpu-type b
check --config $C/node8.conf --gpus 1 --slurm-command srun
check --config $C/node8.conf --slurm-options '{}' --gpus 1
check --config $C/node8.conf --gpus 1 --nodelist n1
check --config $C/node8.conf --gpus 1 --shards 2 --mps 3
check --config $C/node8.conf --gpus 1 --shards-per-gpu 2
check --config $C/node8.conf --gpus 1 --cores 2 --cpus-per-gpu 3
check --config $C/node8.conf --gpus 1 --cores 2 --cpus-per-task 3
check --config $C/node8.conf --gpus 1 --slurm-command bsub --slurm-options '{}'
plan --bogus
plan --gpus
plan --help --gpus 1
audit --cache
audit --bogus --json
audit extra
report --bogus
report --svg
report 5 --svg /nonexistent/dir/x.svg
keys
keys extra
report
report notajob
--help
--version
nosuchcommand
check --help
audit --help
plan --help
usage --help
keys --help
report --help
stage --help
EOF
)
# With the private slurmctld: partitions gpu (2 x g4dn.metal shape, the
# default) and mixed (those and 2 x 4 A100).
CTLD_CASES=$(cat <<'EOF'
check --config $C/gtm.conf --gpus 8 --mem 300G
check --config $C/gtm.conf --gpus 8 --mem 300G --json
check --config $C/empty.conf --gpus 8 --mem 300G
check --config $C/empty.conf --gpus 8 --mem 300G --json
check --config $C/gtm.conf --gpus 8 --mem 400G
check --config $C/gtm.conf --gpus 8 --mem 400G --json
check --config $C/gtm.conf --partition gpx --gpus 8
check --config $C/gtm.conf --partition mixed --gpus 8 --mem 300G
check --config $C/gtm.conf --partition mixed --gpus 4 --mem 300G --json
check --config $C/gtm.conf --partition mixed --gpus 4 --dataloader-workers 12 --mem 300G
check --config $C/gtm.conf --partition mixed --gpus 4 --dataloader-workers 12 --mem 300G --json
check --config $C/gtm.conf --partition mixed --gpus 2 --cpus-per-gpu 2 --mem 100G
check --config $C/gtm.conf --partition mixed --gpus 4 --nodes 3 --mem 300G
check --config $C/gtm.conf --partition mixed --gpus 4 --nodes 5 --mem 300G --json
check --config $C/gtm.conf --partition mixed --gpus 4 --nodelist big1 --mem 300G
check --config $C/gtm.conf --partition mixed --gpus 4 --exclude big[1-2] --mem 300G --json
check --config $C/gtm.conf --partition mixed --gpus 4 --nodelist nosuch
check --config $C/gtm.conf --partition mixed --gpus 4 --gpu-type a100 --mem 300G
check --config $C/gtm.conf --partition mixed --gpus 4 --gpu-type v100
check --config $C/gtm.conf --partition mixed --gpus 4 --gpu-type v100 --json
check --config $C/gtm.conf --partition mixed --gpus 4 --nodelist nosuch --json
check --config $C/gtm.conf --partition mixed --gpus 4 --exclude t4n[1-2],big[1-2] --json
check --config $C/gtm.conf --partition mixed --shards 4
check --config $C/gtm.conf --partition mixed --gpus 4 --model-params 7B --zero-stage 3 --offload all --json
check --config $C/gtm-warn.conf --partition mixed --gpus 8 --mem 500G
check --config $C/gtm-warn.conf --partition mixed --gpus 8 --mem 500G --json
check --config $C/gtm.conf --partition mixed --slurm-options '{"gres":"gpu:4","mem":"300G"}'
check --config $C/gtm.conf --partition mixed --slurm-options '{"gres":"gpu:4","exclusive":"exclusive"}' --json
check --config $C/gtm.conf --partition mixed --slurm-options '{"gres":"gpu:2","hint":"nomultithread","cpus-per-gpu":"4","mem":"64G"}'
check --config $C/gtm.conf --partition mixed --slurm-options '{"gpus-per-node":"4","cpus-per-gpu":"6","mem":"150G","nodes":"3"}' --json
check --config $C/gtm.conf --partition mixed --slurm-options '{"gres":"gpu:8","mem-per-gpu":"60G"}'
check --config $C/gtm.conf --partition gpu --topology $DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml --gpus 8
audit --config $C/gtm.conf --partition mixed
audit --config $C/gtm.conf --partition mixed --json
audit --config $C/empty.conf --partition gpu
audit --config $C/gtm.conf --all
audit --config $C/gtm.conf --all --json
audit --config $C/gtm.conf --partition nope
audit --config $C/gtm.conf --partition many
audit --config $C/gtm.conf --partition many --json
check --config $C/gtm.conf --partition many --gpus 4 --dataloader-workers 30
check --config $C/gtm.conf --partition many --gpus 4 --dataloader-workers 30 --json
check --config $C/gtm.conf --partition many --gpus 2 --mem 150G
check --config $C/gtm.conf --partition many --gpus 2 --mem 150G --json
check --config $C/gtm.conf --partition many --gpus 4 --mem 200G --nodes 3
check --config $C/gtm.conf --partition mixed --slurm-options '{"gres":"gpu:2","hint":"nomultithread","cpus-per-gpu":"4","mem":"64G","constraint":"fast"}'
check --config $C/gtm.conf --partition mixed --slurm-options '{"gres":"gpu:2","hint":"nomultithread","cpus-per-gpu":"4","mem":"64G","constraint":"fast"}' --json
check --config $C/gtm.conf --partition mixed --slurm-options '{"gres":"gpu:2","ntasks-per-gpu":"1","cpus-per-task":"4","mem":"64G"}'
check --config $C/gtm.conf --partition mixed --slurm-options '{"gres":"gpu:2","mem-per-cpu":"2G","cpus-per-gpu":"8"}' --json
check --config $C/gtm.conf --partition limits --slurm-options '{"gres":"gpu:2"}'
check --config $C/gtm.conf --partition limits --slurm-options '{"gres":"gpu:4","mem":"200G"}'
check --config $C/gtm.conf --partition limits --slurm-options '{"gpus-per-node":"4","mem-per-cpu":"6000M"}'
check --config $C/gtm.conf --partition limits --slurm-options '{"gpus-per-node":"2","ntasks-per-gpu":"1","cpus-per-task":"6","mem":"100G"}'
check --config $C/gtm.conf --partition limits --slurm-options '{"gpus":"8","nodes":"1-2","cpus-per-gpu":"2"}'
check --config $C/gtm.conf --partition limits --slurm-options '{"gres":"gpu:2","mem":"0","sockets-per-node":"1","cores-per-socket":"6"}'
check --config $C/gtm.conf --partition limits --slurm-options '{"gres":"gpu:2","hint":"nomultithread","mem-per-gpu":"40G"}'
check --config $C/gtm.conf --partition limits --slurm-options '{"gres":"gpu:4","exclusive":"exclusive","mincpus":"70"}'
check --config $C/gtm.conf --partition limits --slurm-options '{"gres":"gpu:4","mem":"200G"}' --json
check --config $C/gtm.conf --partition pergpu --slurm-options '{"gres":"gpu:2"}'
check --config $C/gtm.conf --partition pergpu --slurm-options '{"gres":"gpu:4","mem":"200G"}'
check --config $C/gtm.conf --partition pergpu --slurm-options '{"gpus-per-node":"4","mem-per-cpu":"6000M"}'
check --config $C/gtm.conf --partition pergpu --slurm-options '{"gpus-per-node":"2","ntasks-per-gpu":"1","cpus-per-task":"6","mem":"100G"}'
check --config $C/gtm.conf --partition pergpu --slurm-options '{"gpus":"8","nodes":"1-2","cpus-per-gpu":"2"}'
check --config $C/gtm.conf --partition pergpu --slurm-options '{"gres":"gpu:2","mem":"0","sockets-per-node":"1","cores-per-socket":"6"}'
check --config $C/gtm.conf --partition pergpu --slurm-options '{"gres":"gpu:2","hint":"nomultithread","mem-per-gpu":"40G"}'
check --config $C/gtm.conf --partition pergpu --slurm-options '{"gres":"gpu:4","exclusive":"exclusive","mincpus":"70"}'
check --config $C/gtm.conf --partition pergpu --slurm-options '{"gres":"gpu:4","mem":"200G"}' --json
check --config $C/gtm.conf --partition excl --slurm-options '{"gres":"gpu:2"}'
check --config $C/gtm.conf --partition excl --slurm-options '{"gres":"gpu:4","mem":"200G"}'
check --config $C/gtm.conf --partition excl --slurm-options '{"gpus-per-node":"4","mem-per-cpu":"6000M"}'
check --config $C/gtm.conf --partition excl --slurm-options '{"gpus-per-node":"2","ntasks-per-gpu":"1","cpus-per-task":"6","mem":"100G"}'
check --config $C/gtm.conf --partition excl --slurm-options '{"gpus":"8","nodes":"1-2","cpus-per-gpu":"2"}'
check --config $C/gtm.conf --partition excl --slurm-options '{"gres":"gpu:2","mem":"0","sockets-per-node":"1","cores-per-socket":"6"}'
check --config $C/gtm.conf --partition excl --slurm-options '{"gres":"gpu:2","hint":"nomultithread","mem-per-gpu":"40G"}'
check --config $C/gtm.conf --partition excl --slurm-options '{"gres":"gpu:4","exclusive":"exclusive","mincpus":"70"}'
check --config $C/gtm.conf --partition excl --slurm-options '{"gres":"gpu:4","mem":"200G"}' --json
plan --config $C/gtm.conf --partition gpu
report $JOB1
report $JOB1 --json
report $JOB1 --plot
COLUMNS=160 report $JOB1 --plot
COLUMNS=40 report $JOB1 --plot
report $JOB1 --svg @SVG@
report $JOB2
report $JOB2 --json
COLUMNS=120 report $JOB2 --plot --svg @SVG@
report $JOB3
report $JOB3 --json
report $JOB4
report 999999
EOF
)

# --- the private slurmctld ------------------------------------------------
CTLD_CONF=$W/ctld/slurm.conf
start_ctld() {
	command -v slurmctld >/dev/null && [ "$(id -u)" = 0 ] || return 1
	local port
	port=$(( (RANDOM % 20000) + 30000 ))
	mkdir -p "$W/ctld/state"
	cat >"$CTLD_CONF" <<CONF
ClusterName=mcab
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=root
StateSaveLocation=$W/ctld/state
SlurmctldPidFile=$W/ctld/ctld.pid
SlurmctldLogFile=$W/ctld/ctld.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu,shard,mps
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
MailProg=/bin/true
MessageTimeout=5
NodeName=t4n[1-2] NodeAddr=192.0.2.1 Sockets=2 CoresPerSocket=24 ThreadsPerCore=2 RealMemory=386000 Gres=gpu:t4:8 State=DOWN
NodeName=big[1-2] NodeAddr=192.0.2.2 Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=524288 Gres=gpu:a100:4 State=DOWN
NodeName=s1 NodeAddr=192.0.2.3 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=262144 Gres=gpu:a100:4 State=DOWN
NodeName=s2 NodeAddr=192.0.2.3 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=393216 Gres=gpu:a100:4 State=DOWN
NodeName=s3 NodeAddr=192.0.2.3 Sockets=2 CoresPerSocket=20 ThreadsPerCore=1 RealMemory=262144 Gres=gpu:a100:4 State=DOWN
NodeName=s4 NodeAddr=192.0.2.3 Sockets=2 CoresPerSocket=12 ThreadsPerCore=2 RealMemory=196608 Gres=gpu:a100:4 State=DOWN
NodeName=s5 NodeAddr=192.0.2.3 Sockets=1 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=131072 Gres=gpu:a100:2 State=DOWN
PartitionName=gpu Nodes=t4n[1-2] Default=YES MaxTime=INFINITE State=UP
PartitionName=many Nodes=s[1-5],big[1-2] MaxTime=INFINITE State=UP
PartitionName=limits Nodes=t4n[1-2],big[1-2] DefMemPerCPU=2000 MaxMemPerCPU=4000 DefCpuPerGPU=4 MaxTime=INFINITE State=UP
PartitionName=pergpu Nodes=t4n[1-2],big[1-2] DefMemPerGPU=30000 MaxMemPerNode=300000 MaxTime=INFINITE State=UP
PartitionName=excl Nodes=t4n[1-2],big[1-2] OverSubscribe=EXCLUSIVE DefMemPerNode=100000 MaxTime=INFINITE State=UP
PartitionName=mixed Nodes=t4n[1-2],big[1-2] MaxTime=INFINITE State=UP
CONF
	slurmctld -D -c -i -f "$CTLD_CONF" >"$W/ctld/out" 2>&1 &
	CTLD_PID=$!
	for _ in $(seq 50); do
		SLURM_CONF=$CTLD_CONF scontrol ping 2>/dev/null | grep -q UP && return 0
		sleep 0.2
	done
	return 1
}

# jobs held in the private slurmctld's queue (its nodes are DOWN), with
# memcore's records set by hand as root (tests/integration/test_41's way):
# JOB1 a few steps, JOB2 past the records' bound, JOB3 memcore 0.3.0's
# form, JOB4 none.
submit_jobs() {
	local i j rec
	for i in 1 2 3 4; do
		j=$(SLURM_CONF=$CTLD_CONF sbatch --parsable --hold -p gpu -N1 --wrap true) || return 1
		printf -v "JOB$i" '%s' "$j"
	done
	SLURM_CONF=$CTLD_CONF scontrol update job="$JOB1" AdminComment="$("$W/gen")" &&
	SLURM_CONF=$CTLD_CONF scontrol update job="$JOB2" AdminComment="$("$W/gen" many)" || return 1
	rec=$("$W/gen" | tr ';' '\n' | grep -m1 '^5\.batch@' | sed 's/,s=.*//')
	SLURM_CONF=$CTLD_CONF scontrol update job="$JOB3" AdminComment="memcore1:dropped=4;$rec"
}

# --- the runs --------------------------------------------------------------
N=0 NDIFF=0
declare -A BY_RC=()
# run_one NAME SLURM_CONF ARGS...: both binaries, the outputs compared
# Leading VAR=VALUE words set the environment (COLUMNS=160); an argument
# @SVG@ is a file whose text is compared after stdout.
run_one() {
	local name=$1 sconf=$2 side envs=(COLUMNS=80) args=() a
	shift 2
	while [ $# -gt 0 ] && [[ $1 == [A-Z_]*=* ]]; do envs+=("$1"); shift; done
	for a in "$@"; do [ "$a" = @SVG@ ] && a=$W/out/plot.svg; args+=("$a"); done
	N=$((N + 1))
	for side in a b; do
		rm -f "$W/out/plot.svg"
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C HOME="$W/home" \
			SLURM_CONF="$sconf" MEMCORE_CACHE_DIR=none "${envs[@]}" \
			bash -c 'exec -a memcore "$0" "$@"' "$W/$side/memcore" "${args[@]}" \
			>"$W/out/$side.out" 2>"$W/out/$side.err" </dev/null
		echo "exit $?" >>"$W/out/$side.err"
		[ -f "$W/out/plot.svg" ] && { echo "--- svg"; cat "$W/out/plot.svg"; } >>"$W/out/$side.out"
		[ -n "${AB_LOG:-}" ] && [ $side = b ] &&
			{ echo "=== memcore $*"; cat "$W/out/b.out" "$W/out/b.err"; } >>"$AB_LOG"
		printf '%s\n' "--- stderr" >"$W/out/$side.sep"
	done
	local rc
	rc=$(tail -n1 "$W/out/b.err")
	BY_RC[${rc#exit }]=$(( ${BY_RC[${rc#exit }]:-0} + 1 ))
	if ! cmp -s "$W/out/a.out" "$W/out/b.out" ||
	   ! cmp -s "$W/out/a.err" "$W/out/b.err"; then
		NDIFF=$((NDIFF + 1))
		echo "DIFFERS: $name: memcore $*"
		diff <(cat "$W/out/a.out" "$W/out/a.sep" "$W/out/a.err") \
		     <(cat "$W/out/b.out" "$W/out/b.sep" "$W/out/b.err") |
			head -20 | sed 's/^/    /'
	fi
}

NOCONF=$W/no-slurm.conf	# absent: no slurmctld is asked
# run_lines KIND SLURM_CONF [XML]: each line of stdin as a case
run_lines() {
	local kind=$1 sconf=$2 xml=${3:-} line args
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		eval "args=($line)"
		if [ -n "$xml" ]; then
			local cmd=${args[0]} cfg=empty.conf rest=()
			local i=1
			while [ $i -lt ${#args[@]} ]; do
				if [ "${args[$i]}" = --config ]; then
					cfg=${args[$((i + 1))]}; i=$((i + 2))
				else
					rest+=("${args[$i]}"); i=$((i + 1))
				fi
			done
			args=("$cmd" --config "$C/$cfg" --topology "$xml" "${rest[@]}")
		fi
		run_one "$kind" "$sconf" "${args[@]}"
	done
}

for xml in "$DATA"/*.xml; do
	run_lines "$(basename "$xml")" "$NOCONF" "$xml" <<<"$TOPO_CASES"
done
run_lines once "$NOCONF" <<<"$ONCE_CASES"
# A port another program holds makes slurmctld exit: another port.
ctld_up=false
for _ in 1 2 3; do
	start_ctld && { ctld_up=true; break; }
	[ -n "$CTLD_PID" ] && kill "$CTLD_PID" 2>/dev/null && wait "$CTLD_PID" 2>/dev/null
	CTLD_PID=
	rm -rf "$W/ctld"
done
if $ctld_up && submit_jobs; then
	run_lines slurmctld "$CTLD_CONF" <<<"$CTLD_CASES"
	kill "$CTLD_PID" 2>/dev/null; wait "$CTLD_PID" 2>/dev/null; CTLD_PID=
	# slurmctld stopped: "could not be reached" (exit 3)
	run_one slurmctld-down "$CTLD_CONF" check --config "$C/gtm.conf" --gpus 8
else
	echo "ab_output: no private slurmctld (needs slurmctld and root): the --partition cases from slurmctld are skipped" >&2
fi

rcs=
for k in $(printf '%s\n' "${!BY_RC[@]}" | sort -n); do rcs+=" $k:${BY_RC[$k]}"; done
echo "ab_output: $N runs of $BASE and this tree's memcore (exit status:count$rcs), $NDIFF differ"
[ "$NDIFF" -eq 0 ]
