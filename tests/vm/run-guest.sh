#!/bin/bash
# tests/vm/run-guest.sh [options] -- COMMAND: boot a guest under QEMU (TCG:
# software emulation; no network device), run the shell COMMAND in it as
# root, print the console and exit with COMMAND's status (125: the guest
# gave none: did not boot, or timed out).
#   --kernel DIR   from kernel.sh (vmlinux, initramfs.cpio.gz)       required
#   --rootfs DIR   from rootfs.sh (root.ext4, opened -snapshot: the
#                  guest's writes are thrown away)                  required
#   --share DIR    host DIR read-write at /share in the guest (9p)
#   --scratch MB   a fresh ext4 disk made here (mke2fs), at /scratch: big
#                  files and unix sockets; the guest's /tmp is tmpfs
#   --mem MB (2048)  --cpus N (2)  --timeout S (900)
set -euo pipefail
. "$(dirname "$0")/common.sh"
kernel= rootfs= share= scratch= mem=2048 cpus=2 timeout=900
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--rootfs) rootfs=$2; shift 2 ;;
	--share) share=$(cd "$2" && pwd); shift 2 ;;
	--scratch) scratch=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--) shift; break ;;
	*) vm_die "run-guest.sh: unknown option $1" ;;
	esac
done
[ -s "$kernel/vmlinux" ] || vm_die "run-guest.sh: no kernel in '$kernel' (kernel.sh)"
[ -s "$rootfs/root.ext4" ] || vm_die "run-guest.sh: no root image in '$rootfs' (rootfs.sh)"
command -v qemu-system-x86_64 >/dev/null || vm_die "missing qemu-system-x86_64: bash contrib/install-deps.sh vm"
IO=$(mktemp -d "${TMPDIR:-/var/tmp}/memcore-vm-io.XXXXXX")
trap 'rm -rf "$IO"' EXIT
printf '%s\n' "$*" > "$IO/cmd.sh"
cp "$VM_HERE/guest/boot.sh" "$IO/boot.sh"
# psi=1: memory.pressure exists only with PSI on (test_37_squeeze reads
# the step's stall time there). Bookworm's 6.1 has it on by default (a
# guest booted without psi=1 has /proc/pressure), but a kernel built with
# CONFIG_PSI_DEFAULT_DISABLED has it off unless told: said, not assumed.
args=(-nodefaults -no-user-config -nographic -no-reboot -accel tcg -cpu max
	-m "$mem" -smp "$cpus" -serial stdio
	-kernel "$kernel/vmlinux" -initrd "$kernel/initramfs.cpio.gz"
	-append "console=ttyS0 panic=-1 quiet loglevel=1 psi=1"
	-virtfs "local,path=$IO,mount_tag=io,security_model=none,id=io"
	-snapshot -drive "file=$rootfs/root.ext4,format=raw,if=virtio,cache=unsafe")
if [ -n "$scratch" ]; then
	truncate -s "${scratch}M" "$IO/scratch.img"
	mke2fs -q -t ext4 -E lazy_itable_init=1,lazy_journal_init=1 "$IO/scratch.img" >&2
	args+=(-drive "file=$IO/scratch.img,format=raw,if=virtio,cache=unsafe")
fi
[ -n "$share" ] && args+=(-virtfs "local,path=$share,mount_tag=share,security_model=passthrough,id=share")
rc=0
timeout -k 10 "$timeout" qemu-system-x86_64 "${args[@]}" </dev/null || rc=$?
[ $rc = 0 ] || vm_log "qemu exited $rc$([ $rc = 124 ] && echo " (timed out after ${timeout}s)")"
[ -s "$IO/rc" ] || { vm_log "no exit status from the guest"; exit 125; }
exit "$(cat "$IO/rc")"
