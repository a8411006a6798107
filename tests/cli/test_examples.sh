#!/bin/bash
# contrib/examples/*.sbatch: each is valid bash, and each "memcore check
# ... -> fits|refused" line in its comment gives that verdict on the typical
# node the comments describe (8 x 80 GiB GPUs, 96 cores, 2000 GiB), told to
# memcore as a login host is told: a memcore.conf partition line. The
# integration test test_50_cli_filter.sh also submits them with
# sbatch --test-only through the cli_filter.
. "$(dirname "$0")/lib.sh"
EX=$TOP/contrib/examples
printf 'PartitionName=gpu GpuMemory=80G NodeRam=2000G NodeCores=96 NodeGpus=8\n' >"$TMP/typical.conf"
n=0
for f in "$EX"/*.sbatch; do
	name=$(basename "$f")
	bash -n "$f" || fail "$name: bash -n"
	head -n1 "$f" | grep -qx '#!/bin/bash' || fail "$name: no #!/bin/bash"
	grep -q '^#SBATCH ' "$f" || fail "$name: no #SBATCH lines"
	grep -q '^# What memcore checks' "$f" || fail "$name: does not say what memcore checks"
	claims=$(grep -E '^#   memcore check .* -> (fits|refused)$' "$f")
	[ -n "$claims" ] || fail "$name: no 'memcore check ... -> verdict' line"
	while read -r line; do
		[ -n "$line" ] || continue
		args=${line#\#   memcore check }
		want=${args##* -> }
		args=${args% -> *}
		# shellcheck disable=SC2086
		run_mc check --config "$TMP/typical.conf" --partition gpu $args
		case $want in fits) w=0 ;; refused) w=1 ;; esac
		expect_eq "$name: memcore check $args (claims $want)" "$RC" "$w"
		n=$((n + 1))
	done <<<"$claims"
done
[ "$n" -ge 7 ] || fail "only $n claims checked"
# contrib/cli_filter.lua is valid Lua 5.1 (what cli_filter_lua.so links)
if command -v luac5.1 >/dev/null; then
	luac5.1 -p "$TOP/contrib/cli_filter.lua" || fail "contrib/cli_filter.lua: luac5.1 -p"
	for f in slurm_cli_setup_defaults slurm_cli_pre_submit slurm_cli_post_submit; do
		grep -q "^function $f(" "$TOP/contrib/cli_filter.lua" || fail "cli_filter.lua lacks $f (cli_filter/lua needs all three)"
	done
fi
finish
