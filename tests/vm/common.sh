# shellcheck shell=bash
# tests/vm/common.sh - shared by the guest-tier scripts (sourced).
#
#   MEMCORE_VM_CACHE  image cache outside the clone (default /var/cache/memcore-vm)
#   MEMCORE_VM_MIRROR Debian mirror (default: the first URIs/deb line of this
#                     machine's apt sources)
VM_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_TOP=$(cd "$VM_HERE/../.." && pwd)
VM_CACHE=${MEMCORE_VM_CACHE:-/var/cache/memcore-vm}
VM_SUITES_ALL="bookworm trixie sid"

vm_log() { printf 'memcore-vm: %s\n' "$*" >&2; }
vm_die() { printf 'memcore-vm: ERROR: %s\n' "$*" >&2; exit 1; }

vm_mirror() {
	local m=${MEMCORE_VM_MIRROR:-}
	[ -n "$m" ] || m=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null)
	[ -n "$m" ] || m=$(grep -hm1 -oE '^deb +(\[[^]]*\] +)?[a-z]+://[^ ]+' /etc/apt/sources.list 2>/dev/null | awk '{print $NF}')
	[ -n "$m" ] || vm_die "no Debian mirror in this machine's apt sources: set MEMCORE_VM_MIRROR"
	printf '%s\n' "$m"
}

# Packages of every guest root filesystem: Slurm and munge, what the
# integration tests call, and memcore's build and packaging dependencies
# (built natively in the root filesystem as a chroot, against that suite's
# Slurm headers).
VM_PKGS="mount,netbase,procps,iproute2,kmod,util-linux,coreutils,less,file,
munge,slurmd,slurmctld,slurm-client,slurm-wlm-basic-plugins,
build-essential,pkg-config,libslurm-dev,libhwloc-dev,hwloc,libcgroup-dev,
libjansson-dev,libyaml-dev,libcmocka-dev,jq,lua5.1,liblua5.1-0,man-db,groff-base,
debhelper,dpkg-dev,fakeroot,nfs-kernel-server,nfs-common"
VM_PKGS=${VM_PKGS//$'\n'/}

# The packages whose versions key a root filesystem (checked for staleness).
VM_KEY_PKGS="slurmd libslurm-dev munge libcgroup-dev libhwloc-dev"

# vm_hash FILES...: short content hash of the harness files (keys the cache).
vm_hash() { cat "$@" | sha256sum | cut -c1-12; }
