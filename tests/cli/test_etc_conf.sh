#!/bin/bash
# etc/memcore.conf, the annotated file a site starts from: it parses once
# uncommented, and every commented Key=Value line is the built-in default
# (setting it changes no verdict) unless an "Example (default: ...)"
# comment right above marks it as a value a site might set.
. "$(dirname "$0")/lib.sh"
CONF=$TOP/etc/memcore.conf
T8=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml

# The verdicts a default must leave as they are: a plain step, a shard
# step, a ZeRO step, and the node's audit.
verdicts() {
	local c=$1
	run_mc check --config "$c" --topology "$T8" --gpus 2 --mem 60G --json
	printf '%s %s\n' "$RC" "$OUT"
	run_mc check --config "$c" --topology "$T8" --shards 4 --json
	printf '%s %s\n' "$RC" "$OUT"
	run_mc check --config "$c" --topology "$T8" --gpus 8 --model-params 3B --zero-stage 3 --offload all --json
	printf '%s %s\n' "$RC" "$OUT"
	run_mc audit --config "$c" --topology "$T8" --json
	printf '%s %s\n' "$RC" "$OUT"
}
base=$(verdicts "$TMP/empty.conf")

n=0 examples=0 prev=""
while IFS= read -r line; do
	case "$line" in
	'#'[A-Z]*=*)
		if [ "${prev#\# Example (default:}" != "$prev" ] || [ "$prev_example" = 1 ]; then
			examples=$((examples + 1))
			prev_example=1
		else
			n=$((n + 1))
			printf '%s\n' "${line#\#}" >"$TMP/one.conf"
			got=$(verdicts "$TMP/one.conf")
			[ "$got" = "$base" ] || fail "etc/memcore.conf: '${line#\#}' is shown as the default but changes the verdict (mark it 'Example (default: ...)')"
		fi
		;;
	*) prev_example=0 ;;
	esac
	prev=$line
done <"$CONF"
expect_eq "etc/memcore.conf: defaults shown" "$([ "$n" -ge 20 ] && echo yes)" yes
expect_eq "etc/memcore.conf: examples marked" "$([ "$examples" -ge 8 ] && echo yes)" yes

# Uncommented as a whole (the examples' paths aside), the file parses.
sed -n 's/^#\([A-Z][A-Za-z]*=\)/\1/p' "$CONF" | grep -v '^TopologyFile=\|^PrometheusTextfile=' >"$TMP/all.conf"
run_mc check --config "$TMP/all.conf" --topology "$T8" --gpus 1
expect_eq "etc/memcore.conf uncommented: stderr" "$ERR" ""
finish
