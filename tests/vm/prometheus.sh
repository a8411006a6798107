#!/bin/bash
# tests/vm/prometheus.sh [SUITE...] - Debian's Prometheus of each suite the
# guests run (default: bookworm trixie sid), one line each on stdout:
#     SUITE VERSION BINARY
# This machine's own suite: the prometheus package installed here
# (contrib/install-deps.sh), as it is. Another suite's: its package
# downloaded with apt-get download from a private apt list of that suite
# alone (this machine's mirror, Debian's archive keyring; the machine's own
# apt state untouched), unpacked with dpkg-deb -x, never installed, and
# run here: Debian builds it as one Go program that needs only libc (2.53
# of trixie and 3.5 of sid run on bookworm). So test_46 asks every
# dashboard query of the releases a site may run, Prometheus 3's among
# them, without a Prometheus in the guest images.
#
# Cache: $MEMCORE_VM_CACHE/prometheus/<suite>/<version>/ (the binary);
# the apt lists are fetched again when a suite's version is not cached.
set -euo pipefail
. "$(dirname "$0")/common.sh"

own=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
for b in apt-get dpkg-deb; do
	command -v "$b" >/dev/null || vm_die "missing $b"
done
[ $# -gt 0 ] || set -- $VM_SUITES_ALL
for s in "$@"; do
	if [ "$s" = "$own" ]; then
		bin=$(command -v prometheus) || vm_die "no prometheus here: bash contrib/install-deps.sh check"
		ver=$(dpkg-query -W -f '${Version}' prometheus)
		printf '%s %s %s\n' "$s" "$ver" "$bin"
		continue
	fi
	C=$VM_CACHE/prometheus/$s
	mkdir -p "$C"
	A=$(mktemp -d "$C/.apt.XXXXXX")
	chmod 0755 "$A"
	trap 'rm -rf "$A"' EXIT
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/deb"
	printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
		"$(vm_mirror)" "$s" >"$A/sources.list"
	opts=(-q -o Dir::Etc::sourcelist="$A/sources.list" -o Dir::Etc::sourceparts=/nonexistent
	      -o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache" -o APT::Sandbox::User=root)
	apt-get "${opts[@]}" update >"$A/update.log" 2>&1 || { cat "$A/update.log" >&2; vm_die "apt-get update of $s failed"; }
	ver=$(apt-cache "${opts[@]}" show prometheus 2>/dev/null | awk '/^Version:/ && !n++ { print $2 }')
	[ -n "$ver" ] || vm_die "no prometheus package in $s"
	D=$C/${ver//[^A-Za-z0-9.+~-]/_}
	if [ ! -x "$D/prometheus" ]; then
		(cd "$A/deb" && apt-get "${opts[@]}" download "prometheus=$ver" >/dev/null) ||
			vm_die "apt-get download prometheus=$ver ($s) failed"
		mkdir -p "$A/root"
		dpkg-deb -x "$A"/deb/prometheus_*.deb "$A/root"
		mkdir -p "$D"
		install -m 0755 "$A/root/usr/bin/prometheus" "$D/prometheus.new"
		mv "$D/prometheus.new" "$D/prometheus"
		vm_log "prometheus $ver of $s in $D"
	fi
	"$D/prometheus" --version >/dev/null 2>&1 || vm_die "$D/prometheus ($s) does not run here"
	printf '%s %s %s\n' "$s" "$ver" "$D/prometheus"
	rm -rf "$A"
	trap - EXIT
done
