#!/bin/bash
# memcore keys: the listing names every key memcore.conf(5) documents
# (read from the man page here, apart from the table) and each listed key
# parses: the first word it lists is taken by memcore check --config.
. "$(dirname "$0")/lib.sh"
MAN=$(dirname "$0")/../../docs/memcore.conf.5


run_mc keys
expect_eq "keys: rc" "$RC" 0
listed=$(printf '%s\n' "$OUT" | sed 's/=.*//' | sort)
documented=$(awk '/^\.SH/ { k = ($0 == ".SH KEYS") } k && p && /^\.B[IR] [A-Za-z]+=/ { sub(/^\.B[IR] /, ""); sub(/=.*/, ""); print } { p = ($0 == ".TP" || $0 == ".TQ") }' "$MAN" | sort)
expect_eq "keys: the man page's keys" "$listed" "$documented"
expect_eq "keys: 21 or more keys" "$([ "$(printf '%s\n' "$listed" | wc -l)" -ge 21 ] && echo yes)" yes
expect_eq "keys: NodeGpus cap agrees with --gpus" "$(printf '%s\n' "$OUT" | grep '^NodeGpus=')" "NodeGpus=N (0 to 64)"
run_mc keys extra
expect_eq "keys extra: rc" "$RC" 2
# NodeGpus= above 64 refused like --gpus 65.
printf 'NodeGpus=65\n' > "$TMP/c.conf"
run_mc check --gpus 1 --config "$TMP/c.conf" --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml"
expect_eq "NodeGpus=65: rc" "$RC" 2
expect_contains "NodeGpus=65: message" "$ERR" "NodeGpus=65: out of range (at most 64)"
finish
