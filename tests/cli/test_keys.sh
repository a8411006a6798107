#!/bin/bash
# memcore keys: the listing names every key memcore.conf(5) documents
# (read from the man page here, apart from the table) and each listed key
# parses: the first word it lists is taken by memcore check --config.
. "$(dirname "$0")/lib.sh"
MAN=$(dirname "$0")/../../docs/memcore.conf.5


run_mc keys
expect_eq "keys: rc" "$RC" 0
listed=$(printf '%s\n' "$OUT" | sed 's/=.*//' | grep -v '^PartitionName$' | sort)
documented=$(awk '/^\.SH/ { k = ($0 == ".SH KEYS") } k && p && /^\.B[IR] [A-Za-z]+=/ { sub(/^\.B[IR] /, ""); sub(/=.*/, ""); print } { p = ($0 == ".TP" || $0 == ".TQ") }' "$MAN" | sort)
expect_eq "keys: the man page's keys" "$listed" "$documented"
expect_eq "keys: 21 or more keys" "$([ "$(printf '%s\n' "$listed" | wc -l)" -ge 21 ] && echo yes)" yes
expect_eq "keys: NodeGpus cap agrees with --gpus" "$(printf '%s\n' "$OUT" | grep '^NodeGpus=')" "NodeGpus=N (0 to 64)"
# The partition lines too, last (memcore.conf(5) PARTITION LINES): the
# keys alone do not say how a site sets a partition's own policy.
expect_eq "keys: PartitionName= in memcore.conf(5)" "$(awk '/^\.SH/ { k = ($0 == ".SH PARTITION LINES") } k && /^\.BI PartitionName= /' "$MAN" | wc -l)" 1
expect_eq "keys: PartitionName= listed last" "$(printf '%s\n' "$OUT" | tail -1)" \
	"PartitionName=NAME KEY=VALUE... (a line of its own: the keys not global only, for jobs of partition NAME)"
run_mc keys extra
expect_eq "keys extra: rc" "$RC" 2
# NodeGpus= above 64 refused like --gpus 65.
printf 'NodeGpus=65\n' > "$TMP/c.conf"
run_mc check --gpus 1 --config "$TMP/c.conf" --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml"
expect_eq "NodeGpus=65: rc" "$RC" 2
expect_contains "NodeGpus=65: message" "$ERR" "NodeGpus: out of range (at most 64)"
# A size key's limit as keys prints it is what the parser takes: the
# limit itself is accepted, one T above is refused with that limit, and
# the next unit up (P, which sbatch refuses too) is an unknown suffix
# that lists the accepted ones.
run_mc keys
lim=$(printf '%s\n' "$OUT" | sed -n 's/^RamPerTask=SIZE (at most \(.*\))$/\1/p')
expect_eq "keys: RamPerTask limit" "$lim" 1024T
printf 'RamPerTask=%s\n' "$lim" > "$TMP/c.conf"
run_mc check --gpus 1 --config "$TMP/c.conf" --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml"
case "$ERR" in *RamPerTask*) fail "RamPerTask=$lim (the listed limit) refused: $ERR" ;; esac
printf 'RamPerTask=1025T\n' > "$TMP/c.conf"
run_mc check --gpus 1 --config "$TMP/c.conf" --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml"
expect_eq "RamPerTask=1025T: rc" "$RC" 2
expect_contains "RamPerTask=1025T: message" "$ERR" "RamPerTask: too large (at most $lim)"
printf 'RamPerTask=2P\n' > "$TMP/c.conf"
run_mc check --gpus 1 --config "$TMP/c.conf" --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml"
expect_eq "RamPerTask=2P: rc" "$RC" 2
expect_contains "RamPerTask=2P: message" "$ERR" "RamPerTask: unknown size suffix 'P' (K, M, G or T (binary), optionally with B: 4G or 4GB)"
# --mem*: exactly what sbatch 22.05 takes (tested with its str_to_mbytes:
# 100GB, 100gb, 100Kb taken; 100Gi, 2P, 100B, 1.5G refused).
for m in 100G 100GB 100gb 100Kb 100TB 4096; do
	run_mc check --gpus 1 --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml" --mem="$m"
	[ "$RC" -le 1 ] || fail "--mem=$m refused: $ERR"
done
for o in mem mem-per-gpu mem-per-cpu; do
	for m in 100Gi 2P 100B 100KiB; do
		run_mc check --gpus 1 --topology "$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml" --$o="$m"
		expect_eq "--$o=$m: rc" "$RC" 2
		expect_contains "--$o=$m: message" "$ERR" "--$o=$m: unknown size suffix"
		expect_contains "--$o=$m: the list" "$ERR" "(K, M, G or T (binary), optionally with B: 4G or 4GB)"
	done
done
finish
