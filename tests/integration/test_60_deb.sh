#!/bin/bash
# The Debian package: `make deb` builds it (dpkg-buildpackage -b on a copy of
# this tree), it holds the same files in the same places as `make install
# PREFIX=/usr`, `dpkg -i` installs it on this machine, the test cluster runs a
# refused and a fitting job with the INSTALLED plugin (the plugstack line is
# the installed snippet's), and `dpkg -r` then `dpkg --purge` remove every
# file it installed. The package is purged at exit whatever happens.
# MC_DEB=FILE tests that package instead of building one (the trixie guest:
# the .deb built in its chroot, next to its build tree).
. "$(dirname "$0")/lib.sh"

PKG=memcore
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
PLUGIN_DIR=/usr/lib/$MULTIARCH/slurm-wlm
TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml

[ "$(id -u)" = 0 ] || mc_die "needs root (dpkg -i)"
for b in dpkg-buildpackage dh fakeroot dpkg-deb; do
	command -v "$b" >/dev/null || mc_die "missing $b: run contrib/install-deps.sh (make deps)"
done
# Never touch an admin's memcore: refuse to run where one is installed.
if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q installed; then
	mc_die "a $PKG package is installed on this machine; this test installs and purges its own: remove it first"
fi
for f in "$PLUGIN_DIR/memcore.so" /usr/bin/memcore /etc/slurm/memcore.conf \
	 /etc/slurm/plugstack.conf.d/memcore.conf; do
	[ -e "$f" ] && mc_die "$f exists (not from a package); this test would overwrite it"
done

tmp=$(mktemp -d /tmp/mc-deb.XXXXXX)
mc_at_exit "rm -rf '$tmp'"
# run CMD...: like mc_run (MC_RC, MC_OUT, MC_ERR for assert_rc), usable
# before the cluster starts and after it stops
run() {
	MC_CMD="$*"
	timeout -k 5 300 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	MC_RC=$?
	MC_OUT=$(cat "$tmp/out") MC_ERR=$(cat "$tmp/err")
}
# from here on, whatever happens: the package goes away
mc_at_exit "dpkg-query -W $PKG >/dev/null 2>&1 && dpkg --purge $PKG >/dev/null 2>&1"

# --- build -------------------------------------------------------------------
t0=$SECONDS
if [ -n "${MC_DEB:-}" ]; then
	debdir=$(dirname "$MC_DEB") deb=$MC_DEB
	mc_log "testing the package $MC_DEB (built elsewhere)"
else
	debdir=$tmp/b/deb
	if ! make -s -C "$MC_TOP" deb B="$tmp/b" >"$tmp/build.log" 2>&1; then
		tail -n 40 "$tmp/build.log" >&2
		mc_die "make deb failed (log above)"
	fi
	deb=$(ls "$debdir"/${PKG}_*_*.deb 2>/dev/null | head -n1)
fi
assert_file "$deb"
mc_log "$(basename "$deb") ready in $((SECONDS - t0))s"
T_BUILD=$((SECONDS - t0))
assert_eq "$(sed -n 's/^VERSION *:= *//p' "$MC_TOP/Makefile")" \
	"$(dpkg-deb -f "$deb" Version)" "package version = the Makefile's VERSION"
deps=$(dpkg-deb -f "$deb" Depends)
for d in libhwloc libcgroup libjansson; do
	assert_contains "$deps" "$d" "Depends: $d"
done
# Pinned to the Slurm release it was built against (a SPANK plugin loads
# in no other): the slurmd of this machine, where it was built, read from
# dpkg here, and the next release (22.05.8 -> 22.06) as the upper bound.
built=$(dpkg-query -W -f='${source:Upstream-Version}' slurmd)
IFS=. read -r s_major s_minor _ <<<"$built"
next=$(printf '%d.%02d' "$s_major" $((10#$s_minor + 1)))
mc_log "built against Slurm $built: pinned to >= $built, << $next"
assert_contains "$deps" "slurmd (>= $built) | slurm-client (>= $built)" "Depends: at least the Slurm it was built against ($built)"
assert_contains "$deps" "slurmd (<< $next~) | slurm-client (<< $next~)" "Depends: below the next Slurm release ($next)"
breaks=$(dpkg-deb -f "$deb" Breaks)
for b in "slurmd (>= $next~)" "slurmd (<< $built~)" "slurm-client (>= $next~)" "slurm-client (<< $built~)"; do
	assert_contains "$breaks" "$b" "Breaks: $b"
done
# A package built for another Slurm release (MC_FOREIGN_DEB: bookworm's in
# the trixie guest) is refused next to this slurmd, and nothing of it stays.
if [ -n "${MC_FOREIGN_DEB:-}" ]; then
	fdeps=$(dpkg-deb -f "$MC_FOREIGN_DEB" Depends)
	mc_log "another release's package: $(basename "$MC_FOREIGN_DEB"): $fdeps"
	run env DEBIAN_FRONTEND=noninteractive dpkg -i "$MC_FOREIGN_DEB"
	assert_ne 0 "$MC_RC" "dpkg -i of a memcore built for another Slurm release, next to slurmd $built: refused"
	assert_match "$MC_ERR" "memcore (breaks|depends on) slurm" "dpkg says it is the Slurm release"
	dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q 'install ok installed'
	assert_ne 0 $? "the other release's memcore is not installed"
	[ ! -e "$PLUGIN_DIR/memcore.so" ]; assert_eq 0 $? "its memcore.so is not in Slurm's plugin directory"
	dpkg --purge "$PKG" >/dev/null 2>&1
fi
dpkg-deb -e "$deb" "$tmp/ctl"
assert_eq "/etc/slurm/memcore.conf
/etc/slurm/plugstack.conf.d/memcore.conf" "$(sort "$tmp/ctl/conffiles")" "conffiles: the policy and the plugstack snippet, once each"

# --- the package and `make install PREFIX=/usr` hold the same files ---------
# (debian/tmp is exactly `make install DESTDIR=debian/tmp PREFIX=/usr`;
# dh_compress gzips man pages and large docs, dh_installdocs adds
# changelog.gz and copyright)
( cd "$debdir"/$PKG-*/debian/tmp && find . -type f | sed 's|^\.||' | sort ) >"$tmp/make-install.list"
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\.||; s|\.gz$||' |
	grep -vx -e "/usr/share/doc/$PKG/changelog" -e "/usr/share/doc/$PKG/copyright" | sort >"$tmp/deb.list"
assert_eq "$(cat "$tmp/make-install.list")" "$(cat "$tmp/deb.list")" "the .deb and make install: the same files"
for f in "$PLUGIN_DIR/memcore.so" /usr/bin/memcore /usr/share/man/man8/memcore.8 \
	 /usr/share/man/man5/memcore.conf.5 /etc/slurm/memcore.conf \
	 /etc/slurm/plugstack.conf.d/memcore.conf /usr/share/memcore/cli_filter.lua \
	 /usr/share/doc/$PKG/examples/one-task-all-gpus.sbatch \
	 /usr/share/memcore/grafana/memcore.json /usr/share/memcore/prometheus/consoles/memcore.html; do
	grep -qxF "$f" "$tmp/deb.list"; assert_eq 0 $? "the package has $f"
done

# --- install -----------------------------------------------------------------
run env DEBIAN_FRONTEND=noninteractive dpkg -i "$deb"
assert_rc 0 "dpkg -i $(basename "$deb")"
dpkg -L "$PKG" | while read -r f; do [ -f "$f" ] && echo "$f"; done | sort >"$tmp/installed.list"
assert_file_contains "$tmp/installed.list" "$PLUGIN_DIR/memcore.so"
run /usr/bin/memcore --version
assert_rc 0 "the installed memcore command runs"
run /usr/bin/memcore check --topology "$TOPO" --gpus 8 --mem 100G --cores 24
assert_eq 1 "$MC_RC" "installed memcore check (default policy /etc/slurm/memcore.conf): refused"
snippet=$(grep -v '^[[:space:]]*#' /etc/slurm/plugstack.conf.d/memcore.conf | grep .)
assert_eq "required $PLUGIN_DIR/memcore.so config=/etc/slurm/memcore.conf" "$snippet" "the installed plugstack line"
run env MANWIDTH=80 man --warnings -l /usr/share/man/man8/memcore.8.gz
assert_rc 0 "man memcore(8) from the package"

# --- the test cluster with the installed plugin ------------------------------
# The installed plugstack line as it is, plus the g4dn topology as an inline
# override (the installed /etc/slurm/memcore.conf is not edited).
MC_PLUGSTACK_LINES="$snippet TopologyFile=$TOPO cache=$MC_WORK/state/d/memcore-node-facts"
mc_cluster_start
mc_run srun -N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=100G true
assert_ne 0 "$MC_RC" "installed plugin: a step short of RAM is refused"
assert_contains "$MC_ERR" "190.04 GiB needed" "installed plugin: the explanation"
id=$(mc_sbatch -N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=100G --wrap "echo refused-ran")
assert_eq FAILED "$(mc_wait_job "$id")" "installed plugin: a refused batch job FAILS"
assert_file_contains "$(mc_job_out "$id")" "needs more than it was given"
id=$(mc_sbatch -N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6 --mem=200G --wrap "echo fitting-ran")
assert_eq COMPLETED "$(mc_wait_job "$id")" "installed plugin: a fitting job COMPLETES"
assert_file_contains "$(mc_job_out "$id")" "fitting-ran"
mc_run sbatch --help
assert_contains "$MC_OUT" "--dataloader-workers=N" "installed plugin: sbatch --help lists its options"
assert_node_idle "node IDLE"
mc_cluster_stop

# --- remove, then purge: nothing of it is left --------------------------------
conffiles=$(dpkg-query -W -f='${Conffiles}\n' "$PKG" | awk 'NF {print $1}' | sort)
run dpkg -r "$PKG"
assert_rc 0 "dpkg -r $PKG"
left=$(while read -r f; do [ -e "$f" ] && echo "$f"; done <"$tmp/installed.list" |
	grep -vxF -f <(printf '%s\n' $conffiles))
assert_eq "" "$left" "dpkg -r removed every file but the conffiles"
run dpkg --purge "$PKG"
assert_rc 0 "dpkg --purge $PKG"
left=$(while read -r f; do [ -e "$f" ] && echo "$f"; done <"$tmp/installed.list")
assert_eq "" "$left" "dpkg --purge removed every file it installed, conffiles too"
for d in /usr/share/memcore /usr/share/doc/$PKG; do
	[ ! -e "$d" ]; assert_eq 0 $? "$d is gone"
done
dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q 'install ok installed'
assert_ne 0 $? "dpkg no longer lists $PKG as installed"
mc_log "package build ${T_BUILD}s, whole test ${SECONDS}s (cluster lock waits included)"
