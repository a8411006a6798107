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
RC=0
OUT=$(MEMCORE_DATALOADER_WORKERS=3 "$MEMCORE" check --config "$TMP/empty.conf" \
	--topology "$T8" --gpus 1 --json 2>&1) || RC=$?
expect_eq "MEMCORE_DATALOADER_WORKERS=3 as --dataloader-workers 3 (needed)" \
	"$(field .ram_needed_bytes)" "$want_needed"
expect_eq "MEMCORE_DATALOADER_WORKERS=3 as --dataloader-workers 3 (exit)" "$RC" "$want_exit"
RC=0
OUT=$(MEMCORE_DATALOADER_WORKERS=7 "$MEMCORE" check --config "$TMP/empty.conf" \
	--topology "$T8" --gpus 1 --dataloader-workers 3 --json 2>&1) || RC=$?
expect_eq "the command line beats MEMCORE_DATALOADER_WORKERS" \
	"$(field .ram_needed_bytes)" "$want_needed"
RC=0
ERR=$(MEMCORE_DATALOADER_WORKERS=abc "$MEMCORE" check --config "$TMP/empty.conf" \
	--topology "$T8" --gpus 1 2>&1 >/dev/null) || RC=$?
expect_eq "bad MEMCORE_DATALOADER_WORKERS exit" "$RC" 2
expect_contains "bad MEMCORE_DATALOADER_WORKERS named" "$ERR" \
	"memcore: MEMCORE_DATALOADER_WORKERS=abc: not a number"
RC=0
ERR=$(MEMCORE_DATALOADER_WORKERS=abc "$MEMCORE" check --config "$TMP/empty.conf" \
	--topology "$T8" --gpus 1 --dataloader-workers 3 2>&1 >/dev/null) || RC=$?
expect_eq "bad variable under a given option is not read (exit)" "$RC" "$want_exit"
RC=0
ERR=$(MEMCORE_OFFLOAD=all "$MEMCORE" check --config "$TMP/empty.conf" \
	--topology "$T8" --gpus 1 2>&1 >/dev/null) || RC=$?
expect_eq "MEMCORE_OFFLOAD=all alone: refused as the plugin refuses (exit)" "$RC" 2
expect_contains "MEMCORE_OFFLOAD=all alone names the variable" "$ERR" \
	"from the environment: MEMCORE_OFFLOAD"
RC=0
OUT=$(MEMCORE_OFFLOAD= "$MEMCORE" check --config "$TMP/empty.conf" \
	--topology "$T8" --gpus 1 --json 2>&1) || RC=$?
expect_eq "an empty variable is unset" "$(field .ram_needed_bytes)" "$plain_needed"
long=$(printf 'x%.0s' $(seq 300))
RC=0
ERR=$(MEMCORE_MODEL_CONFIG=$long "$MEMCORE" check --config "$TMP/empty.conf" \
	--topology "$T8" --gpus 1 2>&1 >/dev/null) || RC=$?
expect_eq "an over-long variable (exit)" "$RC" 2
expect_contains "an over-long variable" "$ERR" \
	"memcore: MEMCORE_MODEL_CONFIG: a value of 300 characters is too long (at most 255)"

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
	"memcore: $TMP/frac.conf:1: GpuMemory=14.5G: not a whole number: sizes are whole, as Slurm takes them (14848M)"
RC=0
ERR=$(MEMCORE_RAM_PER_WORKER=0.5G "$MEMCORE" check --config "$TMP/empty.conf" \
	--topology "$T8" --gpus 1 2>&1 >/dev/null) || RC=$?
expect_eq "MEMCORE_RAM_PER_WORKER=0.5G" "$ERR" \
	"memcore: MEMCORE_RAM_PER_WORKER=0.5G: not a whole number: sizes are whole, as Slurm takes them (512M)"

finish
