#!/bin/bash
# contrib/install-deps.sh: each target asks only for its own packages (make
# demo must not pull debhelper), and apt waits for a held dpkg lock
# (DPkg::Lock::Timeout) instead of failing at once. dpkg-query and apt-get
# are stand-ins here: nothing is installed, nothing is downloaded.
. "$(dirname "$0")/lib.sh"

SCRIPT=$TOP/contrib/install-deps.sh
mkdir -p "$TMP/bin"
# Every package "missing"; apt-get records its arguments.
printf '#!/bin/sh\nexit 1\n' >"$TMP/bin/dpkg-query"
printf '#!/bin/sh\necho "$*" >>"%s/apt.log"\n' "$TMP" >"$TMP/bin/apt-get"
chmod +x "$TMP/bin/dpkg-query" "$TMP/bin/apt-get"

deps() { # TARGET: runs the script, sets RC and APT (what apt-get was asked)
	: >"$TMP/apt.log"
	RC=0
	PATH=$TMP/bin:$PATH MEMCORE_APT_GET=$TMP/bin/apt-get \
		MEMCORE_POLICY_RC_D=$TMP/policy-rc.d MEMCORE_APT_LOCK_TIMEOUT=42 \
		bash "$SCRIPT" "$@" >"$TMP/out" 2>&1 || RC=$?
	APT=$(cat "$TMP/apt.log")
}

if [ "$(id -u)" != 0 ]; then
	echo "skipped: needs root (the script installs only as root)"
	exit 0
fi
deps demo
expect_eq "demo rc" "$RC" 0
expect_contains "demo: slurmd" "$APT" " slurmd "
case $APT in *debhelper*) fail "demo pulls debhelper: $APT" ;; esac
case $APT in *libcmocka-dev*) fail "demo pulls cmocka: $APT" ;; esac
expect_contains "apt waits for the lock (update)" "$APT" "-o DPkg::Lock::Timeout=42 update"
expect_contains "apt waits for the lock (install)" "$APT" "-o DPkg::Lock::Timeout=42 install -y"
[ -e "$TMP/policy-rc.d" ] && fail "policy-rc.d left behind"
deps build
case $APT in *slurmd*) fail "build pulls slurmd: $APT" ;; esac
expect_contains "build: libslurm-dev" "$APT" "libslurm-dev"
deps deb
expect_contains "deb: debhelper" "$APT" "debhelper"
deps check
expect_contains "check: cmocka" "$APT" "libcmocka-dev"
expect_contains "check: debhelper (test_60_deb)" "$APT" "debhelper"
expect_contains "check: libhwloc-plugins (make sanitize)" "$APT" "libhwloc-plugins"
deps bogus
expect_eq "unknown target rc" "$RC" 2
# Nothing missing: no apt-get, and one line that says so.
printf '#!/bin/sh\necho "install ok installed"\n' >"$TMP/bin/dpkg-query"
deps demo
expect_eq "demo, all there: rc" "$RC" 0
expect_eq "demo, all there: apt-get not run" "$APT" ""
expect_contains "demo, all there: says so" "$(cat "$TMP/out")" \
	"memcore: the Debian packages for 'demo' are installed"
# The README's list for make demo is the script's (build + cluster).
eval "$(sed -n '/^build=(/,/)$/p; /^cluster=(/,/)$/p' "$SCRIPT")"
readme=$(sed -n '/^when missing; `make demo`:/,/to run the cluster/p' "$TOP/README.md" | tr '`\n' '  ' | tr -s ' ')
for p in "${build[@]}" "${cluster[@]}"; do
	case " $readme " in *" $p "*) ;; *) fail "README's make demo list lacks $p" ;; esac
done
finish
