#!/bin/bash
# memcore check says what launch does with the step, by the policy's Mode and
# AllowUserWarn and the user's MEMCORE_MODE=warn (spank:memcore in
# --slurm-options), with the plugin's own last line, and exits by it:
# 1 only when launch would refuse.
. "$(dirname "$0")/lib.sh"

T4=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
# 8 T4s, 2 workers, --mem=100G: 190.04 GiB needed, does not fit.
C=(check --topology "$T4" --gpus 8 --mem 100G)
mode() { # CONF-LINE [env...]: run check, text then JSON
	printf '%s\n' "$1" >"$TMP/m.conf"
	shift
	run_mc "${C[@]}" --config "$TMP/m.conf" "$@"
	TEXT=$OUT TRC=$RC
	run_mc "${C[@]}" --config "$TMP/m.conf" --json "$@"
}
lastline() { tail -n1 <<<"$TEXT"; }
j() { jq -r "$1" <<<"$OUT"; }

mode "Mode=enforce"
expect_eq "enforce: exit" "$TRC" 1
expect_eq "enforce: says it is refused" "$(lastline)" \
	"memcore: this refusal cannot be turned into a warning at this site (AllowUserWarn=no)"
expect_eq "enforce: json launch" "$(j .launch)" refused
expect_eq "enforce: json fits" "$(j .fits)" false
expect_eq "enforce: json mode" "$(j .mode)" enforce

mode "Mode=warn"
expect_eq "warn: exit (runs with a warning)" "$TRC" 0
expect_contains "warn: the explanation" "$TEXT" "190.04 GiB needed"
expect_eq "warn: last line" "$(lastline)" "memcore: Mode=warn: the step runs anyway"
expect_eq "warn: json exit" "$RC" 0
expect_eq "warn: json launch" "$(j .launch)" warned
expect_eq "warn: json fits stays the verdict" "$(j .fits)" false
expect_eq "warn: json launch_line" "$(j .launch_line)" "memcore: Mode=warn: the step runs anyway"

mode "Mode=off"
expect_eq "off: exit" "$TRC" 0
expect_eq "off: last line" "$(lastline)" "memcore: Mode=off: the step runs unchecked"
expect_eq "off: json launch" "$(j .launch)" unchecked

mode "AllowUserWarn=yes"
expect_eq "allowed, not asked: exit" "$TRC" 1
expect_eq "allowed, not asked: last line" "$(lastline)" \
	"memcore: --memcore=warn is allowed here (AllowUserWarn=yes): it would run the step with this explanation as a warning"
expect_eq "allowed, not asked: json launch" "$(j .launch)" refused

printf 'AllowUserWarn=yes\n' >"$TMP/m.conf"
MEMCORE_MODE=warn run_mc "${C[@]}" --config "$TMP/m.conf"
expect_eq "MEMCORE_MODE=warn allowed: exit" "$RC" 0
expect_eq "MEMCORE_MODE=warn allowed: last line" "$(tail -n1 <<<"$OUT")" \
	"memcore: --memcore=warn: the step runs anyway"
MEMCORE_MODE=explain,warn run_mc "${C[@]}" --config "$TMP/m.conf" --json
expect_eq "MEMCORE_MODE=explain,warn: json launch" "$(jq -r .launch <<<"$OUT")" warned

printf 'AllowUserWarn=no\n' >"$TMP/m.conf"
MEMCORE_MODE=warn run_mc "${C[@]}" --config "$TMP/m.conf"
expect_eq "MEMCORE_MODE=warn not allowed: exit" "$RC" 1
expect_eq "MEMCORE_MODE=warn not allowed: last line" "$(tail -n1 <<<"$OUT")" \
	"memcore: --memcore=warn cannot turn this refusal into a warning at this site (AllowUserWarn=no)"

# The cli_filter's form: the job's spank:memcore option.
printf 'AllowUserWarn=yes\nNodeRam=100G\nNodeCores=48\nNodeGpus=8\nGpuMemory=16G\n' >"$TMP/m.conf"
run_mc check --config "$TMP/m.conf" --json \
	--slurm-options '{"gres":"gpu:8","mem":"100G","spank:memcore":"warn"}'
expect_eq "slurm-options spank:memcore=warn: exit" "$RC" 0
expect_eq "slurm-options spank:memcore=warn: launch" "$(jq -r .launch <<<"$OUT")" warned
expect_eq "slurm-options spank:memcore=warn: fits" "$(jq -r .fits <<<"$OUT")" false

# A step that fits runs; nothing is added.
printf 'Mode=warn\n' >"$TMP/m.conf"
run_mc check --topology "$T4" --gpus 1 --config "$TMP/m.conf" --json
expect_eq "fits: exit" "$RC" 0
expect_eq "fits: launch" "$(jq -r .launch <<<"$OUT")" runs
expect_eq "fits: no launch line" "$(jq -r .launch_line <<<"$OUT")" null
finish
