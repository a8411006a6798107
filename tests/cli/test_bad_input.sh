#!/bin/bash
# Bad input to the memcore command, as one table: every row gives the exact
# exit status and a piece of the message it must print. Options, memcore.conf
# and topologies; what a user can set through sbatch/srun is the same table
# on a real Slurm in tests/integration/test_70_bad_input.sh. No row may crash
# (a signal would show as an exit status above 128).
. "$(dirname "$0")/lib.sh"

T8=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
L2=$DATA/local-2numa-2gpu.xml
ROWS=0

# row EXIT NEEDLE ARGS...: memcore ARGS must exit EXIT and print NEEDLE on
# stderr (usage errors) or stdout (verdicts).
row() {
	local want=$1 needle=$2
	shift 2
	ROWS=$((ROWS + 1))
	run_mc "$@"
	if [ "$RC" != "$want" ]; then
		fail "row $ROWS (memcore $*): exit $RC, want $want; stderr: $ERR"
		return
	fi
	case "$ERR$OUT" in
	*"$needle"*) ;;
	*) fail "row $ROWS (memcore $*): '$needle' not in: $ERR$OUT" ;;
	esac
}
# conf NAME TEXT: a policy file (printf format) under $TMP.
conf() { printf "$2" >"$TMP/$1.conf"; }
chk() { row "$1" "$2" check --config "$TMP/empty.conf" --topology "$T8" "${@:3}"; }
cfg() { row "$1" "$2" check --config "$TMP/$3.conf" --topology "$T8" --gpus 1; }

# --- options --------------------------------------------------------------
chk 2 "--gpus=: empty value" --gpus ''
chk 2 "--dataloader-workers=: empty value" --gpus 1 --dataloader-workers ''
chk 2 "--dataloader-workers=-1:" --gpus 1 --dataloader-workers -1
chk 2 "--dataloader-workers=99999999999: out of range" --gpus 1 --dataloader-workers 99999999999
chk 2 "--dataloader-workers=18446744073709551617: out of range" --gpus 1 --dataloader-workers 18446744073709551617
chk 2 "--dataloader-workers=1025: out of range (at most 1024)" --gpus 1 --dataloader-workers 1025
# Several DataLoaders as a sum (8+2): each part a count, the total in range.
chk 2 "memcore: --dataloader-workers=8+: an empty part: expected N or one count per DataLoader joined by +, such as 8+2" --gpus 1 --dataloader-workers 8+
chk 2 "memcore: --dataloader-workers=+2: an empty part" --gpus 1 --dataloader-workers +2
chk 2 "memcore: --dataloader-workers=8++2: an empty part" --gpus 1 --dataloader-workers 8++2
chk 2 "memcore: --dataloader-workers=a+1: 'a': not a number" --gpus 1 --dataloader-workers a+1
chk 2 "more than 8 DataLoaders (parts joined by +)" --gpus 1 --dataloader-workers 1+1+1+1+1+1+1+1+1
chk 2 "memcore: --dataloader-workers=1000+25: out of range (at most 1024 in all)" --gpus 1 --dataloader-workers 1000+25
chk 2 "--dataloader-workers=abc:" --gpus 1 --dataloader-workers abc
chk 2 "--dataloader-workers=2x: not a whole number" --gpus 1 --dataloader-workers 2x
chk 2 "--dataloader-workers=0x10: not a whole number" --gpus 1 --dataloader-workers 0x10
chk 2 "--dataloader-workers=1e3: not a whole number" --gpus 1 --dataloader-workers 1e3
chk 2 "--dataloader-workers= 2: not a number" --gpus 1 --dataloader-workers ' 2'
chk 2 "--dataloader-workers=2: given twice with different values" --gpus 1 --dataloader-workers 1 --dataloader-workers 2
chk 2 "--gpus=2: given twice with different values" --gpus 1 --gpus 2
chk 2 "--gpus=99999: out of range (at most 64)" --gpus 99999
chk 2 "--gpus: missing value" --gpus
chk 2 "--mem=-5G: negative value not allowed" --gpus 1 --mem -5G
chk 2 "--mem=99999999999999999999: too large" --gpus 1 --mem 99999999999999999999
chk 2 "--mem=20000000T: too large" --gpus 1 --mem 20000000T
chk 2 "--mem=5Q: unknown size suffix 'Q'" --gpus 1 --mem 5Q
chk 2 "--mem=1G2:" --gpus 1 --mem 1G2
chk 2 "--gpu-memory=abc: not a number" --gpus 1 --gpu-memory abc
chk 2 "--model-params=7Q: unknown suffix 'Q'" --gpus 1 --model-params 7Q
chk 2 "--model-params=0: must be at least 1" --gpus 1 --model-params 0
chk 2 "--model-params=-7B:" --gpus 1 --model-params -7B
chk 2 "--zero-stage=4: expected a ZeRO stage 0, 1, 2 or 3" --gpus 1 --zero-stage 4
chk 2 "--zero-stage=-1:" --gpus 1 --zero-stage -1
chk 2 "--offload=everything: expected none, optimizer, all or params" --gpus 1 --offload everything
chk 2 "--offload=: empty value" --gpus 1 --offload ''
chk 2 "--zero-stage=3" --gpus 2 --model-params 7B --zero-stage 2 --offload all
# Options that no policy accepts together: refused as srun/sbatch/salloc
# refuse them (mc_opts_check), before any node is looked at.
chk 2 "memcore: --offload=all (parameter offload) needs --zero-stage=3, and no stage is given: add --zero-stage=3" --gpus 1 --offload all
chk 2 "memcore: --offload=optimizer needs --zero-stage=1, 2 or 3 (ZeRO offload has no stage 0): add --zero-stage" --gpus 1 --offload optimizer --model-params 7B
chk 2 "memcore: --offload=optimizer needs --model-params" --gpus 1 --offload optimizer --zero-stage 2
row 2 "needs --zero-stage=3" check --config "$TMP/empty.conf" --gpus 1 --offload all
chk 2 "--largest-layer-params=0: must be at least 1" --gpus 1 --largest-layer-params 0
chk 2 "--largest-layer-params=7Q: unknown suffix 'Q'" --gpus 1 --largest-layer-params 7Q
chk 2 "--largest-layer-params: more than --model-params" --gpus 1 --model-params 1B --largest-layer-params 2B
chk 2 "--zero-init=maybe:" --gpus 1 --zero-init maybe
chk 2 "--zero-init=no: given twice with different values" --gpus 1 --zero-init yes --zero-init no
chk 2 "--nodes=0: must be at least 1" --gpus 1 --nodes 0
chk 2 "check: unknown option '--bogus'" --gpus 1 --bogus
chk 2 "check: unexpected argument 'extra'" --gpus 1 extra
chk 2 "check: --gpus is required" --dataloader-workers 2
row 2 "unknown command 'bogus'" bogus

# --- memcore.conf ---------------------------------------------------------
conf unknown 'Bogus=1\n';                        cfg 2 "unknown.conf:1: Bogus: unknown key" unknown
conf size 'Mode=warn\nRamPerWorker=4Q\n';       cfg 2 "size.conf:2: RamPerWorker: unknown size suffix 'Q'" size
conf negsize 'RamPerTask=-1G\n';                 cfg 2 "negsize.conf:1: RamPerTask: negative value not allowed" negsize
conf ratio 'HostRamPerGpuRam=abc\n';             cfg 2 "ratio.conf:1: HostRamPerGpuRam: not a number" ratio
conf negratio 'HostRamPerGpuRam=-1\n';           cfg 2 "negratio.conf:1: HostRamPerGpuRam: negative value not allowed" negratio
conf dup 'Mode=warn\nmode=enforce\n';            cfg 2 "dup.conf:2: mode: duplicate key (first set on line 1)" dup
conf part 'PartitionName=debug Bogus=2\n';       cfg 2 "part.conf:1: Bogus: unknown key" part
conf partmid 'Mode=warn PartitionName=x\n';      cfg 2 "partmid.conf:1: PartitionName= must start its line" partmid
conf partdup 'PartitionName=a Mode=warn\nPartitionName=a Mode=off\n'
cfg 2 "partdup.conf:2: PartitionName=a: duplicate partition (first on line 1)" partdup
conf novalue 'Mode=\n';                          cfg 2 "novalue.conf:1: Mode: missing value" novalue
conf noeq 'Mode\n';                              cfg 2 "noeq.conf:1: expected Key=Value (a word without '=')" noeq
conf onerror 'OnError=maybe\n';                  cfg 2 "onerror.conf:1: OnError: expected refuse or allow" onerror
conf workers 'DataloaderWorkers=1025\n';         cfg 2 "workers.conf:1: DataloaderWorkers: out of range" workers
{ printf 'Mode=enforce\nRamPerTask='; head -c 102400 /dev/zero | tr '\0' 1; printf '\n'; } >"$TMP/long.conf"
cfg 2 "long.conf:2: line longer than 4096 bytes" long
printf 'Mode=warn\0\n' >"$TMP/nul.conf";         cfg 2 "nul.conf:1: NUL byte in line" nul
cfg 2 "$TMP/missing.conf: No such file or directory" missing
mkdir "$TMP/dir.conf";                           cfg 2 "$TMP/dir.conf: is a directory" dir
# Unreadable: tests run as root, who reads anything, so the row runs as
# nobody on a file of mode 0600 in a directory nobody may enter.
conf unreadable 'Mode=warn\n'
chmod 0600 "$TMP/unreadable.conf"
chmod 0755 "$TMP"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	ROWS=$((ROWS + 1))
	RC=0
	ERR=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$MEMCORE" check \
		--config "$TMP/unreadable.conf" --topology "$T8" --gpus 1 2>&1 >/dev/null) || RC=$?
	expect_eq "row $ROWS unreadable config (as nobody): exit" "$RC" 2
	expect_contains "row $ROWS unreadable config: message" "$ERR" "$TMP/unreadable.conf: Permission denied"
else
	chmod 0000 "$TMP/unreadable.conf"
	cfg 2 "$TMP/unreadable.conf: Permission denied" unreadable
fi

# --- topologies -----------------------------------------------------------
topo() { row "$1" "$2" "$3" --config "$TMP/empty.conf" --topology "$4" "${@:5}"; }
topo 2 "topology $TMP/none.xml: No such file or directory" check "$TMP/none.xml" --gpus 1
topo 2 "topology $TMP: Is a directory" audit "$TMP"
head -c 3000 "$L2" >"$TMP/trunc.xml"
topo 2 "hwloc cannot load this XML (truncated" check "$TMP/trunc.xml" --gpus 1
: >"$TMP/zero.xml"
topo 2 "topology $TMP/zero.xml:" audit "$TMP/zero.xml"
sed 's/topology version="2.0"/topology version="3.0"/' "$L2" >"$TMP/v3.xml"
topo 2 "XML format 3.x is newer than hwloc" check "$TMP/v3.xml" --gpus 1
# No NUMA node: every NUMANode element removed.
awk '/<object type="NUMANode"/ { skip = 1 } !skip { print } skip && /<\/object>/ { skip = 0 }' "$L2" >"$TMP/nonuma.xml"
[ "$(grep -c NUMANode "$TMP/nonuma.xml")" = 0 ] || fail "nonuma.xml still has NUMA nodes"
topo 2 "hwloc cannot load this XML" audit "$TMP/nonuma.xml"
# No GPUs: the PCI bridges (and the GPUs below them) removed. The audit
# counts 0 GPUs; a check of 1 GPU says the GPU memory is unknown.
awk '/<object type="Bridge"/ { skip = 1; d = 0 }
     skip { d += gsub(/<object/, "&") - gsub(/<\/object>/, "&"); if (d <= 0) skip = 0; next }
     { print }' "$L2" >"$TMP/nogpu.xml"
[ "$(grep -c PCIDev "$TMP/nogpu.xml")" = 0 ] || fail "nogpu.xml still has PCI devices"
topo 1 "2 NUMA nodes, 0 GPUs" audit "$TMP/nogpu.xml"
topo 1 "GPU memory unknown: the RAM floor was not checked (an administrator sets GpuMemory=" check "$TMP/nogpu.xml" --gpus 1
# GPUs whose memory the topology does not give (no CUDA/OpenCL OS device):
# the floor is reported as unchecked, and GpuMemory= fills it in.
awk '/<object type="OSDev"/ { skip = 1 } !skip { print } skip && /<\/object>/ { skip = 0 }' "$L2" >"$TMP/nomem.xml"
topo 1 "GPU memory not in the topology; set GpuMemory=" audit "$TMP/nomem.xml"
conf gpumem 'GpuMemory=16G\nReservedCores=0\nDataloaderWorkers=0\nRamPerTask=0\n'
row 0 "" check --config "$TMP/gpumem.conf" --topology "$TMP/nomem.xml" --gpus 1 --mem 17G --cores 1
row 1 "16 GiB GPU floor" check --config "$TMP/gpumem.conf" --topology "$TMP/nomem.xml" --gpus 1 --mem 15G --cores 1

# --- what 0.3.0 still took or misread --------------------------------------
# More shards than the node has (8 GPUs x 32): no placement, not "fits".
chk 1 "memcore: this step cannot fit: it asks for 1000 shards, the node has 256 (8 GPUs x 32):" --shards 1000 --shards-per-gpu 32
chk 1 "  fix: at most 256 shards on this node (8 GPUs x 32), or another partition" --shards 1000 --shards-per-gpu 32
chk 0 "memcore: this step fits:" --shards 256 --shards-per-gpu 32
# --slurm-options as Slurm never writes it: refused, never "not a GPU step".
so() { row "$1" "$2" check --config "$TMP/empty.conf" --topology "$T8" --slurm-options "$3"; }
so 2 'memcore: check: --slurm-options: "gpus": 8 is not a string (Slurm'"'"'s options are strings)' '{"gpus": 8}'
so 2 'memcore: check: --slurm-options: "gres": ["gpu:8"] is not a string' '{"gres": ["gpu:8"]}'
# ... but what Slurm's own json_cli_options() writes is read: "argv" is the
# script's arguments, an array (sbatch 22.05 gives "argv":[] with --wrap)
so 1 "memcore: this step needs more than it was given:" '{"cpus-per-gpu":"6","gpus-per-node":"8","mem":"150G","nodes":"1","test-only":"set","verbose":"1","wrap":"true","argv":[]}'
so 2 "memcore: check: --slurm-options: column 20: an option given twice (duplicate object key near '\"gpus\"')" '{"gpus": "8", "gpus": "1"}'
so 2 "memcore: cannot read the job's options: --gpus=8x: a GPU count that is not a whole number (expected [type:]count)" '{"gpus": "8x"}'
so 2 "memcore: cannot read the job's options: --gpus-per-node=h100:: a GPU count that is not a whole number (expected [type:]count)" '{"gpus-per-node": "h100:"}'
so 2 "memcore: cannot read the job's options: --gres=gpu:a100:x: a GPU count that is not a whole number (expected [type:]count)" '{"gres": "gpu:a100:x"}'
so 2 "memcore: cannot read the job's options: --tres-per-task=gres/gpu:2x: a GPU count that is not a whole number (expected [type:]count)" '{"tres-per-task": "gres/gpu:2x"}'
so 2 "memcore: cannot read the job's options: --gres=gres:mps:25x: an MPS count that is not a whole number (expected [type:]count)" '{"gres": "gres:mps:25x"}'
so 2 "memcore: cannot read the job's options: --gres=shard:a100:x: a shard count that is not a whole number (expected [type:]count)" '{"gres": "shard:a100:x"}'
so 2 "memcore: cannot read the job's options: --gres=gpu:2x,shard:1: a GPU count that is not a whole number (expected [type:]count)" '{"gres": "gpu:2x,shard:1"}'
so 1 "memcore: this step needs more than it was given:" '{"gres": "gres:gpu:h100:2", "mem": null, "gpus": "h100"}'
# The TRES form a newer Slurm prints is a GPU count too, not an error.
so 1 "  GPUs          2 x 14.76 GiB" '{"gpus-per-node": "gres/gpu:h100:2"}'
# NUMA sizes that wrap 2^64 (hwloc takes local_memory as any uint64).
sed 's/local_memory="12884901888"/local_memory="18446744073709551615"/' "$L2" >"$TMP/wrap.xml"
topo 2 "memcore: topology $TMP/wrap.xml: the NUMA nodes' memory (local_memory) adds up to more than 2^64 bytes, at NUMA node 1" audit "$TMP/wrap.xml"
topo 2 "memcore: topology $TMP/wrap.xml: the NUMA nodes' memory (local_memory) adds up to more than 2^64 bytes, at NUMA node 1" check "$TMP/wrap.xml" --gpus 1
# A CPU list with CPUs the node lacks (the g4dn node has 0-95).
topo 2 "memcore: plan: --cpu-list=500-600: CPUs 500-600 are not on node $T8 (its CPUs: 0-95)" plan "$T8" --cpu-list 500-600
topo 2 "memcore: plan: --cpu-list=90-100: CPUs 96-100 are not on node $T8 (its CPUs: 0-95)" plan "$T8" --cpu-list 90-100
topo 2 "memcore: plan: --cores=0,200: CPUs 200 are not on node $T8 (its CPUs: 0-95)" plan "$T8" --cores 0,200
topo 0 "" plan "$T8" --cpu-list 0-95
# A RAM floor per worker above its ceiling, at load, with file:line.
conf minmax 'MinRamPerWorker=8G\nMaxRamPerWorker=4G\n'
cfg 2 "memcore: $TMP/minmax.conf:1: MinRamPerWorker: MinRamPerWorker=8G is above MaxRamPerWorker=4G" minmax
conf minmaxp 'MaxRamPerWorker=4G\nPartitionName=gpu MinRamPerWorker=5G\n'
cfg 2 "memcore: $TMP/minmaxp.conf:2: PartitionName=gpu: MinRamPerWorker=5G is above MaxRamPerWorker=4G" minmaxp
# A file that is no memcore.conf: nothing of its value, nor of a line that
# is no Key=Value, is printed.
conf secret 'password=hunter2\n'
cfg 2 "memcore: $TMP/secret.conf:1: password: unknown key" secret
case "$ERR" in *hunter2*) fail "secret.conf: the value is printed: $ERR" ;; esac
conf shadow 'root:$6$s3cret:19000:0:99999:7:::\n'
cfg 2 "memcore: $TMP/shadow.conf:1: expected Key=Value (a word without '=')" shadow
case "$ERR" in *s3cret*) fail "shadow.conf: the line is printed: $ERR" ;; esac
# Job ids: 1..4294967294, digits only; never wrapped to another job.
for id in 4294967297 4294967295 0 ' 5' +5 5x ''; do
	row 2 "memcore: report: '$id' is not a job id (1 to 4294967294, digits only; an array's tasks: 12_3, 12_[1-3,5])" report "$id"
done
# --svg FILE that cannot be written: said before Slurm is asked.
row 2 "memcore: report: --svg $TMP/no-such-dir/x.svg: No such file or directory" report 5 --svg "$TMP/no-such-dir/x.svg"
row 2 "memcore: report: --svg $TMP/empty.conf/x.svg: Not a directory" report 5 --svg "$TMP/empty.conf/x.svg"
row 2 "memcore: report: --svg : No such file or directory" report 5 --svg ''
# An unparsable slurm.conf: memcore says so (exit 2), where libslurm's
# parser would end the process with exit 1 and an empty --json.
printf 'ClusterName=x\nSlurmctldHost=localhost\nNodeName=n1 CPUs=abc\n' >"$TMP/bad-slurm.conf"
SLURM_CONF=$TMP/bad-slurm.conf row 2 "memcore: slurm.conf $TMP/bad-slurm.conf: libslurm cannot read it (its parser's message is above)" check --config "$TMP/empty.conf" --gpus 1 --json
expect_eq "unparsable slurm.conf: nothing on stdout" "$OUT" ""
SLURM_CONF=$TMP/bad-slurm.conf row 2 "memcore: slurm.conf $TMP/bad-slurm.conf: libslurm cannot read it (its parser's message is above)" report 5

# --- found by the house pass's hostile run -------------------------------
# An empty --topology= or --partition= is no file and no partition: never
# this host or the default in their place.
row 2 "memcore: --topology=: empty value" check --config "$TMP/empty.conf" --gpus 1 --topology=
row 2 "memcore: --topology=: empty value" audit --config "$TMP/empty.conf" --topology=
row 2 "memcore: --topology=: empty value" plan --config "$TMP/empty.conf" --topology=
row 2 "memcore: --partition=: empty value" check --config "$TMP/empty.conf" --topology "$T8" --gpus 1 --partition=
# An unknown letter inside a bundle is named, not the word before it.
row 2 "memcore: check: unknown option '-x'" check --gpus 1 -xh
row 2 "memcore: usage: unknown option '-x'" usage --pid 1 -xz
row 2 "memcore: stage: unknown option '-x'" stage -j 2 -qx a b
# memcore report's own options: one message, memcore's, not getopt's too.
row 2 "memcore: report: unknown option '--bogus'" report 1 --bogus
expect_eq "report --bogus: one line on stderr" "$(printf '%s\n' "$ERR" | wc -l)" 1
row 2 "memcore: report: --svg: missing value" report 1 --svg
expect_eq "report --svg: one line on stderr" "$(printf '%s\n' "$ERR" | wc -l)" 1

# A value's control bytes are escaped in the message: one line, never a
# forged second "memcore:" line or a terminal escape.
chk 2 "memcore: --mem=1\\nmemcore: forged: unknown size suffix" --gpus 1 --mem $'1\nmemcore: forged'
expect_eq "--mem with a newline: one line on stderr" "$(printf '%s\n' "$ERR" | wc -l)" 1
chk 2 'memcore: --gpus=1\x1b[2J: not a whole number' --gpus $'1\x1b[2J'
row 2 'memcore: --pid=1\x1b[31m: not a process id' usage --pid $'1\x1b[31m'

# A long path is cut with "..." in the message, so that the reason after it
# always shows (a 1000-character --dataset hid why before): every path
# option, as usage --cgroup's.
LONG=/x/$(printf 'p%.0s' {1..1100})
chk 2 "memcore: --dataset=/x/pppp" --gpus 1 --dataset "$LONG" --dataset-in-memory
chk 2 "ppp...: 1103 characters (at most 1023)" --gpus 1 --dataset "$LONG" --dataset-in-memory
chk 2 "ppp... (--dataset) is unknown: it cannot be read (No such file or directory); give its size in RAM: --dataset-in-memory=SIZE" \
	--gpus 1 --dataset "${LONG:0:1000}" --dataset-in-memory
chk 2 "ppp...: cannot open: No such file or directory" --gpus 1 --deepspeed-config "${LONG:0:1000}"
chk 2 "ppp...: cannot open: No such file or directory" --gpus 1 --model-config "${LONG:0:1000}"
mkdir -p "$TMP/${LONG:3:200}" && printf '{bad' >"$TMP/${LONG:3:200}/ds.json"
chk 2 "ppp...: not JSON at line 1, column 4:" --gpus 1 --deepspeed-config "$TMP/${LONG:3:200}/ds.json"

# memcore report --svg FILE, as root for a user (DESIGN: trust
# boundaries): never through a link a user planted (a root file
# overwritten), never into a FIFO (a hang), never over another user's
# file, never in a directory anyone can write that is not sticky; said
# before Slurm is asked, exit 2, the target untouched.
SV=$TMP/svg
mkdir -p "$SV" && echo secret >"$SV/target"
ln -s "$SV/target" "$SV/link"
mkfifo "$SV/fifo"
mkdir -m 0777 "$SV/open" && chmod 0777 "$SV/open"
row 2 "memcore: report: --svg $SV/link: a symbolic link: refused, never followed (name the file itself)" report 1 --svg "$SV/link"
expect_eq "--svg through a link: its target untouched" "$(cat "$SV/target")" secret
RC=0; timeout 10 "$MEMCORE" report 1 --svg "$SV/fifo" >"$TMP/out" 2>"$TMP/err" || RC=$?
expect_eq "--svg on a FIFO: exit 2, not a hang" "$RC" 2
expect_contains "--svg on a FIFO: refused" "$(cat "$TMP/err")" "memcore: report: --svg $SV/fifo: not a regular file: refused"
row 2 "memcore: report: --svg $SV/open/p.svg: its directory is writable by anyone (mode 0777) and not sticky: anyone could replace the file; refused" report 1 --svg "$SV/open/p.svg"
row 2 "memcore: report: --svg $SV/: Is a directory" report 1 --svg "$SV/"
row 2 "memcore: report: --svg $SV/ppp" report 1 --svg "$SV/${LONG:3:1000}"
row 2 "ppp...: File name too long" report 1 --svg "$SV/${LONG:3:1000}"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	echo theirs >"$SV/theirs" && chown nobody "$SV/theirs"
	row 2 "memcore: report: --svg $SV/theirs: a file of uid $(id -u nobody), not yours: refused, never replaced" report 1 --svg "$SV/theirs"
	expect_eq "--svg over another user's file: untouched" "$(cat "$SV/theirs")" theirs
fi

[ "$ROWS" -ge 40 ] || fail "only $ROWS rows (want at least 40)"
echo "$ROWS rows"
finish
