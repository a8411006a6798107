#!/bin/bash
# tests/vm/rootfs.sh SUITE - print the directory of a cached guest root
# filesystem for the Debian SUITE (bookworm: Slurm 22.05, trixie: 24.11,
# sid: 26.05), building it first when missing or stale.
#
# The directory holds root/ (the tree, used on the host as a chroot to build
# memcore against the suite's own Slurm headers), root.ext4 (the guest's
# root disk, opened read-only: -snapshot) and versions (the package versions
# that key it). Made with mmdebstrap from this machine's Debian mirror; the
# host's apt sources are neither read for packages nor changed.
#
# Stale when the harness scripts changed (the hash in the directory name),
# or when the suite's Release file on the mirror changed and the candidate
# version of one of $VM_KEY_PKGS differs from the installed one.
#   MEMCORE_VM_REFRESH=0  never ask the mirror (use what is cached)
set -euo pipefail
. "$(dirname "$0")/common.sh"
SUITE=${1:?usage: rootfs.sh bookworm|trixie|sid}
MIRROR=$(vm_mirror)
R=$VM_CACHE/rootfs/$SUITE-$({ cat "$0"; echo "$VM_PKGS"; } | sha256sum | cut -c1-12)

# release: the Date line of the suite's Release file on the mirror (empty
# when the mirror cannot be reached)
release() {
	local r
	r=$(curl -fsS --max-time 30 "$MIRROR/dists/$SUITE/InRelease" 2>/dev/null) || return 0
	printf '%s\n' "$r" | sed -n '/^Date:/p'
}

fresh() {
	[ -s "$R/root.ext4" ] && [ -s "$R/versions" ] || return 1
	[ "${MEMCORE_VM_REFRESH:-1}" = 0 ] && return 0
	local now; now=$(release)
	[ -z "$now" ] && return 0                 # mirror unreachable: keep the cache
	[ "$now" = "$(cat "$R/release" 2>/dev/null)" ] && return 0
	vm_log "$SUITE: the mirror's Release changed; comparing candidate versions"
	local cand
	cand=$(chroot "$R/root" sh -c "apt-get -qq update >/dev/null 2>&1 &&
		apt-cache policy $VM_KEY_PKGS" | awk '/^[^ ]/{p=$1} /Candidate:/{print p, $2}' | tr -d : | sort)
	if [ "$cand" = "$(tr -d : < "$R/versions" | sort)" ]; then
		printf '%s\n' "$now" > "$R/release"; return 0
	fi
	vm_log "$SUITE: newer packages on the mirror: rebuilding"
	return 1
}
if fresh; then echo "$R"; exit 0; fi

command -v mmdebstrap >/dev/null || vm_die "missing mmdebstrap: bash contrib/install-deps.sh vm"
command -v mke2fs >/dev/null || vm_die "missing mke2fs: bash contrib/install-deps.sh vm"
vm_log "$SUITE: building the root filesystem in $R (mmdebstrap from $MIRROR)"
t0=$SECONDS
mkdir -p "$VM_CACHE/rootfs"
T=$(mktemp -d "$VM_CACHE/rootfs/.new-$SUITE.XXXXXX")
trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
# The archive here can be a snapshot whose Release is past its Valid-Until
# (sid): signatures are still checked, only the date is not.
mmdebstrap --variant=apt --include="$VM_PKGS" \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--customize-hook='mkdir -p "$1/src" "$1/share" "$1/scratch" "$1/io"' \
	--customize-hook='chroot "$1" sh -c "[ -s /etc/munge/munge.key ] || mungekey -c 2>/dev/null || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none; chown munge:munge /etc/munge/munge.key; chmod 0400 /etc/munge/munge.key"' \
	--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
	"$SUITE" "$T/root" "deb $MIRROR $SUITE main" >"$T/mmdebstrap.log" 2>&1 \
	|| { tail -n 30 "$T/mmdebstrap.log" >&2; vm_die "$SUITE: mmdebstrap failed"; }
chroot "$T/root" dpkg-query -W -f '${Package} ${Version}\n' $VM_KEY_PKGS | tr -d : > "$T/versions"
release > "$T/release" || true
sz=$(du -sm "$T/root" | cut -f1)
# ext4 with room for the guest's own writes (it is opened -snapshot anyway)
mke2fs -q -t ext4 -d "$T/root" "$T/root.ext4" $((sz * 3 / 2 + 512))M >&2
rm -rf "$R"; mv "$T" "$R"
for d in "$VM_CACHE/rootfs/$SUITE"-*/; do [ "${d%/}" = "$R" ] || rm -rf "$d"; done   # stale ones
trap - EXIT
vm_log "$SUITE: root filesystem ready in $((SECONDS - t0)) s ($sz MB; $(tr '\n' ' ' < "$R/versions"))"
echo "$R"
