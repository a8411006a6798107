#!/bin/bash
# memcore check --slurm-options reads memcore's variables as the job will
# have them: the job's "export" and "export-file" under sbatch's, srun's
# or salloc's rules (--slurm-command), not the submitting shell's
# environment as it stands. The node: 8 x T4, 48 cores; --mem=170G fits
# with 1 DataLoader worker per GPU (158.04 GiB) and not with the default 2
# (190.04 GiB), and --cpus-per-gpu=6 (24 cores) is enough for either, so
# MEMCORE_DATALOADER_WORKERS decides each answer. The
# same forms against the real sbatch and slurmd: test_58's env corpus.
. "$(dirname "$0")/lib.sh"
G4=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
W=MEMCORE_DATALOADER_WORKERS
JOB='"gpus-per-node":"8","cpus-per-gpu":"6","mem":"170G"'
# chk WANT_RC WHAT [ENV...] -- JSON_EXTRA [CHECK_OPTION...]
chk() {
	local want=$1 what=$2 env=() extra
	shift 2
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift; extra=$1; shift
	RC=0
	env -u $W "${env[@]}" "$MEMCORE" check --config "$TMP/empty.conf" --topology "$G4" \
		--slurm-options "{$JOB$extra}" "$@" >"$TMP/out" 2>"$TMP/err" || RC=$?
	expect_eq "$what: exit" "$RC" "$want"
}
chk 1 "no variable: 2 workers" -- ''
chk 0 "the shell's variable, no --export" $W=1 -- ''
chk 0 "--export=ALL" $W=1 -- ',"export":"ALL"'
chk 1 "--export=NONE: the job does not get it" $W=1 -- ',"export":"NONE"'
chk 1 "--export=PATH: not named" $W=1 -- ',"export":"PATH"'
chk 0 "--export=PATH,$W: named" $W=1 -- ",\"export\":\"PATH,$W\""
chk 0 "--export=ALL,$W=1 without it in the shell" -- ",\"export\":\"ALL,$W=1\""
chk 0 "--export=$W=1 alone" -- ",\"export\":\"$W=1\""
chk 1 "--export=ALL,$W=2 over the shell's 1" $W=1 -- ",\"export\":\"ALL,$W=2\""
chk 0 "--export=$W=2,ALL: the shell's 1 after it" $W=1 -- ",\"export\":\"$W=2,ALL\""
chk 0 "a quoted token" -- ",\"export\":\"'$W=1'\""
# srun: ALL anywhere puts srun's environment last; NONE ends the list
chk 1 "srun --export=ALL,$W=1 under the shell's 2" $W=2 -- ",\"export\":\"ALL,$W=1\"" --slurm-command srun
chk 0 "sbatch: the same, in order" $W=2 -- ",\"export\":\"ALL,$W=1\"" --slurm-command sbatch
chk 1 "srun --export=NONE,$W=1" -- ",\"export\":\"NONE,$W=1\"" --slurm-command srun
chk 0 "sbatch --export=NONE,$W=1 (a list)" -- ",\"export\":\"NONE,$W=1\""
chk 0 "salloc has no --export" $W=1 -- ',"export":"NONE"' --slurm-command salloc
# --export-file: NUL-separated; sbatch unsets its own environment first.
# Without --export, Slurm 26.05 drops the file's entries too: the release
# is the one memcore was built against (its slurm_version.h).
ver=$(awk '/define SLURM_VERSION_NUMBER/ { print $3 }' /usr/include/slurm/slurm_version.h 2>/dev/null)
alone=0; [ -n "$ver" ] && [ $((ver)) -ge $(((26 << 16) | (5 << 8))) ] && alone=1
printf '%s=1\0OTHER=x\0' $W >"$TMP/env.nul"
printf 'OTHER=x\0' >"$TMP/other.nul"
chk $alone "--export-file alone (kept before 26.05)" -- ",\"export-file\":\"$TMP/env.nul\""
chk 0 "--export=ALL with --export-file" -- ",\"export-file\":\"$TMP/env.nul\",\"export\":\"ALL\""
chk 1 "the shell's variable does not reach the job" $W=1 -- ",\"export-file\":\"$TMP/other.nul\",\"export\":\"ALL\""
chk 0 "the file's 1 over the shell's 2" $W=2 -- ",\"export-file\":\"$TMP/env.nul\",\"export\":\"ALL\""
chk 1 "--export-file with --export=NONE: dropped" -- ",\"export-file\":\"$TMP/env.nul\",\"export\":\"NONE\""
chk 0 "--export-file with a list keeps it" -- ",\"export-file\":\"$TMP/env.nul\",\"export\":\"PATH\""
chk 1 "a list's NAME is not in the emptied environment" $W=1 -- ",\"export-file\":\"$TMP/other.nul\",\"export\":\"PATH,$W\""
# What memcore cannot read: exit 2 without a user's "--" message, so that
# the cli_filter lets the job through (sbatch says its own error).
chk 2 "--export-file unreadable" -- ",\"export-file\":\"$TMP/nosuch\""
expect_contains "unreadable: said" "$(cat "$TMP/err")" "memcore: cannot read the job's options: --export-file $TMP/nosuch: No such file or directory"
chk 2 "--export-file=5: sbatch's descriptor, not read" -- ',"export-file":"5"'
expect_contains "descriptor: said" "$(cat "$TMP/err")" "memcore: cannot read the job's options: --export-file=5 is a descriptor of sbatch's: the job's variables are judged at launch"
# A number past any descriptor is a file name, as sbatch takes it
# (env_array_from_file: 3 to _SC_OPEN_MAX), never called a descriptor.
chk 2 "--export-file=99999999999: a file name" -- ',"export-file":"99999999999"'
expect_contains "a file name: said" "$(cat "$TMP/err")" "memcore: cannot read the job's options: --export-file 99999999999: No such file or directory"
# A control character in the name is quoted, not printed raw.
chk 2 "--export-file with a newline" -- ",\"export-file\":\"$TMP/a\\nb\""
expect_contains "the newline quoted" "$(cat "$TMP/err")" "--export-file $TMP/a\\nb: No such file or directory"
expect_eq "on one line" "$(wc -l <"$TMP/err")" 1
# Past what memcore keeps: let through (exit 2, not the user's), never a
# variable silently lost.
{ for i in $(seq 1100); do printf 'V%d=x\0' "$i"; done; printf '%s=1\0' $W; } >"$TMP/many.nul"
chk 2 "--export-file of 1101 variables" -- ",\"export-file\":\"$TMP/many.nul\",\"export\":\"ALL\""
expect_contains "said" "$(cat "$TMP/err")" "memcore: cannot read the job's options: --export-file holds more than 1024 variables"
# A long value is read whole (the plugin would refuse it too).
long5k=$(printf '0%.0s' $(seq 5000))1
chk 2 "a 5001-byte MEMCORE_* value through --export is read, not dropped" -- ",\"export\":\"$W=$long5k\""
# A bad value that came from --export says so.
chk 2 "a bad value from --export" -- ",\"export\":\"ALL,$W=abc\""
expect_contains "named as the job's" "$(cat "$TMP/err")" "MEMCORE_DATALOADER_WORKERS=abc: not a number (as the job's --export or --export-file gives it)"
RC=0; env $W=abc "$MEMCORE" check --config "$TMP/empty.conf" --topology "$G4" --slurm-options "{$JOB}" >/dev/null 2>"$TMP/err" || RC=$?
expect_eq "a bad value from the shell: exit" "$RC" 2
case $(cat "$TMP/err") in *"--export"*) fail "a bad value from the shell is not said to come from --export: $(cat "$TMP/err")" ;; esac
# bad input
chk 2 "--slurm-command scrontab" -- '' --slurm-command scrontab
expect_contains "named" "$(cat "$TMP/err")" "memcore: --slurm-command=scrontab: expected sbatch, srun or salloc"
RC=0; "$MEMCORE" check --topology "$G4" --gpus 1 --slurm-command srun >/dev/null 2>"$TMP/err" || RC=$?
expect_eq "--slurm-command without --slurm-options: exit" "$RC" 2
expect_contains "said" "$(cat "$TMP/err")" "--slurm-command goes with --slurm-options"
long=$(printf 'A%.0s' $(seq 9000))
chk 2 "--export longer than memcore keeps" -- ",\"export\":\"$long\""
expect_contains "said, not as the user's error" "$(cat "$TMP/err")" "memcore: cannot read the job's options: --export is longer than 8191 bytes"
finish
