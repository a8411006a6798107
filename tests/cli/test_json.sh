#!/bin/bash
# memcore check --json: the keys memcore(8) documents under JSON OUTPUT are
# exactly the keys of the output (read from the man page here, apart from
# the code), so a documented key cannot disappear unseen, nor an
# undocumented one appear; every --json output starts with its schema; the
# key renamed in 0.2 (ram_offload_bytes -> ram_zero_bytes) still reads the
# same figure under its old name.
. "$(dirname "$0")/lib.sh"
MAN=$TOP/docs/memcore.8
T4=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml

# A key documented as "only with --OPTION" is in the output exactly when
# that option is given (keys of an option the job did not use are left
# out, so that the output without it stays as it was).
keys_doc() { # all | optional | plain
	awk -v want="$1" '/^\.SH/ { k = ($0 == ".SH JSON OUTPUT") } /^\.PP/ { k = 0 }
		key != "" { opt = ($0 ~ /^only with /); if (want == "all" || (want == "optional") == opt) print key; key = "" }
		k && p && /^\.B [a-z_]+$/ { key = $2 } { p = ($0 == ".TP") }' "$MAN" | sort
}
documented=$(keys_doc plain)
optional=$(keys_doc optional)
expect_eq "memcore(8) JSON OUTPUT: the --dataset-in-memory keys are optional" \
	"$(echo $optional)" "dataset_copies_per_task dataset_in_memory_bytes dataset_in_memory_kind ram_dataset_bytes"
run_mc check --gpus 2 --dataset-in-memory=1G --topology "$T4" --config "$TMP/empty.conf" --json
got=$(jq -r 'keys[]' <<<"$OUT" | sort)
expect_eq "check --dataset-in-memory --json: its keys and the documented ones" \
	"$(comm -3 <(keys_doc all) <(printf '%s\n' "$got"))" ""
expect_eq "memcore(8) JSON OUTPUT lists keys" "$([ "$(wc -l <<<"$documented")" -ge 20 ] && echo yes)" yes
for args in "--gpus 8 --mem 100G" "--gpus 8 --mem 400G --model-params 3B --zero-stage 2 --offload optimizer" "--gpus 1"; do
	# shellcheck disable=SC2086
	run_mc check $args --topology "$T4" --config "$TMP/empty.conf" --json
	got=$(jq -r 'keys[]' <<<"$OUT" | sort)
	missing=$(comm -23 <(printf '%s\n' "$documented") <(printf '%s\n' "$got"))
	extra=$(comm -13 <(printf '%s\n' "$documented") <(printf '%s\n' "$got"))
	expect_eq "check $args --json: documented keys missing from the output" "$missing" ""
	expect_eq "check $args --json: keys not in memcore(8) JSON OUTPUT" "$extra" ""
	expect_eq "check $args --json: schema first" "$(jq -r 'keys_unsorted[0]' <<<"$OUT")" schema
	expect_eq "check $args --json: schema 1" "$(jq -r .schema <<<"$OUT")" 1
	expect_eq "check $args --json: ram_offload_bytes = ram_zero_bytes" \
		"$(jq -r .ram_offload_bytes <<<"$OUT")" "$(jq -r .ram_zero_bytes <<<"$OUT")"
done
# The ZeRO case: the alias carries the real figure, not null nor 0:
# DeepSpeed's estimate_zero2_model_states_mem_needs with cpu_offload,
# params x max(4 x GPUs, 16) x additional_buffer_factor = 3e9 x 32 x 1.5.
run_mc check --gpus 8 --mem 400G --model-params 3B --zero-stage 2 --offload optimizer --topology "$T4" --config "$TMP/empty.conf" --json
expect_eq "ZeRO: ram_zero_bytes" "$(jq -r .ram_zero_bytes <<<"$OUT")" $((3000000000 * 32 * 3 / 2))
expect_eq "ZeRO: ram_offload_bytes, the same figure" "$(jq -r .ram_offload_bytes <<<"$OUT")" $((3000000000 * 32 * 3 / 2))
# Every other --json output starts with the schema too, and its keys are
# exactly those memcore(8) lists under JSON OUTPUT, "memcore CMD --json".
for c in "audit --topology $T4" "audit --topology $DATA/hpe-ex255a-4xmi300a-spx.xml" "plan --topology $T4" "usage --cgroup $DATA/cgroup/v2/job_7/step_0" "usage --cgroup $DATA/cgroup/v1/slurm_n1/uid_0/job_7/step_0"; do
	cmd=${c%% *}
	# shellcheck disable=SC2086
	run_mc $c --config "$TMP/empty.conf" --json
	# shellcheck disable=SC2086
	[ "$cmd" = usage ] && run_mc $c --json
	expect_eq "$c --json: schema first" "$(jq -r 'keys_unsorted[0]' <<<"$OUT")" schema
	expect_eq "$c --json: schema 1" "$(jq -r .schema <<<"$OUT")" 1
	doc=$(awk -v t="^[.]SS memcore $cmd " '/^\.S[HS]/ { k = ($0 ~ t) } k && p && /^\.B [a-z_]+$/ { print $2 } { p = ($0 == ".TP") }' "$MAN" | sort)
	expect_eq "$c: memcore(8) lists its keys" "$([ -n "$doc" ] && echo yes)" yes
	got=$(jq -r 'keys[]' <<<"$OUT" | sort)
	expect_eq "$c --json: documented keys missing from the output" "$(comm -23 <(printf '%s\n' "$doc") <(printf '%s\n' "$got"))" ""
	expect_eq "$c --json: keys not in memcore(8)" "$(comm -13 <(printf '%s\n' "$doc") <(printf '%s\n' "$got"))" ""
done
# Byte figures above 2^63 - 1 print as their unsigned digits, never as
# jansson's wrapped negative integers (read from the text: jq's numbers
# are doubles): --mem=16000000T is 16000000 x 2^40 bytes; a --mem-per-cpu
# product that saturates is 2^64 - 1.
run_mc check --gpus 1 --mem 16000000T --topology "$T4" --config "$TMP/empty.conf" --json
expect_eq "--mem=16000000T --json: exit" "$RC" 1
expect_contains "--mem=16000000T --json: ram_allocated_bytes" "$OUT" '"ram_allocated_bytes": 17592186044416000000,'
expect_eq "--mem=16000000T --json: no negative figure" "$(grep -c -- ': -[0-9]' <<<"$OUT")" 0
expect_eq "--mem=16000000T --json: parses" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["ram_allocated_bytes"])' <<<"$OUT")" 17592186044416000000
run_mc check --gpus 1 --mem-per-cpu 1000000T --topology "$T4" --config "$TMP/empty.conf" --json
expect_contains "--mem-per-cpu=1000000T --json: saturated" "$OUT" '"ram_allocated_bytes": 18446744073709551615,'
run_mc check --gpus 1 --gpu-memory 16000000T --topology "$T4" --config "$TMP/empty.conf" --json
expect_contains "--gpu-memory=16000000T --json: gpu_memory_bytes" "$OUT" '"gpu_memory_bytes": 17592186044416000000,'
expect_eq "--gpu-memory=16000000T --json: no negative figure" "$(grep -c -- ': -[0-9]' <<<"$OUT")" 0
# Only fewer workers fit the node (its cores rule, 52 of 48 cores):
# fix_options is that fix, as the explanation's line, never empty.
run_mc check --gpus 8 --dataloader-workers 5 --topology "$T4" --config "$TMP/empty.conf" --json
expect_eq "fewer-workers fix: fix_options" "$(jq -c .fix_options <<<"$OUT")" '["--dataloader-workers=4"]'
expect_contains "fewer-workers fix: explanation" "$OUT" '"  fix: --dataloader-workers=4 is the most this node can hold"'
run_mc check --gpus 8 --dataloader-workers 5 --mem 200G --cores 24 --topology "$T4" --config "$TMP/empty.conf" --json
expect_eq "fewer-workers fix with less given: fix_options" "$(jq -c .fix_options <<<"$OUT")" '["--dataloader-workers=4","--mem=255G","--cpus-per-gpu=10"]'
# A NUMA node of 2^64 - 1 bytes alone (no wrap): audit --json exact.
sed '0,/local_memory="12884901888"/s//local_memory="18446744073709551615"/; s/local_memory="12884901888"/local_memory="0"/' \
	"$DATA/local-2numa-2gpu.xml" >"$TMP/big.xml"
run_mc audit --topology "$TMP/big.xml" --config "$TMP/empty.conf" --json
expect_contains "audit --json: a NUMA node of 2^64 - 1 bytes" "$OUT" '"memory_bytes": 18446744073709551615,'
expect_eq "audit --json: no negative figure" "$(grep -c -- ': -[0-9]' <<<"$OUT")" 0
finish
