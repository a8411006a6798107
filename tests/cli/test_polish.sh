#!/bin/bash
# What a fresh and a hostile user found in 0.3.0: each section reproduces
# one rough edge and checks the behaviour a Slurm user expects instead.
. "$(dirname "$0")/lib.sh"

T8=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
GIB=1073741824
chk() { run_mc check --config "$TMP/empty.conf" --topology "$T8" --gpus 1 "$@"; }
field() { jq -r "$1" <<<"$OUT"; }

# 1. memcore check reads the MEMCORE_* variables the plugin reads, with its
# precedence (the command line wins) and its validation (a bad value is
# named, variable and value).
chk --json --dataloader-workers 3
want_needed=$(field .ram_needed_bytes) want_exit=$RC
chk --json
plain_needed=$(field .ram_needed_bytes)
[ "$plain_needed" != "$want_needed" ] || fail "env: 3 workers must differ from the default"
MEMCORE_DATALOADER_WORKERS=3 chk --json
expect_eq "MEMCORE_DATALOADER_WORKERS=3 as --dataloader-workers 3 (needed)" \
	"$(field .ram_needed_bytes)" "$want_needed"
expect_eq "MEMCORE_DATALOADER_WORKERS=3 as --dataloader-workers 3 (exit)" "$RC" "$want_exit"
MEMCORE_DATALOADER_WORKERS=7 chk --dataloader-workers 3 --json
expect_eq "the command line beats MEMCORE_DATALOADER_WORKERS" \
	"$(field .ram_needed_bytes)" "$want_needed"
MEMCORE_DATALOADER_WORKERS=abc chk
expect_eq "bad MEMCORE_DATALOADER_WORKERS exit" "$RC" 2
expect_contains "bad MEMCORE_DATALOADER_WORKERS named" "$ERR" \
	"memcore: MEMCORE_DATALOADER_WORKERS=abc: not a number"
MEMCORE_DATALOADER_WORKERS=abc chk --dataloader-workers 3
expect_eq "bad variable under a given option is not read (exit)" "$RC" "$want_exit"
MEMCORE_OFFLOAD=all chk
expect_eq "MEMCORE_OFFLOAD=all alone: refused as the plugin refuses (exit)" "$RC" 2
expect_contains "MEMCORE_OFFLOAD=all alone names the variable" "$ERR" \
	"from the environment: MEMCORE_OFFLOAD"
MEMCORE_OFFLOAD= chk --json
expect_eq "an empty variable is unset" "$(field .ram_needed_bytes)" "$plain_needed"
long=$(printf 'x%.0s' $(seq 300))
MEMCORE_MODEL_CONFIG=$long chk
expect_eq "an over-long variable (exit)" "$RC" 2
expect_contains "an over-long variable" "$ERR" \
	"memcore: MEMCORE_MODEL_CONFIG: a value of 300 characters is too long (at most 255)"

# 1b. memcore plan takes --dataloader-workers and MEMCORE_DATALOADER_WORKERS
# as the plugin does: 3+1 binds as 4 workers, the variable when no option.
pcores() { jq -c '[.gpus[].cores_wanted]' <<<"$OUT"; }
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 2 --dataloader-workers 4 --json
want=$(pcores)
expect_eq "plan w=4: 5 cores a GPU" "$want" "[5,5]"
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 2 --dataloader-workers 3+1 --json
expect_eq "plan 3+1 as 4" "$(pcores)" "$want"
MEMCORE_DATALOADER_WORKERS=4 run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 2 --json
expect_eq "plan reads MEMCORE_DATALOADER_WORKERS" "$(pcores)" "$want"
MEMCORE_DATALOADER_WORKERS=abc run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 2 --dataloader-workers 4 --json
expect_eq "plan: the option wins over the variable" "$(pcores)" "$want"
MEMCORE_DATALOADER_WORKERS=abc run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 2
expect_eq "plan: a bad variable (exit)" "$RC" 2
expect_eq "plan: a bad variable named" "$ERR" "memcore: MEMCORE_DATALOADER_WORKERS=abc: not a number"

# 2. A fractional size is refused as sbatch refuses it ("Invalid --mem
# specification"), by every size option and key, naming option and value
# and giving the whole form.
for o in mem mem-per-gpu mem-per-cpu gpu-memory ram-per-worker; do
	chk "--$o=1.5G"
	expect_eq "--$o=1.5G exit" "$RC" 2
	expect_eq "--$o=1.5G message" "$ERR" \
		"memcore: --$o=1.5G: not a whole number: sizes are whole, as Slurm takes them (1536M)"
done
chk --mem-per-cpu=2.5
expect_contains "--mem-per-cpu=2.5 (MiB) refused" "$ERR" "memcore: --mem-per-cpu=2.5: not a whole number"
chk --mem=1536M --json
expect_eq "--mem=1536M is the same size" "$(field .ram_allocated_bytes)" $((3 * GIB / 2))
printf 'GpuMemory=14.5G\n' >"$TMP/frac.conf"
run_mc check --config "$TMP/frac.conf" --topology "$T8" --gpus 1
expect_eq "GpuMemory=14.5G exit" "$RC" 2
expect_contains "GpuMemory=14.5G names file, line and key" "$ERR" \
	"memcore: $TMP/frac.conf:1: GpuMemory: not a whole number: sizes are whole, as Slurm takes them (14848M)"
MEMCORE_RAM_PER_WORKER=0.5G chk
expect_eq "MEMCORE_RAM_PER_WORKER=0.5G" "$ERR" \
	"memcore: MEMCORE_RAM_PER_WORKER=0.5G: not a whole number: sizes are whole, as Slurm takes them (512M)"

# 3. Every command's --help has an exit status block, the same codes and
# words as memcore(8) EXIT STATUS, and each code is what the command returns.
man_exit=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$TOP/docs/memcore.8")
for cmd in check audit plan usage report keys stage; do
	help=$("$MEMCORE" "$cmd" --help)
	block=$(sed -n '/^Exit status (memcore(8) EXIT STATUS):$/,$p' <<<"$help" | tail -n +2)
	[ -n "$block" ] || { fail "memcore $cmd --help: no exit status block"; continue; }
	# one entry per code: "  N  text" with its continuation lines
	entries=$(awk '/^  [0-9]  /{if (e) print e; e=substr($0, 6); c=$1; e=c " " e; next}
		/^     /{sub(/^ +/, ""); e=e " " $0; next} END{if (e) print e}' <<<"$block")
	sect=$(awk -v c=".B memcore $cmd" '$0==c{on=1; next} on&&/^\.(TP|SH)/{exit} on' <<<"$man_exit" |
		tr '\n' ' ' | sed 's/\\-/-/g; s/  */ /g')
	[ -n "$sect" ] || fail "memcore(8) EXIT STATUS has no entry for memcore $cmd"
	codes=""
	while read -r e; do
		codes="$codes${e%% *}"
		expect_contains "memcore $cmd: --help's exit '$e' in memcore(8)" "$sect" "$e"
	done <<<"$entries"
	# and memcore(8) lists no code --help lacks
	man_codes=$(grep -oE '(^|; )[0-9] ' <<<"$sect" | tr -dc '0-9')
	expect_eq "memcore $cmd: codes in --help and memcore(8)" "$codes" "$man_codes"
	echo "$cmd" "$codes" >>"$TMP/codes"
done
expect_eq "codes per command" "$(tr '\n' ' ' <"$TMP/codes")" \
	"check 0123 audit 0123 plan 012 usage 02 report 0123 keys 02 stage 012 "
# ... each one what the command really returns
dead_slurm_conf "$TMP/dead-slurm.conf"
rc_of() { run_mc "$@"; echo "$RC"; }
E=$TMP/empty.conf
expect_eq "check 0" "$(rc_of check --config "$E" --topology "$T8" --gpus 1)" 0
expect_eq "check 1" "$(rc_of check --config "$E" --topology "$T8" --gpus 1 --mem 1G)" 1
expect_eq "check 2" "$(rc_of check --config "$E" --topology "$T8")" 2
expect_eq "check 3" "$(SLURM_CONF=$TMP/dead-slurm.conf rc_of check --config "$E" --gpus 1 --partition p)" 3
printf 'HostRamPerGpuRam=16\n' >"$TMP/strict.conf"
expect_eq "audit 0" "$(rc_of audit --config "$E" --topology "$T8")" 0
expect_eq "audit 1" "$(rc_of audit --config "$TMP/strict.conf" --topology "$T8")" 1
expect_eq "audit 2" "$(rc_of audit --config "$E" --cache "$TMP/none")" 2
expect_eq "audit 3" "$(SLURM_CONF=$TMP/dead-slurm.conf rc_of audit --config "$E" --partition p)" 3
expect_eq "plan 0" "$(rc_of plan --config "$E" --topology "$T8" --gpus 2)" 0
expect_eq "plan 1" "$(rc_of plan --config "$E" --topology "$T8" --gpus 2 --cores 0-3,8)" 1
expect_eq "plan 2" "$(rc_of plan --config "$E" --topology "$T8" --gpus 99)" 2
CG=$TMP/cg
mkdir -p "$CG"
for f in memory.limit_in_bytes memory.usage_in_bytes memory.max_usage_in_bytes; do echo 1048576 >"$CG/$f"; done
printf 'total_cache 0\ntotal_rss 1048576\ntotal_active_file 0\ntotal_inactive_file 0\ntotal_shmem 0\ntotal_mapped_file 0\ntotal_rss_huge 0\n' >"$CG/memory.stat"
echo 0 >"$CG/memory.failcnt"
printf 'oom_kill_disable 0\nunder_oom 0\noom_kill 0\n' >"$CG/memory.oom_control"
expect_eq "usage 0 (a copied v1 cgroup)" "$(rc_of usage --cgroup "$CG")" 0
expect_eq "usage 2" "$(rc_of usage --pid 0)" 2
expect_eq "report 2" "$(rc_of report notajob)" 2
expect_eq "report 3" "$(SLURM_CONF=$TMP/dead-slurm.conf rc_of report 1)" 3
expect_eq "keys 0" "$(rc_of keys)" 0
expect_eq "keys 2" "$(rc_of keys extra)" 2
mkdir -p "$TMP/stage-src"
expect_eq "stage 0" "$(rc_of stage --quiet "$TMP/stage-src" "$TMP/stage-dst")" 0
expect_eq "stage 2" "$(rc_of stage "$TMP/stage-none" "$TMP/stage-dst")" 2

# 4. A broken job file names the option (or its variable), the file, and
# where: jansson's line and column; a bad value names its key.
printf '{\n  "zero_optimization": {"stage": 2,}\n}\n' >"$TMP/broken.json"
chk --deepspeed-config "$TMP/broken.json"
expect_eq "broken ds_config exit" "$RC" 2
expect_eq "broken ds_config message" "$ERR" \
	"memcore: --deepspeed-config=$TMP/broken.json: not JSON at line 2, column 36: string or '}' expected near '}'"
chk --model-config "$TMP/broken.json"
expect_eq "broken config.json message" "$ERR" \
	"memcore: --model-config=$TMP/broken.json: not JSON at line 2, column 36: string or '}' expected near '}'"
MEMCORE_DEEPSPEED_CONFIG=$TMP/broken.json chk
expect_eq "broken ds_config from the variable" "$ERR" \
	"memcore: MEMCORE_DEEPSPEED_CONFIG=$TMP/broken.json: not JSON at line 2, column 36: string or '}' expected near '}'"
printf '{"zero_optimization": {"stage": 7}}\n' >"$TMP/stage7.json"
chk --deepspeed-config "$TMP/stage7.json"
expect_eq "bad stage names option, file and key" "$ERR" \
	"memcore: --deepspeed-config=$TMP/stage7.json: zero_optimization.stage: expected 0, 1, 2, 3 or \"auto\""
: >"$TMP/empty.json"
chk --model-config "$TMP/empty.json"
expect_eq "empty config.json" "$ERR" \
	"memcore: --model-config=$TMP/empty.json: not JSON at line 1: '[' or '{' expected near end of file"
run_mc check --config "$TMP/empty.conf" --topology "$T8" --slurm-options '{"gres": "gpu:1",}'
expect_eq "--slurm-options syntax error: where" "$ERR" \
	"memcore: check: --slurm-options: not JSON at column 18: string or '}' expected near '}'"

# 5. No "(this node)" where there is no node: memcore check (what the
# cli_filter runs at submission) names where the GPU memory figure came
# from: memcore.conf's key, the option, the MIG profile or the topology.
gpu_line() { grep -E '^ *GPUs ' <<<"$OUT"; }
printf 'NodeRam=512G\nNodeCores=64\nNodeGpus=4\nGpuMemory=80G\n' >"$TMP/login.conf"
run_mc check --config "$TMP/login.conf" --slurm-options '{"gpus": "4", "mem": "400G"}'
expect_eq "cli_filter form, policy node: GpuMemory=" "$(gpu_line)" \
	"  GPUs          4 x 80 GiB (memcore.conf GpuMemory=)"
run_mc check --config "$TMP/login.conf" --gpus 2
expect_eq "policy node: GpuMemory=" "$(gpu_line)" "  GPUs          2 x 80 GiB (memcore.conf GpuMemory=)"
printf 'NodeRam=512G\nNodeCores=64\nNodeGpus=4\nGpuTypeMemory=h100:80G,1g.10gb:10G\n' >"$TMP/types.conf"
run_mc check --config "$TMP/types.conf" --gpus 1 --gpu-type h100
expect_eq "typed: GpuTypeMemory= for the type" "$(gpu_line)" \
	"  GPUs          1 x 80 GiB (memcore.conf GpuTypeMemory= for h100)"
run_mc check --config "$TMP/types.conf" --gpus 1 --gpu-type a100_2g.20gb
expect_eq "MIG profile" "$(gpu_line)" "  GPUs          1 x 20 GiB (MIG profile a100_2g.20gb)"
run_mc check --config "$TMP/types.conf" --gpus 1
expect_eq "unknown: the keys that would give it" "$(gpu_line)" \
	"  GPUs          1 x unknown memory (no GpuTypeMemory= or GpuMemory=)"
chk --gpu-memory 16G
expect_eq "--gpu-memory" "$(gpu_line)" "  GPUs          1 x 16 GiB (--gpu-memory)"
chk
expect_eq "topology: its file" "$(gpu_line)" \
	"  GPUs          1 x 14.76 GiB (topology $(basename "$T8"))"
for conf in login types; do
	run_mc check --config "$TMP/$conf.conf" --gpus 1 --json
	case "$OUT" in *"this node)"*) fail "check --json ($conf): '(this node)' in: $OUT" ;; esac
done
# the audit of a described node names memcore.conf's figure too
printf 'NodeRam=330G\nNodeCores=64\nNodeGpus=4\nGpuMemory=80G\n' >"$TMP/small.conf"
run_mc audit --config "$TMP/small.conf"
expect_contains "audit of a described node" "$OUT" "GPUs          4 x 80 GiB (memcore.conf GpuMemory=)"

# 6. memcore plan: --cores N (a count in memcore check) is not taken for a
# CPU list; --cpu-list takes the list, and the plan says it is one.
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 2 --cores 4
expect_eq "plan --cores 4: refused" "$RC" 2
expect_eq "plan --cores 4: says both readings" "$ERR" \
	"memcore: plan: --cores=4: 4 cores, or CPU 4? memcore plan takes the CPUs the task may use as a list: --cpu-list=0-3 for the first 4 CPUs, --cpu-list=4 for CPU 4 alone"
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 2 --cores 1
expect_eq "plan --cores 1: refused" "$RC" 2
expect_contains "plan --cores 1" "$ERR" "--cpu-list=1 for CPU 1 alone"
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 1 --cpu-list 4 --json
expect_eq "--cpu-list 4 is CPU 4" "$(jq -r '.gpus[0].cpus' <<<"$OUT")" 4
expect_eq "--cpu-list 4: one core" "$(jq -r '.gpus[0].cores' <<<"$OUT")" 1
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 1 --cpu-list 0-3,8
expect_contains "the plan says a list, and its size" "$OUT" "inside CPU list 0-3,8 (5 CPUs)"
# a list given as --cores (unambiguous) is the same plan as --cpu-list
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 2 --cpu-list 0-3,8 --json
want=$OUT
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 2 --cores 0-3,8 --json
expect_eq "--cores LIST as --cpu-list LIST" "$OUT" "$want"
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 1 --cpu-list 0-3 --cores 0-5
expect_eq "two different lists" "$RC" 2
run_mc plan --config "$TMP/empty.conf" --topology "$T8" --gpus 1 --cpu-list x
expect_eq "bad list names its option" "$ERR" "memcore: plan: --cpu-list=x: not a list of CPU numbers such as 0-3,8"

# 7. --partition without a readable slurm.conf: an error naming the path,
# exit 2 (as listed in EXIT STATUS), never this host audited in its place.
run_mc audit --config "$TMP/empty.conf" --partition gpu
expect_eq "audit --partition, no slurm.conf: exit" "$RC" 2
expect_eq "audit --partition, no slurm.conf: nothing on stdout" "$OUT" ""
expect_eq "audit --partition, no slurm.conf: names the path" "$ERR" \
	"memcore: audit: --partition=gpu: cannot read slurm.conf $SLURM_CONF (No such file or directory), where the partition's nodes come from; this host is not judged in their place: set SLURM_CONF to a readable slurm.conf, or describe the node with --topology FILE.xml, --cache FILE or NodeRam=/NodeCores= on the partition's line of memcore.conf"
printf 'ClusterName=x\n' >"$TMP/unreadable.conf"
chmod 000 "$TMP/unreadable.conf"
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
	chmod 755 "$TMP"
	RC=0
	ERR=$(SLURM_CONF=$TMP/unreadable.conf runuser -u nobody -- "$MEMCORE" audit \
		--config "$TMP/empty.conf" --partition gpu 2>&1 >/dev/null) || RC=$?
	expect_eq "unreadable slurm.conf: exit" "$RC" 2
	expect_contains "unreadable slurm.conf: path and why" "$ERR" \
		"cannot read slurm.conf $TMP/unreadable.conf (Permission denied)"
fi
run_mc audit --config "$TMP/empty.conf" --all
expect_eq "audit --all, no slurm.conf: exit" "$RC" 2
expect_contains "audit --all names the path" "$ERR" "cannot read slurm.conf $SLURM_CONF"
run_mc check --config "$TMP/empty.conf" --partition gpu --gpus 1
expect_eq "check --partition, no slurm.conf: exit" "$RC" 2
expect_contains "check --partition names the path" "$ERR" \
	"memcore: check: --partition=gpu: cannot read slurm.conf $SLURM_CONF (No such file or directory)"
# ... a node that is described is still judged under the partition's
# policy, a partition memcore.conf names; one it does not name is no
# partition memcore knows without slurm.conf: refused, as check does
printf 'PartitionName=gpu NodeRam=512G NodeCores=64 NodeGpus=4 GpuMemory=80G\n' >"$TMP/pl.conf"
run_mc audit --config "$TMP/pl.conf" --partition gpu --topology "$T8"
expect_eq "audit --partition --topology: the file's node" "$RC" 0
run_mc audit --config "$TMP/empty.conf" --partition gpu --topology "$T8"
expect_eq "audit --partition --topology, a partition nobody names: exit" "$RC" 2
expect_contains "... named as check names it" "$ERR" "memcore: audit: --partition=gpu: no such partition in $TMP/empty.conf (no PartitionName= lines)"
run_mc check --config "$TMP/pl.conf" --partition gpu --gpus 1
expect_eq "check --partition with the partition's Node* keys" "$RC" 0
run_mc check --config "$TMP/empty.conf" --partition gpu --gpus 0
expect_eq "a GPU-less step still passes" "$RC" 0

finish
