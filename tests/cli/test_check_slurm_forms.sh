#!/bin/bash
# memcore check takes memory and CPUs in Slurm's forms (what the cli_filter
# hands it): --mem-per-gpu, --mem-per-cpu, --cpus (threads, counted as
# whole cores), and --json carries what the filter needs to decide.
. "$(dirname "$0")/lib.sh"
G4=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml   # 2 threads per core, 8 x T4
C=(check --config "$TMP/empty.conf" --topology "$G4" --gpus 8 --dataloader-workers 2)

run_mc "${C[@]}" --mem-per-gpu 20G --cpus 48
expect_eq "--mem-per-gpu=20G x 8 (160 GiB < 190.04): exit" "$RC" 1
expect_contains "--mem-per-gpu named" "$OUT" "160 GiB allocated (--mem-per-gpu=20G)"
expect_contains "--cpus 48 = 24 cores" "$OUT" "24 allocated"
run_mc "${C[@]}" --mem-per-gpu 24G --cpus 48
expect_eq "--mem-per-gpu=24G (192 GiB): exit" "$RC" 0
# 47 CPUs are 24 whole cores; --mem-per-cpu counts the 48 CPUs of them
run_mc "${C[@]}" --mem-per-cpu 4G --cpus 47
expect_eq "--mem-per-cpu=4G x 48: exit" "$RC" 0
expect_contains "--mem-per-cpu named" "$OUT" "192 GiB allocated (--mem-per-cpu=4G)"
run_mc "${C[@]}" --mem 200G --cpus 46
expect_eq "--cpus 46 = 23 cores: exit" "$RC" 1
run_mc "${C[@]}" --mem 400G --mem-per-gpu 3G
expect_eq "--mem with --mem-per-gpu: usage error" "$RC" 2
expect_contains "says which" "$ERR" "only one of --mem, --mem-per-gpu and --mem-per-cpu"
run_mc "${C[@]}" --cores 2 --cpus 3
expect_eq "--cores with --cpus: usage error" "$RC" 2

# --json: mode, allow_user_warn, node_source, node_gpus
run_mc "${C[@]}" --mem 100G --json
expect_eq "json exit (refused)" "$RC" 1
expect_eq "node_source topology-file" "$(jq -r .node_source <<<"$OUT")" topology-file
expect_eq "mode" "$(jq -r .mode <<<"$OUT")" enforce
expect_eq "allow_user_warn (default no)" "$(jq -r .allow_user_warn <<<"$OUT")" false
expect_eq "node_gpus" "$(jq -r .node_gpus <<<"$OUT")" 8
printf 'PartitionName=big GpuMemory=80G NodeRam=2000G NodeCores=96 NodeGpus=8 Mode=warn AllowUserWarn=no\n' >"$TMP/login.conf"
run_mc check --config "$TMP/login.conf" --partition big --gpus 16 --mem 400G --json
expect_eq "partition line: node_source policy" "$(jq -r .node_source <<<"$OUT")" policy
expect_eq "partition line: mode" "$(jq -r .mode <<<"$OUT")" warn
expect_eq "partition line: allow_user_warn" "$(jq -r .allow_user_warn <<<"$OUT")" false
expect_eq "node_gpus as the policy says (not the request)" "$(jq -r .node_gpus <<<"$OUT")" 8
expect_eq "80 GiB GPUs" "$(jq -r .gpu_memory_bytes <<<"$OUT")" 85899345920
finish
