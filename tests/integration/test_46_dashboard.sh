#!/bin/bash
# The dashboards on real parts: Debian's prometheus-node-exporter reads the
# PrometheusTextfile in its own default textfile directory, as the package
# made it (/var/lib/prometheus/node-exporter, root's, under a directory of
# the prometheus account), Debian's prometheus of every release the guests
# run (bookworm's 2.42 installed here, trixie's 2.53 and sid's 3.5 unpacked
# from their packages, tests/vm/prometheus.sh) scrapes it every second and
# serves contrib/prometheus/consoles, and GPU steps of known memory run on
# the test cluster. Every query of (a) and (c), and the console's graphs
# of (b), are asked of each release.
#  (a) while two steps of two jobs run at once, every query of every panel
#      of contrib/grafana/memcore.json (taken from the file with jq: a new
#      panel without an expectation here fails), its variables substituted
#      as Grafana does ($partition, $node, $user: all (".*"), then the
#      test's own, regex-escaped, then a partition that matches nothing:
#      no series, so every query uses them; $job each job; $__range 1h,
#      $__rate_interval 5m), returns that job's series alone, labelled
#      jobid, step, user, node, with the memory the step holds (mc_hold:
#      anonymous, mapped file), its limit (--mem) and the rule's figure
#      (HostRamPerGpuRam x the GPU's memory in the topology); the cluster
#      panels the increase over the range of the steps ended so far (a
#      refused one, an OOM-killed one), waste against the larger of the
#      rule and the peak; the variables' label_values queries offer the
#      partition, node, user and jobs;
#  (b) the console (memcore.html, served by Prometheus, self-contained: no
#      /classic/static) runs only queries of the Grafana file, and
#      headless Chromium draws its graphs and tables: each graph has a
#      drawn line in the DOM, the screenshot has coloured pixels; a job
#      with no steps draws no per-job line (the check can fail);
#  (c) once the steps end their gauges go (stale in Prometheus, files
#      removed), and the cluster panels count them: judged, refused,
#      OOM-killed, asked beyond need; report --json's keys are memcore(8)
#      JSON OUTPUT's;
#  (d) a gauges file a killed slurmstepd left (its pid gone) is removed by
#      the next step on the node; another node's is left alone.
# guest: no: Debian's prometheus, prometheus-node-exporter and chromium
#   are in no guest image; the gauges' files are written the same on
#   cgroup v1 and v2 (the sample is test_37's, the file test_gauges's)
. "$(dirname "$0")/lib.sh"

MC_SOCKETS=1 MC_CORES_PER_SOCKET=2 MC_THREADS_PER_CORE=1
MC_REAL_MEMORY=20000 MC_GPUS=2
PROGS=$MEMCORE_BUILD/progs
# The two live steps hold their memory until the test has looked: every
# panel's query four times over, the variables, the console.
MC_CMD_TIMEOUT=600
MIB=$((1 << 20))
PY=/usr/bin/python3	# Debian's, with python3-pil
for p in mc_hold mc_anon_toucher; do
	[ -x "$PROGS/$p" ] || mc_die "$PROGS/$p missing: make progs"
done
for c in prometheus prometheus-node-exporter chromium jq curl; do
	command -v "$c" >/dev/null ||
		mc_die "$c missing (Debian's packages: contrib/install-deps.sh check)"
done
"$PY" -c 'import PIL' 2>/dev/null || mc_die "python3-pil missing (contrib/install-deps.sh check)"
GRAFANA=$MC_TOP/contrib/grafana/memcore.json
CONSOLES=$MC_TOP/contrib/prometheus/consoles
jq -e '.panels | length > 0' "$GRAFANA" >/dev/null || mc_die "$GRAFANA: no panels"

mc_cluster_start
# The directory Debian's prometheus-node-exporter reads by default, as the
# package made it (root's, under /var/lib/prometheus, which the prometheus
# account owns): README and etc/memcore.conf document it, and memcore
# must write there, not turn the textfile off.
PROMDIR=$(prometheus-node-exporter --help 2>&1 | sed -n 's/.*--collector.textfile.directory="\([^"]*\)".*/\1/p')
[ -d "$PROMDIR" ] || mc_die "prometheus-node-exporter's textfile directory '$PROMDIR' is not there"
mc_log "node_exporter's own textfile directory: $(stat -c '%n %U:%G %a' "$PROMDIR" "${PROMDIR%/*}" | tr '\n' ' ')"
ls "$PROMDIR" | grep -q '^memcore' &&
	mc_die "$PROMDIR holds memcore files already (a node of a cluster? run the tests on a build host)"
mc_at_exit "rm -f '$PROMDIR'/memcore.prom '$PROMDIR'/memcore_step_*.prom '$PROMDIR'/.memcore*"
mc_small_policy
printf 'SampleInterval=500ms\nPrometheusTextfile=%s\n' "$PROMDIR/memcore.prom" >>"$MC_CONF_DIR/memcore.conf"

# --- node_exporter and Prometheus on free loopback ports ---------------------
pick_port() {
	local lo=${MC_PORT_RANGE%-*} hi=${MC_PORT_RANGE#*-} p n
	for n in $(seq 200); do
		p=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo)))
		case " $MC_CTLD_PORT $MC_SLURMD_PORT $* " in *" $p "*) continue ;; esac
		_mc_port_free "$p" && { echo "$p"; return 0; }
	done
	return 1
}
NE_PORT=$(pick_port) || mc_die "no free port"
prometheus-node-exporter --collector.disable-defaults --collector.textfile \
	--web.listen-address="127.0.0.1:$NE_PORT" >"$MC_LOG_DIR/node_exporter.log" 2>&1 &
NE_PID=$!
mc_at_exit 'kill "$NE_PID" 2>/dev/null; wait "$NE_PID" 2>/dev/null'
mkdir -p "$MC_WORK/prom-data" "$MC_WORK/prom-libs"
cat >"$MC_WORK/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: node
    static_configs: [{targets: ['127.0.0.1:$NE_PORT']}]
EOF
# Debian's Prometheus of every release the guests run, each scraping the
# same node_exporter (tests/vm/prometheus.sh: this machine's own, and
# trixie's and sid's unpacked from their packages): every query below is
# asked of each. The console library directory is empty: memcore.html
# needs none.
mapfile -t RELEASES < <(bash "$MC_TOP/tests/vm/prometheus.sh")
[ "${#RELEASES[@]}" -ge 3 ] || mc_die "not every release's Prometheus: ${RELEASES[*]} (tests/vm/prometheus.sh)"
PROM_API=() PROM_NAME=() PROM_PIDS=()
mc_at_exit 'kill "${PROM_PIDS[@]}" 2>/dev/null; wait "${PROM_PIDS[@]}" 2>/dev/null'
used=$NE_PORT
for r in "${RELEASES[@]}"; do
	read -r suite ver bin <<<"$r"
	port=$(pick_port $used) || mc_die "no free port"
	used="$used $port"
	mkdir -p "$MC_WORK/prom-data-$suite"
	"$bin" --config.file="$MC_WORK/prometheus.yml" \
		--storage.tsdb.path="$MC_WORK/prom-data-$suite" \
		--web.listen-address="127.0.0.1:$port" \
		--web.console.templates="$CONSOLES" \
		--web.console.libraries="$MC_WORK/prom-libs" >"$MC_LOG_DIR/prometheus-$suite.log" 2>&1 &
	PROM_PIDS+=($!)
	PROM_API+=("http://127.0.0.1:$port") PROM_NAME+=("Prometheus ${ver%%+*} ($suite)")
done
# q EXPR: the instant query's JSON, of the Prometheus at $API.
q() { curl -sfG --max-time 5 "$API/api/v1/query" --data-urlencode "query=$1"; }
for i in "${!PROM_API[@]}"; do
	API=${PROM_API[$i]}
	mc_wait_until 30 eval '[ "$(q up | jq -r ".data.result[0].value[1]" 2>/dev/null)" = 1 ]' ||
		{ mc_dump_logs; mc_die "${PROM_NAME[$i]} did not scrape node_exporter in 30 s"; }
	mc_log "${PROM_NAME[$i]} on $API"
done
# This machine's own first: the steps' waits and the console's pictures.
API=${PROM_API[0]} PV=${PROM_NAME[0]}
mc_log "node_exporter on :$NE_PORT"

# What the queries must return, computed here: the rule's figure is
# HostRamPerGpuRam x the GPU's CUDA memory (KiB in the topology); the
# policy's other terms are 0 (mc_small_policy).
per_gpu=$(sed -n 's/^HostRamPerGpuRam=//p' "$MC_CONF_DIR/memcore.conf")
gpu_kib=$(grep -o 'CUDAGlobalMemorySize" value="[0-9]*' "$MC_TOP/tests/data/local-2numa-2gpu.xml" | head -n1 | grep -o '[0-9]*$')
RULE=$(awk -v f="$per_gpu" -v k="$gpu_kib" 'BEGIN { printf "%.2f\n", f * k * 1024 }')
mc_log "the rule's figure for one GPU: $per_gpu x $gpu_kib KiB = $RULE bytes"
ME=$(id -un)

# --- steps ending before the live ones: a refusal, an OOM kill --------------
# First a refused step that makes the counters' series, scraped before the
# steps the panels count: increase() counts from a series' first sample,
# as on a node whose file has long been there.
mc_run srun -n1 --gpus=1 --mem=100M -J mc-dash-seed true
assert_ne 0 "$MC_RC" "the seed step refused"
mc_wait_until 15 eval '[ "$(q "sum(memcore_steps_judged_total)" | jq -r ".data.result[0].value[1]")" = 1 ]' ||
	mc_die "Prometheus has no counters of the seed step"
sleep 10	# samples of it: increase() extrapolates by at most 1.5 intervals
mc_run srun -n1 --gpus=1 --mem=100M -J mc-dash-refused true
T_REFUSED=$SECONDS
assert_ne 0 "$MC_RC" "a step refused (100 MiB < the rule's $RULE bytes)"
mc_run srun -n1 --gpus=1 --mem=256M -J mc-dash-oom "$PROGS/mc_anon_toucher" 512
T_OOM=$SECONDS
assert_ne 0 "$MC_RC" "a step OOM-killed"
job_named() { scontrol -o show job 2>/dev/null | grep " JobName=$1 " | sed -n 's/^JobId=\([0-9]*\) .*/\1/p'; }
REFUSED=$(job_named mc-dash-refused) OOM=$(job_named mc-dash-oom)
[ -n "$REFUSED" ] && [ -n "$OOM" ] || mc_die "scontrol does not name the refused and the OOM-killed jobs"
ctr() { sed -n "s/^$1{node=\"$MC_NODE_NAME\",partition=\"\([^\"]*\)\"} //p" "$PROMDIR/memcore.prom" 2>/dev/null; }
mc_wait_until 10 eval '[ "$(ctr memcore_steps_judged_total)" = 3 ]' ||
	mc_die "the two steps are not in $PROMDIR/memcore.prom"
# The partition label the counters got (slurmd's record, else "other"):
# the gauges must carry the same.
PART=$(sed -n "s/^memcore_steps_judged_total{node=\"$MC_NODE_NAME\",partition=\"\([^\"]*\)\"} .*/\1/p" "$PROMDIR/memcore.prom")
[ -n "$PART" ] || mc_die "no partition label in $PROMDIR/memcore.prom"

# --- (a) two jobs' steps at once ---------------------------------------------
# Each holds its memory until the test has looked (the release file),
# however long that takes on a loaded machine, then ends with rc 0.
A_MIB=200 A_FILE=128 A_MEM=1024 B_MIB=100 B_MEM=512
REL=$MC_WORK/tmp/release
rm -f "$MC_WORK/tmp/a.bin"* "$MC_WORK/tmp/b.bin"* "$REL"
mc_at_exit 'touch "$REL"; rm -f "$MC_WORK/tmp/a.bin" "$MC_WORK/tmp/b.bin"'
hold() { # ANON_MIB FILE FILE_MIB: the step's command
	echo "$PROGS/mc_hold $1 600 $2 $3 & p=\$!; while [ ! -e $REL ]; do sleep 0.2; done; kill \$p; wait \$p; exit 0"
}
timeout -k 5 "$MC_CMD_TIMEOUT" srun -n1 --gpus=1 --mem=${A_MEM}M -J mc-dash-a \
	sh -c "$(hold $A_MIB "$MC_WORK/tmp/a.bin" $A_FILE)" >"$MC_WORK/tmp/a.out" 2>&1 </dev/null &
A_PID=$!
# B's user tries to name its own node and partition: labels come from
# slurmstepd's own knowledge, never the job's environment.
SLURMD_NODENAME=forged-node SLURM_JOB_PARTITION=forged-part \
	timeout -k 5 "$MC_CMD_TIMEOUT" srun -n1 --gpus=1 --mem=${B_MEM}M -J mc-dash-b \
	sh -c "$(hold $B_MIB "$MC_WORK/tmp/b.bin" 0)" >"$MC_WORK/tmp/b.out" 2>&1 </dev/null &
B_PID=$!
mc_at_exit 'kill "$A_PID" "$B_PID" 2>/dev/null'
mc_wait_until 30 eval '[ -e "$MC_WORK/tmp/a.bin.ready" ] && [ -e "$MC_WORK/tmp/b.bin.ready" ]' ||
	mc_die "the two steps did not start holding their memory"
A=$(squeue -h -n mc-dash-a -o %i) B=$(squeue -h -n mc-dash-b -o %i)
mc_log "job A $A: $A_MIB MiB anon + $A_FILE MiB mapped, --mem=${A_MEM}M; job B $B: $B_MIB MiB, --mem=${B_MEM}M"
nr_of() { q "memcore_step_memory_nonreclaimable_bytes{jobid=\"$1\"}" | jq -r '.data.result[0].value[1] // 0'; }
mc_wait_until 20 eval '[ "$(nr_of "$A" | cut -d. -f1)" -ge $((A_MIB * MIB)) ] && [ "$(nr_of "$B" | cut -d. -f1)" -ge $((B_MIB * MIB)) ]' ||
	{ ls -la "$PROMDIR"; mc_die "Prometheus has no gauges of jobs $A and $B at their held memory"; }
mc_log "gauges files: $(cd "$PROMDIR" && ls memcore_step_* | tr '\n' ' ')"
assert_eq 2 "$(ls "$PROMDIR" | grep -c '^memcore_step_.*\.prom$')" "(a) one gauges file per running step"

# within LO HI V: LO <= V <= HI (numbers).
within() { awk -v lo="$1" -v hi="$2" -v v="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }
# mib EXPR: EXPR MiB in bytes (EXPR: awk arithmetic on numbers).
mib() { awk "BEGIN { printf \"%.0f\\n\", ($1) * 1048576 }"; }
# expect REF JOB PHASE: "COUNT LO HI" that the query REF must give (the
# series count and its values' bounds, bytes or steps) with $job=JOB;
# PHASE run: A and B running; end: all ended. Bounds: a step's
# non-reclaimable memory is what it holds plus up to 64 MiB (the program,
# libc, the kernel's share); an OOM-killed step's peak lies between 3/4 of
# its limit and the limit plus 16 MiB.
# increase() over the range extrapolates a little past the first and last
# samples (1.5 intervals of 1 s at most, over the 10 s or more since the
# seed step): counts and sums within [x, 1.2 x].
expect() {
	local ref=$1 job=$2 phase=$3 held mem cache n_ran w_lo w_hi r
	if [ "$job" = "$A" ]; then held=$A_MIB mem=$A_MEM cache=$A_FILE; else held=$B_MIB mem=$B_MEM cache=0; fi
	# waste = asked beyond need, need the larger of the rule's figure and
	# the peak, at most asked: the OOM one (256 MiB, peak 192..272), then
	# A and B too (peak: what they hold, up to 64 MiB more).
	r=$(awk -v r="$RULE" 'BEGIN { print r / 1048576 }')
	read -r w_lo w_hi < <(awk -v r="$r" -v end="$([ "$phase" = end ] && echo 1 || echo 0)" \
		-v am="$A_MEM" -v ah="$A_MIB" -v bm="$B_MEM" -v bh="$B_MIB" '
		function need(asked, peak) { n = peak > r ? peak : r; return n < asked ? n : asked }
		BEGIN {
			lo = 256 - need(256, 272); hi = 256 - need(256, 192)
			if (end) { lo += am - need(am, ah + 64) + bm - need(bm, bh + 64); hi += am - need(am, ah) + bm - need(bm, bh) }
			print lo, hi
		}')
	n_ran=1
	[ "$phase" = end ] && n_ran=3
	case $ref in
	waste) echo "1 $(mib "$w_lo") $(mib "$w_hi * 1.2")" ;;
	waste_per_step) echo "1 $(mib "$w_lo/$n_ran * 0.95") $(mib "$w_hi/$n_ran * 1.05")" ;;
	judged) [ "$phase" = end ] && echo "1 4 4.8" || echo "1 2 2.4" ;;
	refused) echo "1 1 1.2" ;;
	oom) echo "1 1 1.2" ;;
	# CPU seconds over allocated core seconds: a share.
	cpu_busy) echo "1 0 1.05" ;;
	# Per hour over the last 5 minutes: there, positive, bounded; the
	# refused and the OOM-killed step's once the window has passed
	# them (every release is asked in turn: the last minutes later), 0.
	judged_rate) echo "1 0.001 200" ;;
	refused_rate | oom_rate)
		local t=$T_OOM
		[ "$ref" = refused_rate ] && t=$T_REFUSED
		if [ $((SECONDS - t)) -lt 280 ]; then echo "1 0.001 200"
		elif [ $((SECONDS - t)) -gt 310 ]; then echo "1 0 0"
		else echo "1 0 200"; fi ;;
	waste_rate) echo "1 0 $(mib "$w_hi * 1.2 * 12 * 1.5")" ;;
	nr) echo "1 $(mib $held) $(mib $((held + 64)))" ;;
	cache) echo "1 $(mib "$cache * 0.95") $(mib $((cache + 32)))" ;;
	limit) echo "1 $(mib $mem) $(mib $mem)" ;;
	rule) awk -v r="$RULE" 'BEGIN { printf "1 %.2f %.2f\n", r - 1, r + 1 }' ;;
	headroom) echo "1 $(mib $((mem - held - 64))) $(mib $((mem - held)))" ;;
	running) echo "2 $(mib $B_MIB) $(mib $((A_MIB + 64)))" ;;
	*) echo "" ;;
	esac
}
# grafana_re VALUE: a variable's value as Grafana puts it into a regex
# matcher (its special characters escaped).
grafana_re() { sed 's/[][\\^$.|?*+(){}]/\\&/g' <<<"$1"; }
# subst EXPR JOB PARTITION NODE USER: the query Grafana sends (the
# values already regex-escaped, or ".*" for All).
subst() {
	local e=$1
	e=${e//\$__rate_interval/5m} e=${e//\$__range/1h}
	e=${e//\$partition/$3} e=${e//\$node/$4} e=${e//\$user/$5} e=${e//\$job/$2}
	printf '%s\n' "$e"
}
# check_panels JOB PHASE [VARS]: every target of every panel, $job=JOB;
# VARS: all (".*", the default), mine (the test's partition, node and
# user, escaped) or none (a partition no series has: no series at all).
check_panels() {
	local job=$1 phase=$2 vars=${3:-all} ref expr want n lo hi res got vals labels raw p=".*" nd=".*" u=".*"
	case $vars in
	mine) p=$(grafana_re "$PART") nd=$(grafana_re "$MC_NODE_NAME") u=$(grafana_re "$ME") ;;
	none) p=no-such-partition ;;
	esac
	while IFS=$'\t' read -r ref title raw; do
		case $raw in *'$partition'*'$node'*) ;; *) _mc_fail "panel '$title' ($ref): not filtered by \$partition and \$node: $raw" ;; esac
		case $raw in *memcore_step_*) case $raw in *'$user'*) ;; *) _mc_fail "panel '$title' ($ref): a gauge query not filtered by \$user: $raw" ;; esac ;; esac
		expr=$(subst "$raw" "$job" "$p" "$nd" "$u")
		case $expr in *'$'*) _mc_fail "panel '$title' ($ref): a variable this test does not know: $expr"; continue ;; esac
		want=$(expect "$ref" "$job" "$phase")
		if [ -z "$want" ]; then
			_mc_fail "panel '$title' ($ref): no expectation in this test for: $expr"
			continue
		fi
		# Gauges exist only while steps run.
		if [ "$phase" = end ] && [[ $expr == *memcore_step_* ]]; then want="0 0 0"; fi
		[ "$vars" = none ] && want="0 0 0"
		read -r n lo hi <<<"$want"
		res=$(q "$expr") || { _mc_fail "panel '$title': the query failed: $expr"; continue; }
		got=$(jq '.data.result | length' <<<"$res")
		vals=$(jq -r '[.data.result[].value[1]] | join(" ")' <<<"$res")
		mc_log "[$phase $vars] $ref (\$job=$job): $expr -> $(jq -c '[.data.result[] | {m: (.metric | del(.instance, .job, .__name__)), v: .value[1]}]' <<<"$res")"
		assert_eq "$n" "$got" "($phase, $vars, $PV) panel '$title' ($ref, \$job=$job): $n series"
		for v in $vals; do
			within "$lo" "$hi" "$v"
			assert_eq 0 $? "($phase, $PV) panel '$title' ($ref, \$job=$job): $v in [$lo, $hi]"
		done
		# The per-job panels show that job's step alone, labelled from
		# what slurmstepd knows (never the job's environment).
		if [[ $expr == *"jobid=\"$job\""* ]] && [ "$n" -gt 0 ]; then
			labels=$(jq -r '.data.result[] | .metric | "\(.jobid) \(.step) \(.user) \(.node) \(.partition)"' <<<"$res" | sort -u)
			assert_eq "$job 0 $ME $MC_NODE_NAME $PART" "$labels" "($phase, $PV) panel '$title' ($ref): jobid, step, user, node, partition of job $job's step"
		fi
		if [ "$ref" = running ] && [ "$phase" = run ] && [ "$vars" != none ]; then
			assert_eq "$(printf '%s\n' "$A" "$B" | sort)" "$(jq -r '.data.result[].metric.jobid' <<<"$res" | sort)" "(run, $PV) panel '$title': the running steps of both jobs"
		fi
		CHECKED+=("$expr")
	done < <(jq -r '.panels[] | .title as $t | .targets[]? | [.refId, $t, .expr] | @tsv' "$GRAFANA")
}
# The data source: a variable of type datasource, which works both
# imported and provisioned from a file (${DS_*} inputs only on import).
assert_eq "prometheus" "$(jq -r '.templating.list[] | select(.name == "datasource" and .type == "datasource") | .query' "$GRAFANA")" \
	"the dashboard has a datasource variable of type prometheus"
assert_eq "" "$(jq -r '[.. | objects | select(has("uid")) | .uid | select(type == "string" and startswith("$") and . != "${datasource}")] | unique | join(" ")' "$GRAFANA")" \
	"every panel, target and variable names the data source \${datasource}"
assert_eq "" "$(grep -o 'DS_[A-Z_]*' "$GRAFANA" | sort -u)" "no \${DS_*} input"
# var_values NAME [PARTITION NODE USER]: what the variable NAME offers,
# its label_values(SELECTOR, LABEL) asked of Prometheus as Grafana does
# (/api/v1/label/LABEL/values?match[]=SELECTOR), the variables before it
# substituted.
var_values() {
	local def sel label
	def=$(jq -r --arg n "$1" '.templating.list[] | select(.name == $n) | .query.query' "$GRAFANA")
	sel=$(sed -n 's/^label_values(\(.*\), *\([a-z]*\))$/\1/p' <<<"$def")
	label=$(sed -n 's/^label_values(\(.*\), *\([a-z]*\))$/\2/p' <<<"$def")
	sel=$(subst "$sel" "" "${2:-.*}" "${3:-.*}" "${4:-.*}")
	curl -sfG "$API/api/v1/label/$label/values" --data-urlencode "match[]=$sel" | jq -r '.data[]' | sort | tr '\n' ' '
}
# node_exporter took every file whole: the steps' files and the counters
# share no family, and the steps' families agree on HELP and TYPE.
assert_eq 0 "$(q node_textfile_scrape_error | jq -r '.data.result[0].value[1]')" "(a) node_exporter read every textfile without error"
CHECKED=()
check_panels "$A" run
check_panels "$B" run
check_panels "$A" run mine
check_panels "$B" run none
assert_eq "$PART " "$(var_values partition)" "(a) the \$partition variable offers the partition"
assert_eq "$MC_NODE_NAME " "$(var_values node "$(grafana_re "$PART")")" "(a) the \$node variable offers the node of that partition"
assert_eq "" "$(var_values node no-such-partition)" "(a) ... and none of a partition that has none"
assert_eq "$ME " "$(var_values user)" "(a) the \$user variable offers the running steps' user"
# The dashboard's $job variable lists the jobs whose steps ran (with
# gauges) in the dashboard's time range: A and B, which held their memory
# over many scrapes, never the refused one, which never ran. The
# OOM-killed one is offered only when a scrape caught its file before the
# kill (under a loaded machine it may not: CI saw it missing), so it may
# be there but nothing else may.
jobs=$(var_values job)
assert_eq "$(printf '%s\n' "$A" "$B" | sort | tr '\n' ' ')" "$(tr ' ' '\n' <<<"$jobs" | grep -vx "$OOM" | grep . | sort | tr '\n' ' ')" \
	"(a) the \$job variable offers jobs $A and $B (and $OOM when a scrape caught it), not $REFUSED (refused)"
# The same queries of the other releases' Prometheus (their own scrapes
# of the same node_exporter, from the same moment), the variants a user
# picks (the test's own, and All).
for i in "${!PROM_API[@]}"; do
	[ "$i" = 0 ] && continue
	API=${PROM_API[$i]} PV=${PROM_NAME[$i]}
	mc_wait_until 20 eval '[ "$(nr_of "$A" | cut -d. -f1)" -ge $((A_MIB * MIB)) ] && [ "$(nr_of "$B" | cut -d. -f1)" -ge $((B_MIB * MIB)) ]'
	assert_eq 0 $? "(a, $PV) the gauges of jobs $A and $B at their held memory"
	check_panels "$A" run mine
	check_panels "$B" run
	assert_eq "$PART $MC_NODE_NAME $ME " "$(var_values partition)$(var_values node "$(grafana_re "$PART")")$(var_values user)" \
		"(a, $PV) the \$partition, \$node and \$user variables offer the test's"
done
API=${PROM_API[0]} PV=${PROM_NAME[0]}

# --- (b) the console page -----------------------------------------------------
# Its queries: q('...') in the page, and the table's query "...".
mapfile -t cq < <(grep -oE "q\('[^']*'\)" "$CONSOLES/memcore.html" | sed -E "s/^q\('(.*)'\)$/\1/")
assert_eq "" "$(grep -n '<script src\|<link \|<img \|@import' "$CONSOLES/memcore.html")" "(b) the console loads nothing (no /classic/static, which Prometheus 3 no longer serves)"
assert_eq "$(jq -r '.panels[] | .targets[]? | .expr' "$GRAFANA" | sort)" "$(printf '%s\n' "${cq[@]}" | sort)" "(b) the console runs every Grafana query"
assert_ne 0 "${#cq[@]}" "(b) the console has queries"
grafana_exprs=$(jq -r '.panels[] | .targets[]? | .expr' "$GRAFANA")
for e in "${cq[@]}"; do
	grep -qxF -- "$e" <<<"$grafana_exprs"
	assert_eq 0 $? "(b) the console's query is one of the Grafana panels' (tested above): $e"
done
page=$(curl -sf "$API/consoles/memcore.html?job=$A")
assert_contains "$page" "Job $A: its running steps" "(b) Prometheus serves the console for job $A"
assert_eq 0 "$(grep -c 'classic/static' <<<"$page")" "(b) ... which names nothing under /classic/static"
SHOT=$MEMCORE_BUILD/logs/test_46_dashboard.console.png
mkdir -p "${SHOT%/*}"
chrome() { timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--user-data-dir="$MC_WORK/chromium" --virtual-time-budget=8000 --window-size=1200,1300 "$@" 2>>"$MC_LOG_DIR/chromium.txt"; }
url="$API/consoles/memcore.html?job=$A&range=1m"
chrome --screenshot="$SHOT" "$url" >/dev/null
chrome --screenshot="$MC_WORK/tmp/none.png" "$API/consoles/memcore.html?job=1&range=1m" >/dev/null
assert_file "$SHOT" "(b) Chromium took a screenshot of the console ($SHOT)"
chrome --dump-dom "$url" >"$MC_WORK/tmp/dom-a.html"
chrome --dump-dom "$API/consoles/memcore.html?job=1&range=1m" >"$MC_WORK/tmp/dom-none.html"
assert_match "$(cat "$MC_WORK/tmp/dom-a.html")" "consoles/memcore.html\?job=$B\">$B<" "(b) its table links job $B's running step"
assert_match "$(cat "$MC_WORK/tmp/dom-a.html")" "<td>judged $PART</td><td class=\"num\">[0-9.]+</td>" "(b) its table counts the steps judged in the range"
# drawn DOM GRAPH-ID: the graph's div holds a line of at least two points.
drawn() {
	"$PY" - "$1" "$2" <<'EOF'
import re, sys
dom = open(sys.argv[1]).read()
start = dom.find('<div id="%s">' % sys.argv[2])
if start < 0:
    sys.exit(2)
end = dom.find('<div class="mc-graph">', start + 1)
part = dom[start:end if end > 0 else len(dom)]
sys.exit(0 if re.search(r'<path class="path" d="M[^"]*L', part) else 1)
EOF
}
for g in steps_rate waste_rate nr cache headroom; do
	drawn "$MC_WORK/tmp/dom-a.html" $g
	assert_eq 0 $? "(b) the console (job $A) draws graph '$g'"
done
drawn "$MC_WORK/tmp/dom-none.html" nr
assert_eq 1 $? "(b) ... and for a job without steps its per-job graph has no line (the check can fail)"
# The console as each other release serves it, drawn by its API.
for i in "${!PROM_API[@]}"; do
	[ "$i" = 0 ] && continue
	chrome --dump-dom "${PROM_API[$i]}/consoles/memcore.html?job=$A&range=1m" >"$MC_WORK/tmp/dom-a-$i.html"
	for g in steps_rate waste_rate nr cache headroom; do
		drawn "$MC_WORK/tmp/dom-a-$i.html" $g
		assert_eq 0 $? "(b, ${PROM_NAME[$i]}) the console (job $A) draws graph '$g'"
	done
done
# pixels PNG: its coloured pixels (lines, legend swatches), its dark ones
# (text, axes), all.
pixels() {
	"$PY" - "$1" <<'EOF'
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
w, h = im.size
colour = dark = 0
for r, g, b in im.getdata():
    if max(r, g, b) - min(r, g, b) > 80:
        colour += 1
    elif r + g + b < 600:
        dark += 1
print(colour, dark, w * h)
EOF
}
read -r colour dark total < <(pixels "$SHOT")
read -r colour0 _ _ < <(pixels "$MC_WORK/tmp/none.png")
mc_log "(b) screenshot $SHOT: $colour coloured, $dark dark of $total pixels; job 1 (no steps): $colour0 coloured"
[ "${colour:-0}" -ge $((${colour0:-0} + 500)) ]
assert_eq 0 $? "(b) the screenshot has the job's lines drawn: $colour coloured pixels, 500 more than a job without steps ($colour0)"
[ "${dark:-0}" -ge 5000 ]
assert_eq 0 $? "(b) ... and text and axes: $dark dark pixels (not an empty page)"

# --- (c) the steps end ---------------------------------------------------------
touch "$REL"
for p in "$A_PID" "$B_PID"; do
	wait "$p"
	assert_eq 0 $? "(c) the step of pid $p ran to its end"
done
mc_wait_until 15 eval '[ "$(q "sum(memcore_steps_judged_total)" | jq -r ".data.result[0].value[1]")" = 5 ]'
assert_eq 0 $? "(c) Prometheus counts 5 steps judged (the seed's too)"
mc_wait_until 10 eval '[ "$(q "count(memcore_step_memory_limit_bytes)" | jq ".data.result | length")" = 0 ]'
assert_eq 0 $? "(c) the gauges of the ended steps are gone from Prometheus (stale)"
assert_eq "" "$(ls -A "$PROMDIR" | grep -e memcore -e '^\.' | grep -v '^memcore.prom$')" "(c) their files are removed, nothing left beside the counters"
for i in "${!PROM_API[@]}"; do
	API=${PROM_API[$i]} PV=${PROM_NAME[$i]}
	mc_wait_until 15 eval '[ "$(q "sum(memcore_steps_judged_total)" | jq -r ".data.result[0].value[1]")" = 5 ] && [ "$(q "count(memcore_step_memory_limit_bytes)" | jq ".data.result | length")" = 0 ]'
	assert_eq 0 $? "(c, $PV) 5 steps judged, the ended steps' gauges gone"
	check_panels "$A" end mine
	[ "$i" = 0 ] && check_panels "$A" end
done
API=${PROM_API[0]} PV=${PROM_NAME[0]}

# report --json: its keys are those memcore(8) lists under JSON OUTPUT.
mc_run "$MEMCORE_BUILD/memcore" report "$A" --json
assert_rc 0 "(c) memcore report $A --json"
doc_keys() { awk -v t="^[.]SS $1\$" '/^\.S[HS]/ { k = ($0 ~ t) } k && p && /^\.B [a-z_]+$/ { print $2 } { p = ($0 == ".TP") }' "$MC_TOP/docs/memcore.8" | sort | tr '\n' ' '; }
assert_eq "$(doc_keys 'memcore report \\\\-\\\\-json')" "$(jq -r 'keys[]' <<<"$MC_OUT" | sort | tr '\n' ' ')" "(c) report --json: the keys memcore(8) JSON OUTPUT lists"
assert_eq "$(doc_keys 'memcore report \\\\-\\\\-json, each of steps')" "$(jq -r '.steps[0] | keys[]' <<<"$MC_OUT" | sort | tr '\n' ' ')" "(c) report --json: a step's keys, as memcore(8) JSON OUTPUT lists them"

# --- (d) a file left by a killed slurmstepd ------------------------------------
dead=$(sh -c 'echo $$')
stale=memcore_step_${MC_NODE_NAME}_${dead}_999_0.prom
other=memcore_step_mc-elsewhere_${dead}_998_0.prom
printf 'memcore_step_memory_limit_bytes{jobid="999",step="0",user="x",node="%s",partition="p"} 1\n' "$MC_NODE_NAME" >"$PROMDIR/$stale"
printf 'memcore_step_memory_limit_bytes{jobid="998",step="0",user="x",node="mc-elsewhere",partition="p"} 1\n' >"$PROMDIR/$other"
mc_wait_until 10 eval '[ "$(q "memcore_step_memory_limit_bytes{jobid=\"999\"}" | jq ".data.result | length")" = 1 ]'
assert_eq 0 $? "(d) Prometheus sees the stale file's job 999"
mc_run srun -n1 --gpus=1 --mem=256M true
assert_rc 0 "(d) the next step runs"
assert_eq "" "$(ls "$PROMDIR" | grep -Fx "$stale")" "(d) ... and removed the stale file of pid $dead"
assert_eq "$other" "$(ls "$PROMDIR" | grep -Fx "$other")" "(d) ... not another node's"
rm -f "$PROMDIR/$other"
mc_wait_until 10 eval '[ "$(q "memcore_step_memory_limit_bytes{jobid=\"999\"}" | jq ".data.result | length")" = 0 ]'
assert_eq 0 $? "(d) job 999's gauges are gone from Prometheus"
