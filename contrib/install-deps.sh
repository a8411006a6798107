#!/bin/bash
# Install the Debian 12 packages memcore builds and tests with, as root.
# Does nothing (and needs no network) when they are all there already, so
# `make check` and `make demo` can call it every time.
#   install-deps.sh vm   also what the guest tier (tests/vm, `make check`,
#                        `make vm-check`) needs: QEMU, mmdebstrap, busybox...
set -euo pipefail
pkgs=(
	build-essential pkg-config binutils
	libslurm-dev libhwloc-dev hwloc libcgroup-dev libjansson-dev libcmocka-dev
	slurmctld slurmd slurm-client munge
	slurm-wlm-basic-plugins liblua5.1-0 lua5.1
	debhelper dpkg-dev fakeroot
	jq man-db groff-base iproute2 procps coreutils
	clang libclang-rt-14-dev valgrind strace util-linux
)
if [ "${1:-}" = vm ]; then
	pkgs+=(qemu-system-x86 mmdebstrap busybox-static kmod cpio e2fsprogs
		xz-utils debian-archive-keyring curl)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "memcore: missing Debian packages: ${missing[*]}; run as root or: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "memcore: installing ${missing[*]}"
apt-get update
# The packages' own services must not start here (tests run their own
# daemons on their own ports): a policy-rc.d that refuses them while we
# install, removed afterwards.
rc_d=/usr/sbin/policy-rc.d
own_rc_d=0
if [ ! -e "$rc_d" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$rc_d"
	chmod +x "$rc_d"
	own_rc_d=1
fi
trap '[ $own_rc_d = 1 ] && rm -f "$rc_d"' EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
