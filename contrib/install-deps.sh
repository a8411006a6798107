#!/bin/bash
# Install the Debian 12 packages one memcore target needs, as root:
#
#   bash contrib/install-deps.sh [build|demo|check|deb|bench|vm|all]
#
#   build  compile memcore.so and the memcore command (make, make install)
#   demo   build + a local Slurm and munge (make demo)
#   check  demo + test tools: cmocka, jq, lua, clang-19, valgrind..., and the
#          guest tier's QEMU, mmdebstrap, busybox (make check)
#   vm     build + the guest tier's tools alone (make vm-check)
#   bench  demo + the benchmark's tools (make bench)
#   deb    build + debhelper, dpkg-dev, fakeroot (make deb)
#   all    everything above (the default, as before targets existed)
#
# Does nothing (and needs no network) when they are all there already, so
# `make check` and `make demo` can call it every time. When another apt or
# dpkg holds the package lock (unattended-upgrades, a second install), it
# waits for it, up to MEMCORE_APT_LOCK_TIMEOUT seconds (default 600).
# `check` includes what the guest tier needs (tests/vm: QEMU, mmdebstrap,
# busybox...); `vm` is that part alone, on top of build.
set -euo pipefail
target=${1:-all}
build=(build-essential pkg-config binutils
	libslurm-dev libhwloc-dev hwloc libcgroup-dev libjansson-dev libyaml-dev)
cluster=(slurmctld slurmd slurm-client munge procps coreutils iproute2
	util-linux)
# slurmdbd, mariadb-server: test_38 starts Slurm accounting of its own
# (memcore report after slurmctld forgot the job, Slurm's MaxRSS);
# prometheus: its promtool parses memcore's node_exporter textfile.
# tmux, libxml2-utils: test_37_timeline draws memcore report --plot in an
# 80-column terminal and checks the --svg with xmllint.
# clang-19, libclang-rt-19-dev: make fuzz (libFuzzer) and make
# integration-asan (an ASan runtime that locks its allocator around fork:
# tests/integration/NOTES.md, "Sanitizers").
# libhwloc-plugins: what libhwloc15 recommends, as nodes have it; without
# it hwloc parses XML with its built-in reader, which leaks on the
# malformed topologies the tests feed it (make sanitize fails).
tests=(libcmocka-dev slurm-wlm-basic-plugins liblua5.1-0 lua5.1 jq man-db
	groff-base clang-19 libclang-rt-19-dev valgrind strace
	debhelper dpkg-dev fakeroot libhwloc-plugins
	slurmdbd mariadb-server prometheus prometheus-node-exporter chromium
	python3-pil tmux libxml2-utils)
deb=(debhelper dpkg-dev fakeroot)
vm=(qemu-system-x86 mmdebstrap busybox-static kmod cpio e2fsprogs xz-utils
	debian-archive-keyring curl)
case $target in
build) pkgs=("${build[@]}") ;;
demo) pkgs=("${build[@]}" "${cluster[@]}") ;;
bench) pkgs=("${build[@]}" "${cluster[@]}" strace time jq) ;;
check | all) pkgs=("${build[@]}" "${cluster[@]}" "${tests[@]}" "${vm[@]}") ;;
vm) pkgs=("${build[@]}" "${vm[@]}") ;;
deb) pkgs=("${build[@]}" "${deb[@]}") ;;
*)
	echo "usage: $0 [build|demo|check|deb|bench|vm|all]" >&2
	exit 2
	;;
esac
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "memcore: the Debian packages for '$target' are installed (${#pkgs[@]} checked)"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "memcore: missing Debian packages for '$target': ${missing[*]}; run as root or: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "memcore: installing for '$target': ${missing[*]}"
# apt (>= 1.9) waits for a held dpkg lock instead of failing at once.
wait_lock=(-o "DPkg::Lock::Timeout=${MEMCORE_APT_LOCK_TIMEOUT:-600}")
${MEMCORE_APT_GET:-apt-get} "${wait_lock[@]}" update
# The packages' own services must not start here (tests run their own
# daemons on their own ports): a policy-rc.d that refuses them while we
# install, removed afterwards.
rc_d=${MEMCORE_POLICY_RC_D:-/usr/sbin/policy-rc.d}
own_rc_d=0
if [ ! -e "$rc_d" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$rc_d"
	chmod +x "$rc_d"
	own_rc_d=1
fi
trap '[ $own_rc_d = 1 ] && rm -f "$rc_d"' EXIT
DEBIAN_FRONTEND=noninteractive ${MEMCORE_APT_GET:-apt-get} "${wait_lock[@]}" \
	install -y --no-install-recommends "${missing[@]}"
