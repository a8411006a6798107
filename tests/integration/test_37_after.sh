#!/bin/bash
# After the step on a real Slurm: memcore samples the step's
# memory cgroup while it runs and, at its end, says what it used against
# what it asked and what the rule needs, per node, with what to ask next
# time.
#  (a) a step that maps a 512 MiB file and touches every page while holding
#      100 MiB of anonymous memory: about 100 MiB non-reclaimable and about
#      512 MiB of page cache, next to Slurm's MaxRSS (sstat, jobacct_gather/
#      linux), which counts the mapped file (five times the anon: the sizes
#      are as small as that contrast allows; writing gigabytes takes
#      minutes under the guests' emulation);
#  (b) a step that holds 512 MiB of anonymous memory for 3 s and frees it:
#      the 512 MiB peak, though its memory at the end is small;
#  (c) an OOM-killed step: its summary names what held the memory;
#  (d) always one line in slurmd's log, with or without --memcore=explain;
#      Report=yes prints the summary unasked; SampleInterval=0: no samples;
#  (e) memcore report after the step, by the job's user, refused to another
#      user, and what it says of a job slurmctld forgot without accounting;
#  (f) the PrometheusTextfile: the counts of concurrent steps, refused and
#      OOM-killed ones, none lost; parsed by promtool check metrics; and
#      user nobody's attacks: flock held on its directory (no count lost,
#      no wait), forged node and partition labels, a directory others can
#      write (refused at load, file:line), a planted file (not adopted);
#  (g) slurmstepd killed with SIGKILL while its sampler runs: nothing of
#      it is left (process, threads, files) and the next step runs.
#  (h) slurmstepd's memory and threads flat over 100 samples of a step.
# guest: yes
# guest: why: cgroup v2's memory.peak and memory.stat (the 6.1 kernel), the
#   step's cgroup where each Slurm release's cgroup/v2 puts it, and Slurm's
#   own side of the record: AdminComment set from slurmstepd, sstat's
#   MaxRSS, the job's user as slurmctld tells it (22.05, 24.11, 26.05)
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
MC_JOBACCT_GATHER=jobacct_gather/linux
MC_SLURM_CONF_LINES="JobAcctGatherFrequency=task=1"
# Writing files is slow in a TCG guest.
MC_CMD_TIMEOUT=300
PROGS=$MEMCORE_BUILD/progs
MEMCORE=$MEMCORE_BUILD/memcore
MIB=$((1 << 20))
for p in mc_hold mc_anon_toucher; do
	[ -x "$PROGS/$p" ] || mc_die "$PROGS/$p missing: make build/progs/$p (make integration builds them)"
done


policy() { # EXTRA-LINES
	mc_small_policy
	printf '%s\n' "SampleInterval=500ms" "$@" >>"$MC_CONF_DIR/memcore.conf"
}

mc_cluster_start
policy

# --- (a) a mapped 512 MiB dataset and 100 MiB of tensors ------------------
FILE_MIB=512
d=$MC_WORK/tmp/dataset.bin
mc_at_exit 'rm -f "$MC_WORK/tmp/dataset.bin" "$MC_WORK/tmp/dataset.bin.ready"'
mc_run srun -n1 --gpus=1 --mem=4G --memcore=explain sh -c \
	"$PROGS/mc_hold 100 4 $d $FILE_MIB & while [ ! -e $d.ready ]; do sleep 0.1; done; sleep 2.5
	 sstat -n -P -a -o MaxRSS -j \$SLURM_JOB_ID.\$SLURM_STEP_ID > $MC_WORK/tmp/sstat-a; wait"
assert_rc 0 "(a) the step runs"
assert_contains "$MC_OUT" "held 100 MiB anon, $FILE_MIB MiB mapped" "(a) it held 100 MiB and mapped $FILE_MIB MiB"
mc_log "(a) stderr: $MC_ERR"
nr=$(mc_mib "$MC_ERR" "non-reclaimable")
fc=$(mc_mib "$MC_ERR" "of page cache at that moment")
mc_between "$nr" 95 220; assert_eq 0 $? "(a) peak non-reclaimable ${nr} MiB is about the 100 MiB held"
mc_between "$fc" $((FILE_MIB * 95 / 100)) $((FILE_MIB + 64)); assert_eq 0 $? "(a) page cache at that moment ${fc} MiB is about the $FILE_MIB MiB mapped"
assert_match "$MC_ERR" "memcore: step [0-9]+\.0 on mc-node1 used \([0-9]+ samples, every 500 ms, over" "(a) the summary names step, node and sampling"
assert_match "$MC_ERR" "asked 4 GiB \(--mem=4G\), the rule's figure" "(a) the user's own option"
maxrss=$(head -n1 "$MC_WORK/tmp/sstat-a" | tr -d ' |')
mc_log "(a) Slurm's MaxRSS while it ran: $maxrss"
rss_mib=$(awk '{ v = $1; u = substr(v, length(v)); n = v + 0; f = u == "G" ? 1024 : u == "M" ? 1 : u == "K" ? 1/1024 : 1/1048576; printf "%d\n", n * f }' <<<"$maxrss")
[ -n "$rss_mib" ] && [ "$rss_mib" -ge $((FILE_MIB * 95 / 100)) ]
assert_eq 0 $? "(a) Slurm's MaxRSS ($maxrss) counts the mapped file: above $((FILE_MIB * 95 / 100)) MiB, where memcore says ${nr} MiB"
rm -f "$d" "$d.ready"

# --- (b) 512 MiB for 3 s, then freed ------------------------------------------
mc_run srun -n1 --gpus=1 --mem=1G --memcore=explain "$PROGS/mc_hold" 512 3 "$MC_WORK/tmp/none" 0 2
mc_log "(b) stderr: $MC_ERR"
assert_rc 0 "(b) the step runs"
nr=$(mc_mib "$MC_ERR" "non-reclaimable")
mc_between "$nr" 500 620; assert_eq 0 $? "(b) the 512 MiB peak (${nr} MiB) though the memory was freed before the end"
assert_match "$MC_ERR" "kernel peak  [0-9.]+ (GiB|MiB) \(memory\.(peak|max_usage_in_bytes)," "(b) the kernel's own peak beside, named"

# --- (c) OOM-killed ----------------------------------------------------------
mc_run srun -n1 --gpus=1 --mem=256M "$PROGS/mc_anon_toucher" 512
mc_log "(c) stderr: $MC_ERR"
assert_ne 0 "$MC_RC" "(c) the step is OOM-killed"
assert_match "$MC_ERR" "OOM          [0-9]+ kills? at the limit of 256 MiB: held by anon [0-9.]+ MiB \(process memory\) and shmem" "(c) the summary names what held the memory"
assert_match "$MC_ERR" "next time    --mem=[0-9]+M" "(c) ... and asks for more next time"

# --- (d) the log line, always -------------------------------------------------
mc_run srun -n1 --gpus=1 --mem=512M "$PROGS/mc_hold" 64 1
assert_rc 0 "(d) a step without --memcore=explain"
assert_not_contains "$MC_ERR" "used (" "(d) no summary on stderr unasked"
mc_wait_until 10 grep -qE "memcore: job [0-9]+\.0: after the step: asked=512 MiB" "$MC_LOG_DIR/slurmd.log"
assert_match "$(cat "$MC_LOG_DIR/slurmd.log")" "memcore: job [0-9]+\.0: after the step: asked=512 MiB .* peak_nonreclaimable=" "(d) one line in slurmd's log"
policy "Report=yes"
mc_run srun -n1 --gpus=1 --mem=512M "$PROGS/mc_hold" 64 1
assert_match "$MC_ERR" "memcore: step [0-9]+\.0 on mc-node1 used" "(d) Report=yes: the summary unasked"
mc_small_policy
printf 'SampleInterval=0\n' >>"$MC_CONF_DIR/memcore.conf"
mc_run srun -n1 --gpus=1 --mem=512M --memcore=explain "$PROGS/mc_hold" 64 1
assert_contains "$MC_ERR" "no samples: SampleInterval=0" "(d) SampleInterval=0: no sampling, said so"

# --- (e) memcore report, after the step, by the job's user only ------------
mc_small_policy
printf 'SampleInterval=500ms\n' >>"$MC_CONF_DIR/memcore.conf"
# A batch job of user nobody with one GPU step in it; the batch step, on
# the GPU too, is a second record.
out=/tmp/mc_test37_$$.out
mc_at_exit "rm -f $out"
job=$(runuser -u nobody -- sbatch --parsable --gpus=1 --mem=1G --chdir=/tmp -o "$out" \
	--wrap "srun -n1 --gpus=1 --mem=1G $PROGS/mc_hold 200 2" </dev/null)
assert_match "$job" "^[0-9]+$" "(e) a batch job of user nobody is submitted"
assert_eq COMPLETED "$(mc_wait_job "$job")" "(e) it completes"
mc_run runuser -u nobody -- "$MEMCORE" report "$job"
mc_log "(e) memcore report $job as nobody: $MC_OUT $MC_ERR"
assert_rc 0 "(e) memcore report by the job's user"
assert_match "$MC_OUT" "memcore: job $job \(user nobody, COMPLETED\), from slurmctld: 2 step-node summaries" "(e) the job, its user and where it came from: the GPU step and the batch step"
assert_match "$MC_OUT" "step $job\.0 on mc-node1 used \([0-9]+ samples, every 500 ms" "(e) the step and node"
nr=$(mc_mib "$(sed -n "/step $job\.0 on/,/Slurm MaxRSS/p" <<<"$MC_OUT")" "non-reclaimable")
mc_between "$nr" 195 300; assert_eq 0 $? "(e) the kept peak of step $job.0 (${nr} MiB) is the 200 MiB it held"
assert_contains "$MC_OUT" "Slurm MaxRSS not available (no accounting)" "(e) no MaxRSS without accounting, said so"
assert_contains "$MC_OUT" "without accounting (AccountingStorageType=accounting_storage/none) Slurm keeps no step statistics" "(e) ... and why"
assert_match "$(scontrol show job "$job")" "AdminComment=memcore1:.*$job\.0@mc-node1:" "(e) kept in the job's AdminComment, where Slurm shows it"
mc_run "$MEMCORE" report "$job" --json
assert_rc 0 "(e) --json as root"
st=$(jq -c ".steps[] | select(.step == \"$job.0\")" <<<"$MC_OUT")
jnr=$(jq -r '.peak_nonreclaimable_bytes / 1048576 | floor' <<<"$st")
[ -n "$jnr" ] && [ $((jnr - nr)) -le 1 ] && [ $((nr - jnr)) -le 1 ]
assert_eq 0 $? "(e) --json has the same peak (${jnr} MiB; the text rounds to 0.01 MiB)"
assert_eq "mc-node1" "$(jq -r '.node' <<<"$st")" "(e) --json names the node"
assert_eq "null" "$(jq -r '.slurm_max_rss_bytes' <<<"$st")" "(e) --json: no MaxRSS without accounting"
mc_run runuser -u daemon -- "$MEMCORE" report "$job"
assert_eq 1 "$MC_RC" "(e) another user is refused"
assert_contains "$MC_ERR" "job $job is not yours: only its user, root and SlurmUser" "(e) ... saying why"
assert_not_contains "$MC_OUT" "non-reclaimable" "(e) ... and showing nothing"
mc_run "$MEMCORE" report 999999
assert_eq 1 "$MC_RC" "(e) a job slurmctld forgot"
assert_contains "$MC_ERR" "is not known to slurmctld (it forgets a job MinJobAge=300 s after its end" "(e) ... says why nothing is left"
assert_contains "$MC_ERR" "each node's slurmd log" "(e) ... and what is"

# --- (f) the cluster view: a node_exporter textfile ---------------------------
PROM=$MC_WORK/tmp/prom/memcore.prom
mkdir -p "${PROM%/*}"
mc_small_policy
printf 'SampleInterval=500ms\nPrometheusTextfile=%s\n' "$PROM" >>"$MC_CONF_DIR/memcore.conf"
# The partition label is slurmd's (the job prolog's record), which slurmd
# keeps only once it has started with memcore in its plugstack.
mc_restart_slurmd || mc_die "slurmd did not come back"
# Four steps at once (two run, two wait for a GPU), ending together.
pids=()
for i in 1 2 3 4; do
	timeout -k 5 "$MC_CMD_TIMEOUT" srun -n1 --gpus=1 --mem=$((256 * i))M "$PROGS/mc_hold" 64 1 \
		>"$MC_WORK/tmp/f$i.out" 2>&1 </dev/null &
	pids+=($!)
done
frc=0
for p in "${pids[@]}"; do wait "$p" || frc=1; done
assert_eq 0 "$frc" "(f) four steps, two at a time, all ran"
mc_run srun -n1 --gpus=1 --mem=100M true
assert_ne 0 "$MC_RC" "(f) a step refused (100 MiB < the rule's 163.84 MiB)"
mc_run srun -n1 --gpus=1 --mem=256M "$PROGS/mc_anon_toucher" 512
assert_ne 0 "$MC_RC" "(f) a step OOM-killed"
metric() { sed -n "s/^$1{node=\"mc-node1\",partition=\"gpu\"} //p" "$PROM"; }
# slurmstepd writes the textfile at the step's end, after srun returned
mc_wait_until 10 eval '[ "$(metric memcore_steps_oom_killed_total)" = 1 ]'
mc_log "(f) $(cat "$PROM" 2>&1)"
assert_eq 6 "$(metric memcore_steps_judged_total)" "(f) 6 steps judged: none lost to the concurrent ends"
assert_eq 1 "$(metric memcore_steps_refused_total)" "(f) 1 refused"
assert_eq 1 "$(metric memcore_steps_oom_killed_total)" "(f) 1 OOM-killed"
assert_eq $(((256 + 512 + 768 + 1024 + 256) * MIB)) "$(metric memcore_memory_asked_bytes_total)" "(f) the bytes asked by the steps that ran, summed"
assert_eq 5 "$(metric memcore_cores_asked_total)" "(f) the cores asked"
pk=$(metric memcore_memory_peak_nonreclaimable_bytes_total)
[ "${pk%.*}" -ge $((4 * 64 * MIB + 200 * MIB)) ] 2>/dev/null
assert_eq 0 $? "(f) the peaks summed (${pk} bytes >= 4 x 64 MiB held + the OOM-killed step's)"
assert_eq "" "$(ls -A "${PROM%/*}" | grep -v '^memcore.prom$')" "(f) no temporary or lock file left beside it"
if command -v promtool >/dev/null; then
	mc_run sh -c "promtool check metrics < '$PROM'"
	assert_rc 0 "(f) promtool check metrics: parses and follows Prometheus' naming"
elif [ "${MC_GUEST_ONLY:-0}" = 1 ]; then
	mc_log "(f) no promtool in this guest (not in VM_PKGS): the host tier parses the textfile"
else
	mc_die "promtool missing (Debian's prometheus package: contrib/install-deps.sh check)"
fi

# slurmstepd writes it as root, in a directory others may write: a symlink
# planted as its temporary file is never written through (O_EXCL |
# O_NOFOLLOW, after removing what is there), a FIFO planted as the
# textfile never holds the step's end up (O_NONBLOCK, regular files only).
victim=$MC_WORK/tmp/victim
echo keep >"$victim"
ln -s "$victim" "${PROM%/*}/.memcore.prom.tmp"
mc_run timeout -k 5 60 srun -n1 --gpus=1 --mem=256M true
assert_rc 0 "(f) a step ends with a symlink planted as the textfile's temporary file"
# (slurmstepd writes the textfile after srun has returned)
mc_wait_until 10 eval '[ "$(metric memcore_steps_judged_total)" = 7 ]'
assert_eq keep "$(cat "$victim")" "(f) ... the symlink's target is not written"
assert_eq 7 "$(metric memcore_steps_judged_total)" "(f) ... and the step is counted in the textfile"
assert_eq "" "$(ls -A "${PROM%/*}" | grep -v '^memcore.prom$')" "(f) ... the planted link gone, nothing left beside it"
mv "$PROM" "$PROM.keep"
mkfifo "$PROM"
mc_run timeout -k 5 60 srun -n1 --gpus=1 --mem=256M true
assert_rc 0 "(f) a FIFO planted as the textfile does not hold the step's end (not 124: timed out)"
assert_eq fifo "$(stat -c %F "$PROM")" "(f) ... and is left as it was, not written"
rm -f "$PROM"
mv "$PROM.keep" "$PROM"

# --- (f) the textfile under attack by user nobody ----------------------------
PDIR=${PROM%/*}
SLOG=$MC_LOG_DIR/slurmd.log
CONF=$MC_CONF_DIR/memcore.conf
NOBODY_UID=$(id -u nobody) || mc_die "no user nobody"
slog_lines() { wc -l <"$SLOG"; }
slog_since() { tail -n +"$(($1 + 1))" "$SLOG"; }
judged() { metric memcore_steps_judged_total; }
# The lock is a file only root can open, not the textfile's directory:
# nobody holding flock on the directory while steps end costs no count
# and no wait (slurmd's log says nothing of a lock).
# (its own process group, so that the lock's holder goes with runuser)
setsid runuser -u nobody -- flock "$PDIR" sleep 300 &
holder=$!
mc_at_exit "kill -- -$holder 2>/dev/null"
mc_wait_until 10 eval '! flock -n "$PDIR" true'
assert_eq 0 $? "(f) nobody holds flock on the textfile's directory"
n0=$(slog_lines) j0=$(judged)
for i in 1 2 3; do
	mc_run srun -n1 --gpus=1 --mem=256M true
	assert_rc 0 "(f) step $i ends while nobody holds the directory's flock"
done
mc_wait_until 10 eval '[ "$(judged)" = $((j0 + 3)) ]'
assert_eq $((j0 + 3)) "$(judged)" "(f) ... and all 3 are counted, none lost to the lock"
assert_not_contains "$(slog_since "$n0")" "PrometheusTextfile" "(f) ... slurmd's log has no complaint of the textfile (no lock timed out)"
kill -- -"$holder" 2>/dev/null
wait "$holder" 2>/dev/null
mc_wait_until 10 flock -n "$PDIR" true
assert_eq 0 $? "(f) nobody's flock on the directory is gone"
lock=$MC_WORK/state/d/memcore-textfile.lock
assert_eq "0 600" "$(stat -c '%u %a' "$lock" 2>&1)" "(f) the lock file is root's, mode 0600, beside the node-facts cache"
mc_run runuser -u nobody -- flock -n "$lock" true
assert_ne 0 "$MC_RC" "(f) ... nobody cannot open it to lock it"

# A forged partition label (a preloaded shim rewrites what srun puts in
# the step's environment with setenv(), invalid UTF-8 and a quote
# included; srun's node list does not go through setenv() on 22.05, so
# the node part of the shim is a try): the node label is the node's own
# name (slurmstepd's SLURMD_NODENAME, from slurmd), the partition slurmd's
# record; the file keeps parsing.
SHIMD=$MC_WORK/tmp/shim
mkdir -p "$SHIMD"
cat >"$SHIMD/shim.c" <<'EOF_SHIM'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
/* srun sets the step's variables with setenv(): forge the labels. */
int setenv(const char *n, const char *v, int o)
{
	static int (*real)(const char *, const char *, int);

	if (!real)
		real = (int (*)(const char *, const char *, int))
			dlsym(RTLD_NEXT, "setenv");
	if (n && (!strcmp(n, "SLURM_STEP_NODELIST") ||
		  !strcmp(n, "SLURM_NODELIST") ||
		  !strcmp(n, "SLURMD_NODENAME")))
		v = "fake\xff\"node";
	if (n && !strcmp(n, "SLURM_JOB_PARTITION"))
		v = "forged\xff\"part";
	return real(n, v, o);
}
EOF_SHIM
gcc -shared -fPIC -o "$SHIMD/shim.so" "$SHIMD/shim.c" -ldl || mc_die "cannot build the shim"
chmod 0755 "$SHIMD" "$SHIMD/shim.so"
j0=$(judged)
mc_run runuser -u nobody -- env LD_PRELOAD="$SHIMD/shim.so" srun --chdir=/tmp -n1 --gpus=1 --mem=256M sh -c 'printf "%s|" "$SLURM_STEP_NODELIST" "$SLURM_JOB_PARTITION"'
assert_rc 0 "(f) nobody's step with forged labels runs"
assert_contains "$MC_OUT" $'|forged\xff"part|' "(f) ... the forged partition reached the step's environment"
mc_wait_until 10 eval '[ "$(judged)" = $((j0 + 1)) ]'
assert_eq $((j0 + 1)) "$(judged)" "(f) ... counted under node=\"mc-node1\", partition=\"gpu\""
assert_eq "" "$(grep -a -e fake -e forged "$PROM")" "(f) ... no forged label in the textfile"
LC_ALL=C grep -aq $'[\x80-\xff]' "$PROM"
assert_ne 0 $? "(f) ... no byte outside ASCII in it"
if command -v promtool >/dev/null; then
	mc_run sh -c "promtool check metrics < '$PROM'"
	assert_rc 0 "(f) ... promtool still parses it"
fi

# A textfile directory others can write turns the textfile off, never the
# node's GPU work (monitoring is not enforcement): the GPU step runs and
# is not counted; --memcore=explain and slurmd's log name the file, the
# line, the key and why; the node is not drained.
LINE=$(grep -n '^PrometheusTextfile=' "$CONF" | cut -d: -f1)
chmod 0777 "$PDIR"
j_open=$(judged)
n0=$(slog_lines)
mc_run runuser -u nobody -- srun --chdir=/tmp -n1 --gpus=1 --mem=256M --memcore=explain echo gpu-ran
assert_rc 0 "(f) directory mode 0777: the GPU step runs"
assert_contains "$MC_OUT" gpu-ran "(f) ... its program ran"
WARN="$CONF:$LINE: PrometheusTextfile=$PROM: directory $PDIR is writable by others than root (mode 0777)"
assert_contains "$MC_ERR" "memcore: warning: $WARN" "(f) ... --memcore=explain names the file, the line, the key and why"
assert_contains "$MC_ERR" "the textfile is off until this is fixed" "(f) ... and that the textfile is off"
mc_wait_until 10 eval 'slog_since "$n0" | grep -qF "warning: $WARN"'
assert_contains "$(slog_since "$n0")" "warning: $WARN" "(f) ... so does slurmd's log"
assert_eq "$j_open" "$(judged)" "(f) ... the step is not counted in the textfile"
mc_run runuser -u nobody -- srun --chdir=/tmp -n1 --mem=100M echo cpu-ran
assert_rc 0 "(f) ... a CPU-only step runs"
assert_node_idle "(f) ... the node is IDLE, not drained" 20
assert_eq "" "$(mc_node_field Reason)" "(f) ... no drain reason"

# A file planted while the directory was open (nobody's, a node that is
# not this one, counts of 1e300) is not adopted once it is closed again:
# the counts start afresh, the file is root's, slurmd's log says why.
chmod 1777 "$PDIR"
rm -f "$PROM"
runuser -u nobody -- sh -c "printf '%s\n' 'memcore_steps_judged_total{node=\"mc-node1\",partition=\"gpu\"} 1e300' 'memcore_steps_judged_total{node=\"planted-node\",partition=\"gpu\"} 5' >'$PROM'"
assert_eq "$NOBODY_UID" "$(stat -c %u "$PROM")" "(f) nobody planted the textfile while its directory was open"
chmod 0755 "$PDIR"
n0=$(slog_lines)
mc_run srun -n1 --gpus=1 --mem=256M true
assert_rc 0 "(f) directory closed again: the next GPU step fits"
mc_wait_until 10 eval '[ "$(stat -c %u "$PROM")" = 0 ]'
assert_eq 0 "$(stat -c %u "$PROM")" "(f) ... the textfile is root's again"
assert_eq 1 "$(judged)" "(f) ... the planted counts not adopted: 1 step judged, not 1e300"
assert_eq "" "$(grep -a planted-node "$PROM")" "(f) ... nor the planted node's series"
assert_contains "$(slog_since "$n0")" "memcore: PrometheusTextfile=$PROM: not adopted (owned by uid $NOBODY_UID, not root): its counts start afresh" "(f) ... and slurmd's log says why"

# --- (g) slurmstepd killed with SIGKILL while its sampler runs ---------------
ls -A "${PROM%/*}" >"$MC_WORK/tmp/prom-before"
timeout -k 5 60 srun -n1 --gpus=1 --mem=512M sh -c "echo JOB=\$SLURM_JOB_ID; exec $PROGS/mc_hold 64 30" \
	>"$MC_WORK/tmp/g.out" 2>&1 </dev/null &
srun_pid=$!
stepd= task= gjob=
for _ in $(seq 100); do	# the task from Slurm's own list, its parent slurmstepd
	gjob=$(sed -n 's/^JOB=//p' "$MC_WORK/tmp/g.out")
	[ -n "$gjob" ] && task=$(scontrol listpids "$gjob" 2>/dev/null | awk '$3 == "0" && $4 == "0" {print $1; exit}')
	if [ -n "$task" ] && grep -q mc_hold "/proc/$task/cmdline" 2>/dev/null; then
		stepd=$(awk '{print $4}' "/proc/$task/stat")
		[ "$(cat "/proc/$stepd/comm" 2>/dev/null)" = slurmstepd ] && break
	fi
	task= stepd=
	sleep 0.2
done
assert_ne "" "$task" "(g) the step's slurmstepd ($stepd) runs its task ($task)"
mc_log "(g) slurmstepd $stepd has $(ls "/proc/$stepd/task" | wc -l) threads"
# The sampler writes the live gauges file at its first sample, half a
# second or more after the task starts (longer under ASan): kill the
# slurmstepd once that file is there, so what it leaves is known.
gfile=memcore_step_mc-node1_${stepd}_${gjob}_0.prom
mc_wait_until 20 test -e "${PROM%/*}/$gfile"
kill -9 "$stepd"
for _ in $(seq 50); do [ -e "/proc/$stepd" ] || break; sleep 0.1; done
assert_eq "" "$(ls -d "/proc/$stepd" 2>/dev/null)" "(g) slurmstepd and every thread of it (the sampler's too) are gone"
kill -9 "$task" 2>/dev/null	# its task, which nobody reaps now
# srun would wait for the dead step's task exits until its 60 s timeout:
# end it now (it cancels the step; nothing of it is asserted after this)
kill -TERM "$srun_pid" 2>/dev/null
wait "$srun_pid" 2>/dev/null
ls -A "${PROM%/*}" >"$MC_WORK/tmp/prom-after"
# Its live gauges file stays until the next step on the node starts or
# ends (the slurmstepd its name holds is gone); nothing else is left.
assert_eq "$(cat "$MC_WORK/tmp/prom-before")" "$(grep -vxF "$gfile" "$MC_WORK/tmp/prom-after")" "(g) no file left beside the textfile but the killed step's live gauges"
assert_eq "$gfile" "$(grep -xF "$gfile" "$MC_WORK/tmp/prom-after")" "(g) ... its gauges file, named by its slurmstepd's pid $stepd"
mc_run srun -n1 --gpus=1 --mem=512M --memcore=explain "$PROGS/mc_hold" 64 1
assert_rc 0 "(g) the next step runs (Slurm keeps the killed one's job until it times out; memcore holds nothing)"
assert_match "$MC_ERR" "memcore: step [0-9]+\.0 on mc-node1 used \([0-9]+ samples?" "(g) ... sampled, summarised"
mc_wait_until 10 eval '[ "$(ls -A "${PROM%/*}")" = "$(cat "$MC_WORK/tmp/prom-before")" ]'
assert_eq "$(cat "$MC_WORK/tmp/prom-before")" "$(ls -A "${PROM%/*}")" "(g) ... and the killed step's gauges file is removed by it"
[ -n "$gjob" ] && scancel "$gjob"

# --- (h) slurmstepd's memory stays flat while its sampler runs --------------
# 100 samples at SampleInterval=100ms (the least the policy takes): the
# task reads its own slurmstepd's VmRSS and thread count after 2 s and
# after 12 s; a sampler that allocated or leaked per sample would grow it.
mc_small_policy
printf 'SampleInterval=100ms\n' >>"$MC_CONF_DIR/memcore.conf"
mc_run timeout -k 5 90 srun -n1 --gpus=1 --mem=512M --memcore=explain sh -c '
	s=$(awk "{print \$4}" /proc/$$/stat)
	rss() { awk "/^VmRSS:/ {print \$2}" /proc/$s/status; }
	sleep 2; r1=$(rss); t1=$(ls /proc/$s/task | wc -l)
	sleep 10; r2=$(rss); t2=$(ls /proc/$s/task | wc -l)
	echo "STEPD $(cat /proc/$s/comm) RSS $r1 $r2 THREADS $t1 $t2"'
assert_rc 0 "(h) the 12 s step runs"
read -r _ comm _ r1 r2 _ t1 t2 <<<"$(grep '^STEPD ' <<<"$MC_OUT")"
assert_eq slurmstepd "$comm" "(h) the task's parent is its slurmstepd"
mc_log "(h) slurmstepd VmRSS ${r1} KiB after 2 s, ${r2} KiB after 12 s; threads $t1, $t2"
if [ "$MC_SANITIZE" = 1 ]; then
	# ASan keeps freed memory out of use (its quarantine, 256 MiB), so
	# slurmstepd's RSS grows with every allocation in it, Slurm's own
	# threads' included, even when each is freed (seen: 628 KiB over the
	# 10 s); a leak is LSan's finding at slurmstepd's exit.
	mc_log "(h) MC_SANITIZE=1: the RSS bound is not asserted (ASan's quarantine); LSan judges leaks"
else
	[ -n "$r2" ] && [ $((r2 - r1)) -le 256 ]
	assert_eq 0 $? "(h) slurmstepd's RSS grew by at most 256 KiB over the sampled 10 s (${r1} -> ${r2} KiB)"
fi
assert_eq "$t1" "$t2" "(h) slurmstepd's thread count is the same (one sampler, not one per sample)"
n=$(grep -oE "used \([0-9]+ samples" <<<"$MC_ERR" | grep -oE "[0-9]+" | head -n1)
[ -n "$n" ] && [ "$n" -ge 50 ]
assert_eq 0 $? "(h) the sampler took at least 50 samples in the 12 s step (took ${n:-none})"
