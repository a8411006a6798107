#!/bin/bash
# memcore check never says "fits" for what no allocation can hold (more GPUs,
# memory or cores than the node has), says so when the node itself fails
# the site's RAM rule (the Tioga MI250X node), names the fix in the user's
# own memory and CPU options, answers --gpus 0 in one line, exits 3 when
# slurm.conf names a slurmctld that does not answer, and does not judge a
# GPU-less host as the GPU node.
. "$(dirname "$0")/lib.sh"

H200=$DATA/lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml
TIOGA=$DATA/hpe-ex235a-tioga-epyc7a53-4xmi250x-8gcd.xml
first() { head -n1 <<<"$OUT"; }
# the line before the one saying what launch does (test_check_mode.sh)
last() { tail -n2 <<<"$OUT" | head -n1; }

# --- impossible is not "fits" ------------------------------------------------
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 8 --mem 2000G
expect_eq "8 GPUs on 4: exit" "$RC" 1
expect_eq "8 GPUs on 4: header" "$(first)" "memcore: this step cannot fit: it asks for 8 GPUs, the node has 4:"
expect_eq "8 GPUs on 4: fix" "$(last)" "  fix: at most 4 GPUs per node fit this node (use more nodes), or another partition"
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 4 --mem 3000G
expect_eq "--mem 3000G on 1511 GiB: exit" "$RC" 1
expect_eq "--mem 3000G: header" "$(first)" "memcore: this step cannot fit: it asks for 3000 GiB of memory, the node has 1511.40 GiB:"
expect_eq "--mem 3000G: fix" "$(last)" "  fix: --mem=596G"
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 4 --cores 500
expect_eq "--cores 500 on 128: exit" "$RC" 1
expect_eq "--cores 500: header" "$(first)" "memcore: this step cannot fit: it asks for 500 cores, the node has 128:"
expect_eq "--cores 500: fix" "$(last)" "  fix: --cpus-per-gpu=6"
run_mc check --config "$TMP/empty.conf" --topology "$H200" --gpus 4 --cpus 600 --json
expect_eq "--cpus 600 (300 cores) on 128: exit" "$RC" 1
expect_eq "--cpus 600: impossible" "$(jq -r .impossible <<<"$OUT")" true

# --- the node fails the site's RAM rule: said first, only fixes that work ----
run_mc check --config "$TMP/empty.conf" --topology "$TIOGA" --gpus 8 --mem-per-gpu 60G
expect_eq "tioga: exit" "$RC" 1
expect_eq "tioga: header" "$(first)" "memcore: this step cannot fit: the node fails the site's RAM rule (503.40 GiB for 8 x 63.98 GiB GPUs):"
expect_contains "tioga: the rule" "$OUT" "  node RAM 503.40 GiB is below the site's RAM rule (511.88 GiB = 8 GPUs x 63.98 GiB x HostRamPerGpuRam 1):"
expect_contains "tioga: whatever it asks" "$OUT" "  no step of 8 GPUs fits this node, whatever it asks; an administrator can lower"
expect_eq "tioga: fix" "$(last)" "  fix: at most 6 GPUs per node fit this node (use more nodes), or another partition"
case "$OUT" in *"fix: --mem"*) fail "tioga: a --mem fix that cannot work" ;; esac
run_mc audit --config "$TMP/empty.conf" --topology "$TIOGA"
expect_eq "tioga audit agrees: exit" "$RC" 1
expect_contains "tioga audit agrees" "$OUT" "RAM rule: FAILS"

# --- the fix in the user's own options ---------------------------------------
printf 'NodeRam=2T\nNodeCores=112\nNodeGpus=8\n' >"$TMP/node.conf"
nc() { run_mc check --config "$TMP/node.conf" --gpus 8 --gpu-memory 80G "$@"; }
# 8 x 80 GiB + 16 x 4 GiB + 8 x 1 GiB = 712 GiB = 8 x 89 GiB
nc --mem-per-gpu 50G --cpus-per-gpu 2
expect_eq "--mem-per-gpu: exit" "$RC" 1
expect_eq "--mem-per-gpu: fix" "$(last)" "  fix: --mem-per-gpu=89G --cpus-per-gpu=3, or --dataloader-workers=1 with --mem-per-gpu=85G"
# 712 GiB over 24 CPUs = 30378.67 MiB, rounded up to Slurm's MB
nc --mem-per-cpu 4G --cpus-per-task 2 --ntasks-per-node 8
expect_eq "--mem-per-cpu -c: fix" "$(last)" "  fix: --mem-per-cpu=30379M --cpus-per-task=3, or --dataloader-workers=1 with --mem-per-cpu=43520M"
nc --mem 400G --cpus-per-task 16
expect_eq "-c, one task: fix" "$(last)" "  fix: --mem=712G --cpus-per-task=24, or --dataloader-workers=1 with --mem=680G"
nc --mem 800G --cpus-per-gpu 2 --json
expect_eq "fix_options" "$(jq -c .fix_options <<<"$OUT")" '["--cpus-per-gpu=3"]'
nc --mem-per-gpu 50G --mem 400G
expect_eq "--mem with --mem-per-gpu: exit" "$RC" 2
expect_contains "--mem with --mem-per-gpu" "$ERR" "only one of --mem, --mem-per-gpu and --mem-per-cpu"
nc --cpus-per-gpu 2 --cpus-per-task 4
expect_eq "--cpus-per-gpu with -c: exit" "$RC" 2

# --- --gpus 0: not a GPU step, one line --------------------------------------
run_mc check --config "$TMP/empty.conf" --gpus 0
expect_eq "--gpus 0: exit" "$RC" 0
expect_eq "--gpus 0: one line" "$OUT" "memcore: --gpus=0: not a GPU step; memcore has nothing to check"

# --- slurm.conf names a slurmctld that does not answer: exit 3 ---------------
dead_slurm_conf "$TMP/slurm.conf"
SLURM_CONF=$TMP/slurm.conf run_mc check --config "$TMP/empty.conf" --gpus 8 --partition p
expect_eq "slurmctld down: exit 3" "$RC" 3
expect_eq "slurmctld down: message" "$ERR" "memcore: cannot reach slurmctld (slurm.conf $TMP/slurm.conf): Unable to contact slurm controller (connect failure)"
# Node* keys come first: no slurmctld needed
SLURM_CONF=$TMP/slurm.conf run_mc check --config "$TMP/node.conf" --gpus 8 --gpu-memory 80G --json
expect_eq "Node* keys before slurmctld" "$(jq -r .node_source <<<"$OUT")" policy
SLURM_CONF=$TMP/slurm.conf run_mc audit --config "$TMP/empty.conf" --all
expect_eq "audit --all, slurmctld down: exit 3" "$RC" 3

# --- a GPU-less host is not the GPU node -------------------------------------
run_mc check --config "$TMP/empty.conf" --gpus 8
case "$ERR" in
*"topology live: hwloc"*)
	echo "note: this host's live topology does not load; GPU-less host case skipped" ;;
*"no GPUs"*)
	expect_eq "GPU-less host: exit" "$RC" 2
	expect_eq "GPU-less host: message" "$ERR" "memcore: check: this host has no GPUs, so it is not the node to judge; describe the node with --topology FILE.xml (its hwloc XML), --partition P with a readable slurm.conf (its nodes from slurmctld), or NodeRam=, NodeCores= and NodeGpus= in memcore.conf" ;;
*)
	[ "$RC" -le 1 ] || fail "GPU-less host: rc $RC: $ERR" ;;	# a GPU host
esac
finish
