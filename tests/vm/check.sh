#!/bin/bash
# tests/vm/check.sh [SUITE...] [-- TEST-PATTERN...] - the guest tier: for
# each Debian suite (default: bookworm trixie sid = Slurm 22.05, 24.11,
# 26.05), make or reuse the cached kernel and root filesystem, build memcore
# in the root filesystem as a chroot (against that suite's Slurm headers;
# `make deb` too in trixie), boot it once under QEMU with cgroup v2 and run
# there the integration tests marked `# guest: yes` (tests/vm/guest/run-tests.sh).
#
#   MEMCORE_VM_CACHE    image cache (default /var/cache/memcore-vm)
#   MEMCORE_VM_TIMEOUT  seconds per guest boot (default 2400)
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
#   CI=true             a guest that cannot be made, built or booted FAILS;
#                       elsewhere it is skipped, loudly, with the reason
# Exit: 0 all passed, 1 a test (or, in CI, a guest) failed, 77 all skipped.
set -euo pipefail
. "$(dirname "$0")/common.sh"
suites=() pats=()
while [ $# -gt 0 ]; do
	case $1 in --) shift; pats=("$@"); break ;; *) suites+=("$1"); shift ;; esac
done
[ ${#suites[@]} -gt 0 ] || read -ra suites <<<"$VM_SUITES_ALL"
[ "$(id -u)" = 0 ] || { vm_log "SKIP: the guest tier needs root (chroot, mount)"; exit 77; }
timeout_s=${MEMCORE_VM_TIMEOUT:-2400}
ci=0; [ "${CI:-}" = true ] && ci=1

declare -A result
skipped=0 failed=0
T=$(mktemp -d "${TMPDIR:-/var/tmp}/memcore-vm.XXXXXX")
mounts=()
cleanup() {
	local m
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
for s in "${suites[@]}"; do
	t0=$SECONDS
	out=${MEMCORE_VM_OUT:-$VM_TOP/tests/vm/.work}/$s
	rm -rf "$out"; mkdir -p "$out"
	[ -n "$kernel" ] || { cannot "$s" "no guest kernel or no QEMU (see above)"; continue; }
	root=$(timeout 1200 "$VM_HERE/rootfs.sh" "$s") || { cannot "$s" "no root filesystem (see above)"; continue; }
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
		cannot "$s" "memcore does not build against $(grep slurmd "$root/versions")"; continue
	fi
	t_build=$((SECONDS - t0 - t_img))
	vm_log "$s: built in the chroot (${t_build}s; images ${t_img}s); booting the guest"
	set +e
	"$VM_HERE/run-guest.sh" --kernel "$kernel" --rootfs "$root" --share "$w" --scratch 8192 \
		--mem 3072 --timeout "$timeout_s" -- \
		"MEMCORE_VM_LAYOUTS=${MEMCORE_VM_LAYOUTS:-0} MEMCORE_VM_PROBE=${MEMCORE_VM_PROBE:-0} bash /share/tests/vm/guest/run-tests.sh $s ${pats[*]:-}" 2>&1 | tee "$out/console.log"
	rc=${PIPESTATUS[0]}
	set -e
	cp -r "$w/.vm-results/." "$out/" 2>/dev/null || true
	t_guest=$((SECONDS - t0 - t_img - t_build))
	# (no FAIL or SKIP line is the good case: grep's 1 is no error here)
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/console.log" | tr '\n' ' ' || true)
	summary="$summary$(grep -E '^(FAIL|SKIP)  ' "$out/console.log" | awk '{printf "%s %s; ", $1, $2}' || true)"
	case $rc in
	0) result[$s]="ok: $summary" ;;
	125) cannot "$s" "the guest did not boot or gave no status (console: $out/console.log)" ;;
	*) result[$s]="FAIL: $summary"; failed=$((failed + 1)) ;;
	esac
	vm_log "$s: images ${t_img}s, build ${t_build}s, guest ${t_guest}s: ${result[$s]}"
done

printf '\nmemcore-vm: guest tier (%ss):\n' "$((SECONDS - t_all))"
for s in "${suites[@]}"; do printf '  %-9s %s\n' "$s" "${result[$s]:-?}"; done
[ $failed = 0 ] || exit 1
[ $skipped = ${#suites[@]} ] && exit 77
[ $skipped = 0 ] || vm_log "!!! $skipped of ${#suites[@]} guests SKIPPED (see above) !!!"
exit 0
