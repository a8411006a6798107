#!/bin/bash
# tests/vm/kernel.sh - print the directory of a cached guest kernel, making
# it first when missing: Debian's kernel package (what linux-image-amd64
# depends on in this machine's apt) is downloaded with apt-get download,
# unpacked with dpkg-deb -x (never installed here), its bzImage decompressed
# to an ELF vmlinux (QEMU boots it through PVH: ~5 s less of XZ under TCG),
# and a busybox initramfs built with the modules the guest needs (virtio,
# 9p, ext4, loaded at boot; NFS, for the test that mounts it) and an /init
# that switch_roots into the root filesystem image.
#
# Cache: $MEMCORE_VM_CACHE/kernel/<package>_<version>-<harness hash>/
set -euo pipefail
. "$(dirname "$0")/common.sh"

for b in apt-get dpkg-deb depmod modprobe xz cpio gzip busybox; do
	command -v "$b" >/dev/null || vm_die "missing $b: bash contrib/install-deps.sh vm"
done
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image/{print $2; exit}')
ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/{print $2}')
if [ -z "$pkg" ] || [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	# no apt lists here: any kernel already cached will do
	d=$(ls -d "$VM_CACHE"/kernel/*/ 2>/dev/null | tail -n1)
	[ -n "$d" ] && [ -s "$d/initramfs.cpio.gz" ] && { echo "${d%/}"; exit 0; }
	vm_die "cannot find Debian's kernel package (run apt-get update)"
fi
K=$VM_CACHE/kernel/${pkg}_${ver//[^A-Za-z0-9.+~-]/_}-$(vm_hash "$0" "$VM_HERE/common.sh" "$VM_HERE/guest/init")
if [ -s "$K/initramfs.cpio.gz" ] && [ -s "$K/vmlinux" ]; then echo "$K"; exit 0; fi

vm_log "building the guest kernel $pkg $ver in $K"
t0=$SECONDS
mkdir -p "$VM_CACHE/kernel"
T=$(mktemp -d "$VM_CACHE/kernel/.new.XXXXXX")
chmod 0755 "$T"                     # apt-get download drops to _apt
trap 'rm -rf "$T"' EXIT
(cd "$T" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$ver" >/dev/null) || vm_die "apt-get download $pkg=$ver failed"
mkdir "$T/root"
dpkg-deb -x "$T"/"${pkg}"_*.deb "$T/root"
KV=$(ls "$T/root/lib/modules")
depmod -b "$T/root" "$KV"
vmlinuz=$T/root/boot/vmlinuz-$KV
off=$(grep -abo $'\xfd7zXZ' "$vmlinuz" | head -n1 | cut -d: -f1)
[ -n "$off" ] || vm_die "no XZ payload in $vmlinuz"
tail -c +$((off + 1)) "$vmlinuz" | xz -dc > "$T/vmlinux" 2>/dev/null || true
head -c 4 "$T/vmlinux" | grep -q 'ELF' || vm_die "could not decompress $vmlinuz to an ELF vmlinux"

# initramfs: busybox + modules in dependency order + /init
I=$T/initramfs
mkdir -p "$I"/{bin,proc,sys,dev,io,newroot}
cp "$(command -v busybox)" "$I/bin/busybox"
for a in $(busybox --list); do [ "$a" = busybox ] || ln -sf busybox "$I/bin/$a"; done
for m in virtio_pci virtio_blk 9pnet_virtio 9p ext4; do
	modprobe -d "$T/root" -S "$KV" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' | while read -r p; do
	rel=${p#"$T"/root/}
	mkdir -p "$I/$(dirname "$rel")"; cp "$p" "$I/$rel"; echo "/$rel" >> "$I/modules.list"
done
# The NFS client and server (test_29_nfs_dataset: a real network filesystem
# over loopback): not loaded at boot; guest/init copies lib/modules into
# the root filesystem, where the test modprobes them (modules.dep made here
# for the modules above and these).
for m in nfsd nfsv4 nfsv3; do
	modprobe -d "$T/root" -S "$KV" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' | while read -r p; do
	rel=${p#"$T"/root/}
	[ -e "$I/$rel" ] || { mkdir -p "$I/$(dirname "$rel")"; cp "$p" "$I/$rel"; }
done
for f in modules.order modules.builtin modules.builtin.modinfo; do
	[ -e "$T/root/lib/modules/$KV/$f" ] && cp "$T/root/lib/modules/$KV/$f" "$I/lib/modules/$KV/"
done
depmod -b "$I" "$KV"
cp "$VM_HERE/guest/init" "$I/init"
chmod 0755 "$I/init"
(cd "$I" && find . | cpio -o -H newc --quiet | gzip -1) > "$T/initramfs.cpio.gz"
echo "$KV" > "$T/version"
rm -rf "$T/root" "$I" "$T"/*.deb
rm -rf "$K"; mv "$T" "$K"; chmod 0755 "$K"
for d in "$VM_CACHE"/kernel/*/; do [ "${d%/}" = "$K" ] || rm -rf "$d"; done   # older kernels
trap - EXIT
vm_log "kernel $KV ready in $((SECONDS - t0)) s"
echo "$K"
