#!/bin/bash
# tests/vm/guest/run-tests.sh SUITE [TEST-PATTERN...] - in the guest (from
# the 9p share that holds the source tree and its build from the suite's
# chroot): the layout record (MEMCORE_VM_LAYOUTS=1), the integration tests
# whose `# guest:` line names SUITE, and the .deb built in the chroot when
# there is one. Results go to .vm-results/ in the share.
set -uo pipefail
suite=${1:?usage: run-tests.sh SUITE [TEST-PATTERN...]}; shift
share=$(cd "$(dirname "$0")/../../.." && pwd)
res=$share/.vm-results
mkdir -p "$res"
up() { cut -d' ' -f1 /proc/uptime; }
# The tree and its build run from the guest's own disk, not from the 9p
# share: the share is mounted without a page cache (sync), so every exec
# of memcore, every dlopen of memcore.so by slurmstepd and every read of a
# topology went to the host, about 0.25 s more per `memcore check` here.
top=/scratch/src
t=$(up)
mkdir -p "$top"
# (object files left behind: nothing in the guest links; a *.d pattern
# would take plugstack.conf.d out of the package's tree, which test_60
# compares with make install)
tar -C "$share" --exclude=./.vm-results --exclude='*.o' -cf - . | tar -C "$top" -xf - ||
	{ echo "memcore-vm: copying the tree from the share to $top failed"; exit 1; }
echo "memcore-vm: the tree copied to $top ($t -> $(up) s)"
echo "memcore-vm: $suite guest: $(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r)," \
	"Slurm $(dpkg-query -W -f '${Version}' slurmd), cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
# Slurm's cgroup/v2 here has no systemd to ask (see boot.sh)
export MC_CGROUP_CONF_EXTRA=IgnoreSystemd=yes
export MEMCORE_BUILD=$top/build MC_TOP=$top
# work dirs on the ext4 scratch disk: not the 9p share (unix sockets), not
# tmpfs (big files there are shmem, not reclaimable page cache)
export MC_WORK_BASE=/scratch/mc MC_TEST_TIMEOUT=${MC_TEST_TIMEOUT:-600}
# each test's seconds, for make check's slowest-tests table (check.sh)
export MC_TIMES=$res/times.tsv
# which tests run here: their `# guest:` lines name the suites (run.sh)
export MC_GUEST_SUITE=$suite
mkdir -p "$MC_WORK_BASE"
rc=0
if [ "${MEMCORE_VM_LAYOUTS:-0}" = 1 ]; then
	t=$(up)
	MC_WORK=$MC_WORK_BASE/layouts timeout -k 10 300 bash "$top/tests/vm/guest/layouts.sh" "$res/layout.md" \
		> "$res/layouts.log" 2>&1 || { echo "memcore-vm: the layout record failed (log .vm-results/layouts.log)"; tail -n 20 "$res/layouts.log"; }
	echo "memcore-vm: layout recorded ($t -> $(up) s)"
fi
# (test_60_deb alone asked for: only the package test below)
if [ "$*" != test_60_deb ] && [ "$*" != test_60 ]; then
	MC_GUEST_ONLY=1 bash "$top/tests/integration/run.sh" "$@" || rc=1
fi
deb=$(ls "$top"/build/deb/memcore_*.deb 2>/dev/null | head -n1)
foreign=$(ls "$top"/build/foreign/memcore_*.deb 2>/dev/null | head -n1)
want_deb=0; [ $# = 0 ] && want_deb=1
for p in "$@"; do [[ test_60_deb == *"$p"* ]] && want_deb=1; done
if [ -n "$deb" ] && [ $want_deb = 1 ]; then
	echo "memcore-vm: the package built in the $suite chroot, installed here: test_60_deb${foreign:+ (and $(basename "$foreign") from another Slurm release, refused)}"
	MC_DEB=$deb MC_FOREIGN_DEB=$foreign MC_GUEST_ONLY=0 bash "$top/tests/integration/run.sh" test_60_deb || rc=1
fi
# Last, as it remounts the cgroup2 hierarchy: memcore's own-cgroup calls
# timed (MEMCORE_VM_PROBE=1), then again with favordynmods, then back.
if [ "${MEMCORE_VM_PROBE:-0}" = 1 ] && [ -x "$top/build/bench/cg_probe" ]; then
	opts=$(awk '$2 == "/sys/fs/cgroup" && $3 == "cgroup2" {print $4}' /proc/mounts)
	echo "memcore-vm: cgroup probe (mount options $opts)"
	"$top/build/bench/cg_probe" 15 200 >"$res/cg_probe.txt" 2>&1
	if mount -o remount,"$opts",favordynmods /sys/fs/cgroup; then
		grep -E '^cgroup2 /sys/fs/cgroup ' /proc/mounts >"$res/cg_probe_favordynmods.txt"
		"$top/build/bench/cg_probe" 15 200 >>"$res/cg_probe_favordynmods.txt" 2>&1
		mount -o remount,"$opts" /sys/fs/cgroup
	fi
	grep -E '_us=' "$res/cg_probe.txt" "$res/cg_probe_favordynmods.txt" 2>/dev/null
fi
cp -r "$top/tests/integration/.work/logs" "$res/" 2>/dev/null
echo "memcore-vm: $suite guest done at $(up) s, rc $rc"
exit $rc
