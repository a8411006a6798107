#!/bin/bash
# tests/vm/check.sh [SUITE...] [-- TEST-PATTERN...] - the guest tier: for
# each Debian suite (default: bookworm trixie sid = Slurm 22.05, 24.11,
# 26.05), make or reuse the cached kernel and root filesystem, build memcore
# in the root filesystem as a chroot (against that suite's Slurm headers;
# `make deb` too in trixie), boot it once under QEMU with cgroup v2 and run
# there the integration tests whose `# guest:` line names the suite
# (tests/vm/guest/run-tests.sh). The suites run side by side.
#
#   MEMCORE_VM_CACHE    image cache (default /var/cache/memcore-vm)
#   MEMCORE_VM_TIMEOUT  seconds per guest boot (default 3600)
#   MEMCORE_VM_OUT      results per suite (default tests/vm/.work/<suite>/:
#                       console.log, logs/, layout.md)
#   MEMCORE_VM_LAYOUTS=1 also record the cgroup layout Slurm makes
#                       (guest/layouts.sh -> layout.md; LAYOUTS.md; ~1-2 min a guest)
#   MEMCORE_VM_PROBE=1  also time memcore's own-cgroup calls on the guest's
#                       cgroup v2 (tests/bench/cg_probe.c), without and
#                       with the favordynmods mount option (cg_probe*.txt)
#   MEMCORE_VM_FOREIGN_DEB=FILE  a memcore .deb built for another Slurm release
#                       (make deb here, on bookworm): test_60_deb in the
#                       guest checks that dpkg refuses it next to its slurmd
#   MEMCORE_VM_JOBS     suites side by side (default: all given)
#   MEMCORE_VM_CPUS     vCPUs per guest (default 2)
#   MC_TIMES            append each suite's time and each guest test's
#                       seconds (SUITE:TEST) to this file (tests/times.sh)
#   CI=true             a guest that cannot be made, built or booted FAILS;
#                       elsewhere it is skipped, loudly, with the reason
# Exit: 0 all passed, 1 a test (or, in CI, a guest) failed, 77 all skipped
# (printed as a FAIL line: a tier that ran nothing never passes).
set -euo pipefail
. "$(dirname "$0")/common.sh"
suites=() pats=()
while [ $# -gt 0 ]; do
	case $1 in --) shift; pats=("$@"); break ;; *) suites+=("$1"); shift ;; esac
done
[ ${#suites[@]} -gt 0 ] || read -ra suites <<<"$VM_SUITES_ALL"
[ "$(id -u)" = 0 ] || { vm_log "SKIP: the guest tier needs root (chroot, mount)"; exit 77; }
timeout_s=${MEMCORE_VM_TIMEOUT:-3600}
ci=0; [ "${CI:-}" = true ] && ci=1

declare -A result
skipped=0 failed=0
T=$(mktemp -d "${TMPDIR:-/var/tmp}/memcore-vm.XXXXXX")
mounts=()
cleanup() {
	local m
	# suites still running (an interrupt): their guests first
	pkill -TERM -f -- "path=$T/" 2>/dev/null || true
	wait 2>/dev/null || true
	for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# cannot SUITE WHY: a guest could not be made, built or booted
cannot() {
	if [ $ci = 1 ]; then
		vm_log "FAIL: $1: $2 (CI=true: a guest that cannot run is a failure)"
		result[$1]="FAIL ($2)"; failed=$((failed + 1))
	else
		printf '\nmemcore-vm: !!! SKIP %s: %s !!!\n\n' "$1" "$2" >&2
		result[$1]="SKIP ($2)"; skipped=$((skipped + 1))
	fi
}

# the source tree as git sees it (tracked and new files, not ignored ones)
src_copy() { # DEST
	mkdir -p "$1"
	if git -C "$VM_TOP" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$VM_TOP" ls-files -z --cached --others --exclude-standard \
			| (cd "$VM_TOP" && xargs -0 cp -P --parents -t "$1" 2>/dev/null || true)
	else
		tar -C "$VM_TOP" --exclude=./build --exclude=./tests/integration/.work \
			--exclude=./tests/vm/.work -cf - . | tar -C "$1" -xf -
	fi
}

# in_chroot ROOT SRC CMD: run CMD in ROOT with SRC at /src
in_chroot() {
	local r=$1 s=$2 m; shift 2
	for m in proc sys dev src; do
		case $m in
		proc) mount -t proc proc "$r/proc" ;;
		sys) mount -t sysfs sys "$r/sys" ;;
		dev) mount --rbind /dev "$r/dev" ;;
		src) mount --bind "$s" "$r/src" ;;
		esac
		mounts=("$r/$m" "${mounts[@]}")
	done
	local rc=0
	timeout 900 chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		sh -c "cd /src && $*" || rc=$?
	for m in src dev sys proc; do umount -l "$r/$m"; done
	mounts=("${mounts[@]:4}")
	return $rc
}

t_all=$SECONDS
kernel=
missing=$(for b in qemu-system-x86_64 mmdebstrap mke2fs busybox chroot; do
	command -v "$b" >/dev/null || printf '%s ' "$b"; done)
if [ -n "$missing" ]; then
	vm_log "missing: $missing(bash contrib/install-deps.sh vm)"
else
	kernel=$(timeout 600 "$VM_HERE/kernel.sh") || kernel=
fi
# run_suite SUITE: make, build, boot and test one suite; its result line in
# $T/SUITE.result ("ok: ...", "FAIL: ...", or "CANNOT: why"), its times
# in $T/SUITE.times. Runs in a subshell of its own (the suites run side
# by side), so its mounts are undone by its own trap.
run_suite() {
	local s=$1 t0=$SECONDS out root w make_deb probe rc t_img t_build t_guest summary f con
	trap 'for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done' EXIT
	out=${MEMCORE_VM_OUT:-$VM_TOP/tests/vm/.work}/$s
	rm -rf "$out"; mkdir -p "$out"
	[ -n "$kernel" ] || { echo "CANNOT: no guest kernel or no QEMU (see above)" >"$T/$s.result"; return; }
	root=$(timeout 1200 "$VM_HERE/rootfs.sh" "$s") || { echo "CANNOT: no root filesystem (see above)" >"$T/$s.result"; return; }
	t_img=$((SECONDS - t0))
	w=$T/$s; src_copy "$w"
	if [ -n "${MEMCORE_VM_FOREIGN_DEB:-}" ]; then
		mkdir -p "$w/build/foreign" && cp "$MEMCORE_VM_FOREIGN_DEB" "$w/build/foreign/"
	fi
	make_deb=; [ "$s" = trixie ] && make_deb=" && make deb >build/deb.log 2>&1"
	probe=; [ "${MEMCORE_VM_PROBE:-0}" = 1 ] && probe=" build/bench/cg_probe"
	if ! in_chroot "$root/root" "$w" "make -j2 all progs$probe >build.log 2>&1$make_deb" ; then
		for f in "$w/build.log" "$w/build/deb.log"; do
			[ -f "$f" ] && { tail -n 30 "$f" >&2; cp "$f" "$out/"; }
		done
		echo "CANNOT: memcore does not build against $(grep slurmd "$root/versions")" >"$T/$s.result"; return
	fi
	t_build=$((SECONDS - t0 - t_img))
	vm_log "$s: built in the chroot (${t_build}s; images ${t_img}s); booting the guest"
	# one suite at a time: the console as it comes; side by side: each
	# suite's console whole when it ends (check.sh prints it)
	con=/dev/stdout; [ "$jobs" -gt 1 ] && con=/dev/null
	set +e
	"$VM_HERE/run-guest.sh" --kernel "$kernel" --rootfs "$root" --share "$w" --scratch 8192 \
		--mem 3072 --cpus "$vcpus" --timeout "$timeout_s" -- \
		"MEMCORE_VM_LAYOUTS=${MEMCORE_VM_LAYOUTS:-0} MEMCORE_VM_PROBE=${MEMCORE_VM_PROBE:-0} bash /share/tests/vm/guest/run-tests.sh $s ${pats[*]:-}" 2>&1 | tee "$out/console.log" >"$con"
	rc=${PIPESTATUS[0]}
	set -e
	cp -r "$w/.vm-results/." "$out/" 2>/dev/null || true
	t_guest=$((SECONDS - t0 - t_img - t_build))
	# each test's seconds, named SUITE:TEST (tests/times.sh)
	[ -s "$out/times.tsv" ] && awk -F'\t' -v s="$s" 'BEGIN { OFS = "\t" } { $2 = s ":" $2; print }' "$out/times.tsv" >"$T/$s.times"
	printf 'tier\tguest %s (images %ss, build %ss, guest %ss)\t%s\n' "$s" "$t_img" "$t_build" "$t_guest" \
		"$((SECONDS - t0))" >>"$T/$s.times"
	# (no FAIL or SKIP line is the good case: grep's 1 is no error here)
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/console.log" | tr '\n' ' ' || true)
	summary="$summary$(grep -E '^(FAIL|SKIP)  ' "$out/console.log" | awk '{printf "%s %s; ", $1, $2}' || true)"
	case $rc in
	0) echo "ok: $summary" >"$T/$s.result" ;;
	125) echo "CANNOT: the guest did not boot or gave no status (console: $out/console.log)" >"$T/$s.result" ;;
	*) echo "FAIL: $summary" >"$T/$s.result" ;;
	esac
	vm_log "$s: images ${t_img}s, build ${t_build}s, guest ${t_guest}s: $(cat "$T/$s.result")"
}

# collect SUITE: its result into result[] and the counts, its times into
# MC_TIMES, its console (side by side: printed now, whole)
collect() {
	local s=$1 r out=${MEMCORE_VM_OUT:-$VM_TOP/tests/vm/.work}/$1
	r=$(cat "$T/$s.result" 2>/dev/null || echo "CANNOT: its run ended without a result")
	if [ "$jobs" -gt 1 ] && [ -s "$out/console.log" ]; then
		printf '\nmemcore-vm: ----- %s: console (%s) -----\n' "$s" "$out/console.log"
		cat "$out/console.log"
	fi
	[ -n "${MC_TIMES:-}" ] && [ -s "$T/$s.times" ] && cat "$T/$s.times" >>"$MC_TIMES"
	case $r in
	CANNOT:*) cannot "$s" "${r#CANNOT: }" ;;
	FAIL:*) result[$s]=$r; failed=$((failed + 1)) ;;
	*) result[$s]=$r ;;
	esac
}

# MEMCORE_VM_JOBS suites side by side (default: all of them). A guest under
# TCG keeps about one host core busy on average: its tests wait on Slurm's
# timers, sleeps and srun round trips as much as they compute, so two or
# three guests on two cores end well before the same guests in a row.
# Each guest gets MEMCORE_VM_CPUS vCPUs (2: the tests' nodes have 2 CPUs).
jobs=${MEMCORE_VM_JOBS:-${#suites[@]}}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
vcpus=${MEMCORE_VM_CPUS:-2}
pids=() order=()
for s in "${suites[@]}"; do
	if [ "$jobs" = 1 ]; then
		(run_suite "$s")
		collect "$s"
		continue
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
	(run_suite "$s") &
	pids+=($!)
done
if [ "$jobs" -gt 1 ]; then
	wait "${pids[@]}" 2>/dev/null || true
	for s in "${suites[@]}"; do collect "$s"; done
fi

printf '\nmemcore-vm: guest tier (%ss):\n' "$((SECONDS - t_all))"
for s in "${suites[@]}"; do printf '  %-9s %s\n' "$s" "${result[$s]:-?}"; done
[ $failed = 0 ] || exit 1
if [ $skipped = ${#suites[@]} ]; then
	# Nothing ran: never a pass, in CI or not (make check fails on it too,
	# unless MEMCORE_VM_ALLOW_SKIP=1 says the guests are not wanted here).
	vm_log "FAIL: every guest suite was skipped (${suites[*]}): the guest tier ran no test"
	exit 77
fi
[ $skipped = 0 ] || vm_log "!!! $skipped of ${#suites[@]} guests SKIPPED (see above) !!!"
exit 0
