# tests/vm/guest/boot.sh - PID 1 in the guest, after the initramfs's
# switch_root (POSIX sh: it runs before anything else is set up). Sets up
# what Slurm's cgroup/v2 needs without systemd, runs /io/cmd.sh, writes its
# exit status to /io/rc and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
mount -t proc proc /proc; mount -t sysfs sys /sys
mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp
mkdir -p /dev/pts /dev/shm /run/lock /run/munge
mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
# /dev/fd: bash process substitution (lib.sh reads `env` through it)
ln -sfn /proc/self/fd /dev/fd; ln -sfn fd/0 /dev/stdin; ln -sfn fd/1 /dev/stdout; ln -sfn fd/2 /dev/stderr
# cgroup v2 only (the kernel's default hierarchy; no v1 controller mounted)
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
# Slurm's cgroup/v2 with IgnoreSystemd=yes expects what systemd would have
# made: system.slice with the controllers enabled in it and in the root.
mkdir -p /sys/fs/cgroup/system.slice
for c in cpuset cpu io memory pids; do
	echo "+$c" > /sys/fs/cgroup/cgroup.subtree_control
	echo "+$c" > /sys/fs/cgroup/system.slice/cgroup.subtree_control
done 2>/dev/null
# Name resolution: glibc's AI_ADDRCONFIG ignores 127.0.0.1, so Slurm finds
# its own host name only through a second loopback address.
hostname mcvm
ip link set lo up; ip addr add 127.0.1.1/8 dev lo
printf '127.0.0.1 localhost\n127.0.1.1 mcvm\n' > /etc/hosts
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /share 2>/dev/null
[ -b /dev/vdb ] && mount -t ext4 /dev/vdb /scratch
cd /root
echo "memcore-vm: guest up at $(cut -d' ' -f1 /proc/uptime) s"
bash /io/cmd.sh < /dev/null; echo $? > /io/rc
sync; echo o > /proc/sysrq-trigger; sleep 10
