#!/bin/bash
# memcore check --partition with the node described (TopologyFile=,
# --topology, NodeRam=/NodeCores=) and no readable slurm.conf: a partition
# not named by memcore.conf's PartitionName= lines is refused (exit 2,
# saying where it looked), never judged by the global policy.
. "$(dirname "$0")/lib.sh"

T4=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
printf 'TopologyFile=%s\nPartitionName=gpu Mode=warn\n' "$T4" >"$TMP/topo.conf"
run_mc check --config "$TMP/topo.conf" --partition gpus --gpus 8
expect_eq "misspelt partition, TopologyFile=: exit" "$RC" 2
expect_eq "misspelt partition, TopologyFile=: message" "$ERR" \
	"memcore: check: --partition=gpus: no such partition in $TMP/topo.conf (partitions: gpu); slurm.conf $SLURM_CONF, which lists them all, is not readable (No such file or directory)"
expect_eq "misspelt partition: nothing on stdout" "$OUT" ""
run_mc check --config "$TMP/topo.conf" --partition gpu --gpus 8
expect_eq "named partition, TopologyFile=: exit" "$RC" 0
expect_contains "named partition: judged" "$OUT" "memcore: this step fits"

# --topology, a memcore.conf without PartitionName= lines
run_mc check --config "$TMP/empty.conf" --topology "$T4" --partition gpu --gpus 8
expect_eq "--topology, no partition lines: exit" "$RC" 2
expect_contains "--topology, no partition lines: message" "$ERR" \
	"--partition=gpu: no such partition in $TMP/empty.conf (no PartitionName= lines)"

# NodeRam=/NodeCores= on the partition's line: that partition is known.
printf 'PartitionName=big GpuMemory=80G NodeRam=2000G NodeCores=96 NodeGpus=8\n' >"$TMP/login.conf"
run_mc check --config "$TMP/login.conf" --partition big --gpus 8
expect_eq "NodeRam= partition: exit" "$RC" 0
run_mc check --config "$TMP/login.conf" --partition Big --gpus 8
expect_eq "case differs (Slurm compares case-sensitively): exit" "$RC" 2
finish
