#!/bin/bash
# memcore audit --json on every real topology in tests/data gives what
# the machines described in tests/data/ATTRIBUTION.md have:
# GPU count, GPU -> NUMA node in Slurm index order, GPU memory, host RAM,
# and the sizing rule's verdict at the default 2 workers and 4 reserved cores.
. "$(dirname "$0")/lib.sh"

GIB=1073741824
# file | gpus | numa of each GPU | KiB per GPU or null | host RAM GiB | ram_rule_ok | cores_rule_ok
while IFS='|' read -r file ngpu numa kib ram ramok coresok; do
	[ -z "$file" ] && continue
	run_mc audit --config "$TMP/empty.conf" --topology "$DATA/$file" --json
	if [ "$RC" -gt 1 ]; then fail "$file: exit $RC: $ERR"; continue; fi
	expect_eq "$file gpus" "$(jq '.gpus | length' <<<"$OUT")" "$ngpu"
	expect_eq "$file indices" "$(jq -c '[.gpus[].index]' <<<"$OUT")" \
		"$(jq -c "[range(0; $ngpu)]" <<<null)"
	expect_eq "$file numa" "$(jq -r '[.gpus[].numa_node] | map(tostring) | join(",")' <<<"$OUT")" "$numa"
	if [ "$kib" = null ]; then
		expect_eq "$file memory" "$(jq -c '[.gpus[].memory_bytes] | unique' <<<"$OUT")" "[null]"
		expect_eq "$file memory source" "$(jq -c '[.gpus[].memory_source] | unique' <<<"$OUT")" '["none"]'
	else
		expect_eq "$file memory" "$(jq -c '[.gpus[].memory_bytes] | unique' <<<"$OUT")" "[$((kib * 1024))]"
	fi
	expect_near "$file host RAM GiB" "$(jq ".host_ram_bytes / $GIB" <<<"$OUT")" "$ram" 0.1
	expect_eq "$file ram_rule_ok" "$(jq '.ram_rule_ok' <<<"$OUT")" "$ramok"
	expect_eq "$file cores_rule_ok" "$(jq '.cores_rule_ok' <<<"$OUT")" "$coresok"
	want_rc=0
	[ "$ramok" = true ] && [ "$coresok" = true ] || want_rc=1
	expect_eq "$file exit status" "$RC" "$want_rc"
done <<'TABLE'
nvidia-dgx2h-16xv100-trimmed.xml|16|0,0,0,0,0,0,0,0,1,1,1,1,1,1,1,1|null|1510.6|false|false
lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml|4|1,2,6,7|146593728|1511.4|true|true
ibm-ac922-lassen-2xpower9-4xv100.xml|4|0,0,8,8|16515072|255.4|true|true
ibm-ac922-lassen-2xpower9-4xv100-hwloc1.xml|4|0,0,8,8|null|255.4|false|true
aws-g4dn-metal-2xxeon8259cl-8xt4.xml|8|0,0,0,0,1,1,1,1|15472384|377.5|true|true
hpe-ex235a-tioga-epyc7a53-4xmi250x-8gcd.xml|8|3,3,1,1,0,0,2,2|67092480|503.4|false|true
hpe-ex255a-4xmi300a-spx.xml|4|0,1,2,3|null|502.0|true|true
supermicro-as4124gs-2xepyc7402-8xmi50-v1format.xml|8|0,0,0,0,1,1,1,1|33538048|251.4|false|true
juwels-booster-2xepyc7402-nps4-4xa100-pcionly.xml|4|3,1,7,5|null|503.5|false|true
ibm-ac922-2xpower9-6xv100-gpumemnuma-DERIVED.xml|6|0,0,0,8,8,8|null|251.6|false|false
local-2numa-2gpu.xml|2|0,1|16777216|24.0|false|false
TABLE

# The PCI-only JUWELS file has no GPU memory: GpuMemory= fills it in, and the
# RAM rule is then judged (4 x 40 GiB against 503.5 GiB).
echo "GpuMemory=40G" >"$TMP/gpumem.conf"
run_mc audit --config "$TMP/gpumem.conf" --json \
	--topology "$DATA/juwels-booster-2xepyc7402-nps4-4xa100-pcionly.xml"
expect_eq "juwels exit" "$RC" 0
expect_eq "juwels memory" "$(jq -c '[.gpus[].memory_bytes] | unique' <<<"$OUT")" "[$((40 * GIB))]"
expect_eq "juwels source" "$(jq -c '[.gpus[].memory_source] | unique' <<<"$OUT")" '["policy"]'
expect_eq "juwels ram rule" "$(jq '.ram_rule_ok' <<<"$OUT")" true

# The hwloc 1.x Lassen dump has no PCI names (nor cuda/nvml devices): each
# GPU is named by its vendor and PCI ids, never left blank.
run_mc audit --config "$TMP/empty.conf" --json \
	--topology "$DATA/ibm-ac922-lassen-2xpower9-4xv100-hwloc1.xml"
expect_eq "hwloc1 names" "$(jq -c '[.gpus[].model] | unique' <<<"$OUT")" '["NVIDIA [10de:1db1]"]'
run_mc audit --config "$TMP/empty.conf" \
	--topology "$DATA/ibm-ac922-lassen-2xpower9-4xv100-hwloc1.xml"
expect_contains "hwloc1 text name" "$OUT" "GPU 3  0035:04:00.0  NUMA 8  memory unknown (none)  NVIDIA [10de:1db1]"
# Every real dump with PCI ids names its GPUs.
for f in "$DATA"/*.xml; do
	case $f in *DERIVED*) continue ;; esac	# sysfs snapshot: ids 0000:0000
	run_mc audit --config "$TMP/empty.conf" --json --topology "$f"
	expect_eq "$(basename "$f"): blank GPU names" \
		"$(jq '[.gpus[] | select(.model == "")] | length' <<<"$OUT")" 0
done

# The live machine's host RAM is what slurmd's RealMemory counts (MemTotal;
# less GPU-memory NUMA nodes, which no test machine has), not hwloc's NUMA
# memory; when the two disagree, the audit gives both.
# A GPU-less host has nothing to audit live (below): its facts are read
# through the cache it writes all the same.
run_mc audit --config "$TMP/empty.conf" --json
case "$ERR" in *"no GPUs"*)
	run_mc audit --config "$TMP/empty.conf" --write-cache "$TMP/live.cache"
	expect_eq "GPU-less host: --write-cache exit" "$RC" 2
	run_mc audit --config "$TMP/empty.conf" --cache "$TMP/live.cache" --json ;;
esac
memtotal=$(awk '/^MemTotal:/ { print $2 * 1024 }' /proc/meminfo)
expect_near "live host RAM against /proc/meminfo MemTotal" \
	"$(jq '.host_ram_bytes' <<<"$OUT")" "$memtotal" $((16 << 20))
live_hwloc=$(jq '.hwloc_ram_bytes' <<<"$OUT")
[ "$live_hwloc" != null ] && [ "$live_hwloc" -gt 0 ] || fail "live hwloc_ram_bytes: $live_hwloc"
disagrees=$(jq '.ram_disagrees' <<<"$OUT")
run_mc audit --config "$TMP/empty.conf"
case "$ERR" in *"no GPUs"*)
	run_mc audit --config "$TMP/empty.conf" --cache "$TMP/live.cache" ;;
esac
if [ "$disagrees" = true ]; then
	expect_contains "live RAM note" "$OUT" "note: host RAM "
	expect_contains "live RAM note source" "$OUT" "is the kernel's (MemTotal, what slurmd's RealMemory counts); hwloc's NUMA nodes hold"
else
	case $OUT in *"note: host RAM"*) fail "live RAM note without a disagreement" ;; esac
fi
# From XML, host RAM is hwloc's figure and there is nothing to note.
run_mc audit --config "$TMP/empty.conf" --json --topology "$DATA/local-2numa-2gpu.xml"
expect_eq "xml hwloc RAM" "$(jq '.hwloc_ram_bytes == .host_ram_bytes' <<<"$OUT")" true
expect_eq "xml RAM note" "$(jq '.ram_disagrees' <<<"$OUT")" false

# The DGX-2H trimmed file keeps 4 cores for 16 GPUs: the text names the rule.
run_mc audit --config "$TMP/empty.conf" --topology "$DATA/nvidia-dgx2h-16xv100-trimmed.xml"
expect_eq "dgx2 exit" "$RC" 1
expect_contains "dgx2 text" "$OUT" "cores rule: FAILS - 4 cores, 52 needed = 16 GPUs x (2 workers + 1) + 4 reserved"

# MI300A SPX: an APU node, one memory pool; the RAM rule holds by
# construction and the audit says why. UnifiedMemory=no: as before (GPU
# memory unknown, rule not met).
MI300A=$DATA/hpe-ex255a-4xmi300a-spx.xml
run_mc audit --config "$TMP/empty.conf" --topology "$MI300A" --json
expect_eq "mi300a exit" "$RC" 0
expect_eq "mi300a unified" "$(jq '.unified_memory' <<<"$OUT")" true
expect_eq "mi300a ram rule" "$(jq '.ram_rule_ok' <<<"$OUT")" true
expect_eq "mi300a apus" "$(jq -c '[.gpus[].apu]' <<<"$OUT")" "[true,true,true,true]"
run_mc audit --config "$TMP/empty.conf" --topology "$MI300A"
expect_contains "mi300a text" "$OUT" "RAM rule: ok - an APU node (AMD MI300A by PCI id): GPU memory is this host RAM, one pool of 501.97 GiB"
printf 'UnifiedMemory=no\n' >"$TMP/unified-no.conf"
run_mc audit --config "$TMP/unified-no.conf" --topology "$MI300A" --json
expect_eq "mi300a UnifiedMemory=no exit" "$RC" 1
expect_eq "mi300a UnifiedMemory=no unified" "$(jq '.unified_memory' <<<"$OUT")" false
expect_eq "mi300a UnifiedMemory=no ram rule" "$(jq '.ram_rule_ok' <<<"$OUT")" false
# An H200 node is no APU.
run_mc audit --config "$TMP/empty.conf" --topology "$DATA/lenovo-sd665nv3-2xepyc9555-nps4-4xh200.xml" --json
expect_eq "h200 not unified" "$(jq '.unified_memory' <<<"$OUT")" false

# Input errors: exit 2 with the file named.
run_mc audit --topology "$TMP/missing.xml"
expect_eq "missing topology exit" "$RC" 2
expect_contains "missing topology message" "$ERR" "$TMP/missing.xml"
run_mc audit --bogus
expect_eq "unknown option exit" "$RC" 2
expect_contains "unknown option message" "$ERR" "unknown option '--bogus'"
# --- the audit tells the truth -------------------------------------------
# Figures computed here: RamPerWorker 4 GiB, RamPerTask 1 GiB, 2 workers,
# 4 reserved cores (the defaults); GiB with two decimals, rounded.
gib() { awk -v b="$1" 'BEGIN { v = b / 1073741824; if (v == int(v)) printf "%d GiB", v; else printf "%.2f GiB", v }'; }
G4=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
run_mc audit --config "$TMP/empty.conf" --topology "$G4" --json
m=$(jq '.gpus[0].memory_bytes' <<<"$OUT"); host=$(jq '.host_ram_bytes' <<<"$OUT")
# HostRamPerGpuRam=1.5: the ratio is applied to "needed", and to the step
printf 'HostRamPerGpuRam=1.5\n' >"$TMP/ratio.conf"
run_mc audit --config "$TMP/ratio.conf" --topology "$G4"
expect_eq "ratio exit" "$RC" 0
floor=$((8 * m * 3 / 2))
expect_contains "ratio: RAM rule line" "$OUT" "RAM rule: ok - host RAM $(gib "$host"), GPUs' memory $(gib $((8 * m))) x 1.50 = $(gib $floor)
cores rule: ok - 48 cores, 28 needed = 8 GPUs x (2 workers + 1) + 4 reserved
full-node step: ok - 8 GPUs x 2 workers need $(gib $((floor + 16 * 4 * 1073741824 + 8 * 1073741824))) of $(gib "$host") and 24 of 48 cores"
run_mc audit --config "$TMP/ratio.conf" --topology "$G4" --json
expect_eq "ratio: ram_needed_bytes" "$(jq '.ram_needed_bytes' <<<"$OUT")" "$floor"
expect_eq "ratio: step ram" "$(jq '.full_node_step.ram_needed_bytes' <<<"$OUT")" "$((floor + 72 * 1073741824))"
expect_eq "ratio: ok" "$(jq '.ok' <<<"$OUT")" true

# Node* keys: the node they describe, not this machine; a node whose RAM
# meets the rule (700 >= 8 x 80 GiB) but no full-node step fits (640 +
# 16 x 4 + 8 x 1 = 712 GiB): exit 1, and why.
printf 'NodeRam=700G\nNodeCores=32\nNodeGpus=8\nGpuMemory=80G\n' >"$TMP/nodekeys.conf"
run_mc audit --config "$TMP/nodekeys.conf"
expect_eq "Node* keys: no full-node step fits: exit 1" "$RC" 1
expect_eq "Node* keys: the described node, every line" "$OUT" "node described by memcore.conf (NodeRam=, NodeCores=, NodeGpus=): 700 GiB host RAM, 32 cores, 8 GPUs
RAM rule: ok - host RAM 700 GiB, GPUs' memory 640 GiB x 1.00 = 640 GiB
cores rule: ok - 32 cores, 28 needed = 8 GPUs x (2 workers + 1) + 4 reserved
full-node step: FAILS - 8 GPUs x 2 workers need 712 GiB of 700 GiB and 24 of 32 cores: has 700 GiB, needs 712 GiB
  memcore: this step cannot fit: it needs 712 GiB of RAM, the node has 700 GiB:
    GPUs          8 x 80 GiB (memcore.conf GpuMemory=)
    host RAM      712 GiB needed = 640 GiB GPU floor + 16 workers x 4 GiB + 8 tasks x 1 GiB
                  700 GiB allocated (the whole node)        short 12 GiB
    CPU cores     24 needed = 8 GPUs x (2 workers + 1)
                  32 allocated
    fix: no allocation on this node can fit 712 GiB (node has 700 GiB)
         --dataloader-workers=1 is the most this node can hold"
run_mc audit --config "$TMP/nodekeys.conf" --json
expect_eq "Node* keys json: RAM" "$(jq '.host_ram_bytes' <<<"$OUT")" $((700 * 1073741824))
expect_eq "Node* keys json: cores" "$(jq '.cores' <<<"$OUT")" 32
expect_eq "Node* keys json: GPUs" "$(jq '.node_gpus' <<<"$OUT")" 8
expect_eq "Node* keys json: rule ok" "$(jq '.ram_rule_ok' <<<"$OUT")" true
expect_eq "Node* keys json: step fails" "$(jq '.full_node_step.fits' <<<"$OUT")" false
expect_eq "Node* keys json: not ok" "$(jq '.ok' <<<"$OUT")" false
# 712 GiB: the full-node step fits, exit 0
printf 'NodeRam=712G\nNodeCores=32\nNodeGpus=8\nGpuMemory=80G\n' >"$TMP/nodekeys2.conf"
run_mc audit --config "$TMP/nodekeys2.conf"
expect_eq "Node* keys 712G: exit 0" "$RC" 0
expect_contains "Node* keys 712G: ok" "$OUT" "full-node step: ok - 8 GPUs x 2 workers need 712 GiB of 712 GiB and 24 of 32 cores"
# a 2-core node described by NodeCores=2 is no "ok" for 28 cores
printf 'NodeRam=2000G\nNodeCores=2\nNodeGpus=8\nGpuMemory=80G\n' >"$TMP/nodekeys3.conf"
run_mc audit --config "$TMP/nodekeys3.conf"
expect_eq "NodeCores=2: exit 1" "$RC" 1
expect_contains "NodeCores=2: the rule" "$OUT" "cores rule: FAILS - 2 cores, 28 needed = 8 GPUs x (2 workers + 1) + 4 reserved"

# --- a misspelt --partition is refused, as check refuses it ----------------
printf 'GpuMemory=80G\nNodeRam=512G\nNodeCores=64\nNodeGpus=4\nPartitionName=gpu Mode=warn\n' >"$TMP/parts.conf"
run_mc audit --config "$TMP/parts.conf" --partition nope
expect_eq "audit --partition nope: exit 2" "$RC" 2
expect_contains "audit --partition nope: names it and the known ones" "$ERR" "memcore: audit: --partition=nope: no such partition in $TMP/parts.conf (partitions: gpu)"
expect_eq "audit --partition nope: nothing audited" "$OUT" ""
run_mc audit --config "$TMP/parts.conf" --partition gpu
expect_eq "audit --partition gpu: exit 0" "$RC" 0
run_mc audit --config "$TMP/empty.conf" --topology "$DATA/hpe-ex235a-tioga-epyc7a53-4xmi250x-8gcd.xml" --partition nope
expect_eq "audit --topology --partition nope: exit 2" "$RC" 2

# --- a GPU-less host: nothing to audit, exit 2, as check says it -------------
# GPU-less: no NVIDIA device files and no AMD KFD (what NVML / ROCm SMI and
# hwloc's GPU objects need).
ngpu=$(find /dev -maxdepth 1 \( -name 'nvidia[0-9]*' -o -name kfd \) 2>/dev/null | wc -l)
run_mc audit --config "$TMP/empty.conf"
case "$ERR" in
*"topology live: hwloc"*)
	echo "note: this host's live topology does not load; GPU-less host case skipped" ;;
*)
	if [ "$ngpu" = 0 ]; then
		expect_eq "GPU-less audit: exit" "$RC" 2
		expect_eq "GPU-less audit: no rule lines" "$OUT" ""
		expect_eq "GPU-less audit: message" "$ERR" "memcore: audit: this host has no GPUs, so there is nothing to audit; describe the node with --topology FILE.xml (its hwloc XML), --partition P with a readable slurm.conf (its nodes from slurmctld), or NodeRam=, NodeCores= and NodeGpus= in memcore.conf"
		run_mc audit --config "$TMP/empty.conf" --json
		expect_eq "GPU-less audit --json: exit" "$RC" 2
		expect_eq "GPU-less audit --json: no JSON" "$OUT" ""
		# NodeRam= and NodeCores= without NodeGpus= describe no GPU
		# node either (the GPUs would be this host's: none).
		printf 'NodeRam=512G\nNodeCores=64\n' >"$TMP/nogpus.conf"
		run_mc audit --config "$TMP/nogpus.conf"
		expect_eq "NodeRam=, NodeCores=, no GPUs: exit" "$RC" 2
		expect_contains "NodeRam=, NodeCores=, no GPUs: message" "$ERR" "memcore: audit: this host has no GPUs, so there is nothing to audit"
		# check on the same host: the same code path and text.
		run_mc check --config "$TMP/empty.conf" --gpus 1
		expect_eq "GPU-less check: exit" "$RC" 2
		expect_contains "GPU-less check: same text" "$ERR" "memcore: check: this host has no GPUs, so it is not the node to judge; describe the node with --topology FILE.xml"
	else
		[ "$RC" -le 1 ] || fail "GPU host: rc $RC: $ERR"
		expect_contains "GPU host: the rule" "$OUT" "cores rule:"
	fi ;;
esac
finish
