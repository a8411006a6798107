#!/bin/bash
# memcore never runs a program: neither memcore.so nor the memcore command
# imports exec*, system, popen, posix_spawn, vfork or clone; only
# memcore.so imports fork, for the one process it detaches from the job
# epilog to empty LocalScratch/.memcore-removing (data/mc_scratch.h: no
# file count may hold the epilog), which runs no program (dlopen is there: the
# GPU memory probe loads libnvidia-ml.so.1 / ROCm SMI by fixed name, in
# slurmd and the command only), and `memcore check` and
# `memcore audit` (live and from XML) make no execve/fork/clone of their own
# under strace. Nothing a user sets in the environment changes what the
# command reads: the policy comes from --config or the site's file only.
. "$(dirname "$0")/lib.sh"
B=$(dirname "$MEMCORE")
SO=$B/memcore.so
T2=$DATA/local-2numa-2gpu.xml

for f in "$SO" "$MEMCORE"; do
	imports=$(nm -D --undefined-only "$f" | awk '{print $NF}' | sed 's/@.*//')
	[ -n "$imports" ] || fail "no imports read from $f"
	bad=$(grep -Ex '(exec[lvpe]*|fexecve|execveat|system|popen|posix_spawnp?|fork|vfork|clone3?)' <<<"$imports")
	[ "$f" = "$SO" ] && bad=$(grep -vx fork <<<"$bad")
	expect_eq "$(basename "$f") imports no way to run a program" "$bad" ""
done

if command -v strace >/dev/null && strace -f -qq -o /dev/null true 2>/dev/null; then
	for args in "check --config $TMP/empty.conf --topology $T2 --gpus 1" \
		    "audit --config $TMP/empty.conf --topology $T2" \
		    "audit --config $TMP/empty.conf" \
		    "check --config $TMP/empty.conf --gpus 1 --json"; do
		# shellcheck disable=SC2086
		strace -f -qq -e trace=execve,execveat,fork,vfork,clone,clone3 \
			-o "$TMP/strace" "$MEMCORE" $args >/dev/null 2>&1
		n=$(grep -cvE "^[0-9]+ +execve\(\"$MEMCORE\"" "$TMP/strace")
		expect_eq "memcore $args: execve/fork/clone beyond its own start" "$n" 0
		[ "$n" = 0 ] || cat "$TMP/strace"
	done
else
	echo "SKIP: strace unavailable here; the import check above still holds"
fi

# MEMCORE_* option variables are the user's own option defaults, read by
# check as by the plugin (tests/cli/test_polish.sh); nothing else a user
# sets changes what the command reads: no MEMCORE_CONFIG, no SLURM_SPANK_*
# (a user cannot point it at another policy or switch a mode).
printf 'Bogus=1\n' >"$TMP/bad.conf"
run_mc check --config "$TMP/empty.conf" --topology "$T2" --gpus 1 --mem 64G
rc_plain=$RC out_plain=$OUT
RC=0
OUT=$(MEMCORE_CONFIG=$TMP/bad.conf SLURM_SPANK_memcore_mode=off \
	SLURM_SPANK_memcore_dataloader_workers=0 "$MEMCORE" check \
	--config "$TMP/empty.conf" --topology "$T2" --gpus 1 --mem 64G 2>&1) || RC=$?
expect_eq "MEMCORE_CONFIG and SLURM_SPANK_* change nothing (exit)" "$RC" "$rc_plain"
expect_eq "MEMCORE_CONFIG and SLURM_SPANK_* change nothing (output)" "$OUT" "$out_plain"
# A value with a control byte is refused before any parsing and quoted
# escaped: a newline, CR or ESC in MEMCORE_* or an option must not forge a
# line of memcore's output (or of slurmd's log: the plugin shares the
# message), nor reach the terminal raw. The same for a job file's string.
H4=$DATA/lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml
for v in $'3\nmemcore: this step fits:' $'3\rmemcore: this step fits:' $'\e[31m3'; do
	RC=0
	OUT=$(MEMCORE_ZERO_STAGE="$v" "$MEMCORE" check --gpus 1 --config "$TOP/etc/memcore.conf" --topology "$H4" 2>&1) || RC=$?
	q=$(printf '%q' "$v")
	expect_eq "MEMCORE_ZERO_STAGE=$q: exit 2" "$RC" 2
	expect_eq "MEMCORE_ZERO_STAGE=$q: one line" "$(wc -l <<<"$OUT")" 1
	case $OUT in *$'\n'*|*$'\r'*|*$'\e'*) fail "MEMCORE_ZERO_STAGE=$q: a raw control byte in: $(cat -A <<<"$OUT")" ;; esac
	grep -q '^memcore: this step fits:' <<<"$OUT" && fail "MEMCORE_ZERO_STAGE=$q: the forged line was printed"
done
expect_eq "MEMCORE_ZERO_STAGE with a newline: the message" "$(MEMCORE_ZERO_STAGE=$'3\nmemcore: this step fits:' "$MEMCORE" check --gpus 1 --config "$TOP/etc/memcore.conf" --topology "$H4" 2>&1)" 'memcore: MEMCORE_ZERO_STAGE="3\nmemcore: this step fits:": a control character in the value'
run_mc check --gpus 1 --config "$TOP/etc/memcore.conf" --topology "$H4" --offload=$'\e[31mall'
expect_eq "--offload with ESC: exit 2" "$RC" 2
expect_eq "--offload with ESC: the message" "$ERR" 'memcore: --offload="\x1b[31mall": a control character in the value'
printf '{"zero_optimization": {"stage": 3, "offload_param": {"device": "x\\nmemcore: this step fits:\\u001b[31m"}}}\n' >"$TMP/ds-inject.json"
run_mc check --gpus 1 --config "$TOP/etc/memcore.conf" --topology "$H4" --deepspeed-config "$TMP/ds-inject.json"
expect_eq "a job file's device string with a newline: exit 2" "$RC" 2
expect_eq "a job file's device string: quoted escaped" "$ERR" "memcore: --deepspeed-config=$TMP/ds-inject.json: zero_optimization.offload_param.device: expected none, cpu, nvme or \"auto\", got \"x\\nmemcore: this step fits:\\x1b[31m\""

# Installed set-user-ID (or set-group-ID) root, memcore would read root's
# files for anyone (--config /etc/shadow): it refuses to run at all, before
# reading anything, whenever real and effective ids differ. Needs root to
# make the setuid copy and a user to run it as.
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
	SU=$(mktemp -d /var/tmp/memcore-suid.XXXXXX)
	chmod 0755 "$SU"
	cp "$MEMCORE" "$SU/memcore" && chown root:root "$SU/memcore"
	for bits in u+s g+s; do
		chmod 0755 "$SU/memcore" && chmod "$bits" "$SU/memcore"
		for args in "--version" "check --config /etc/shadow --gpus 1" "audit --config /etc/shadow --cache /etc/shadow"; do
			RC=0
			# shellcheck disable=SC2086
			OUT=$(cd / && runuser -u nobody -- "$SU/memcore" $args 2>&1) || RC=$?
			expect_eq "chmod $bits, as nobody: memcore $args exits 2" "$RC" 2
			expect_contains "chmod $bits, as nobody: memcore $args says why" "$OUT" "memcore: refusing to run set-user-ID or set-group-ID (real uid 65534 gid 65534, effective uid $([ $bits = u+s ] && echo 0 || echo 65534) gid $([ $bits = g+s ] && echo 0 || echo 65534))"
			case $OUT in *root:*) fail "chmod $bits: memcore $args printed /etc/shadow: $OUT" ;; esac
			[ "$(wc -l <<<"$OUT")" = 1 ] || fail "chmod $bits: memcore $args: more than the one refusal line: $OUT"
		done
	done
	# Without the bits the same copy runs for the same user.
	chmod 0755 "$SU/memcore"
	OUT=$(cd / && runuser -u nobody -- "$SU/memcore" --version 2>&1)
	expect_eq "no setuid bit, as nobody: memcore --version runs" "$OUT" "memcore $(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")"
	rm -rf "$SU"
else
	echo "SKIP: the setuid refusal needs root, runuser and user nobody"
fi
# Every line memcore.so writes to slurmd's log goes through mc_log
# (spank/mc_log.h), which writes it as one line: a value a user set
# (MEMCORE_JOB_FILES, MEMCORE_DATASET_FACTS, SLURM_CPU_BIND, a file name)
# cannot forge a line there. No direct slurm_error/info/verbose/debug call
# in spank/ beside mc_log.c's own (the epilog's sweeper names a user's
# file names too).
direct=$(grep -nE '\bslurm_(error|info|verbose|debug[0-9]?)\(' "$TOP"/spank/*.c |
	grep -vE '^[^:]*/mc_log\.c:')
expect_eq "spank/: every log line through mc_log (one line whatever it quotes)" "$direct" ""
finish
