#!/bin/bash
# Slurm's options and settings at submission (memcore(8)): every row of
# tests/integration/corpus/slurm_alloc.tsv is in the man page as
# contrib/slurm-alloc-table.sh writes it; the let-through option rows are
# exactly alloc/mc_slurm_alloc.c's table (mc_slurm_let_through), and each
# one a job sets gives memcore check the line that says so (text and
# JSON), the verdict unchanged, and the cli_filter logs it at sbatch -v;
# an emulated option gives no such line.
. "$(dirname "$0")/lib.sh"
TSV=$TOP/tests/integration/corpus/slurm_alloc.tsv
MAN=$TOP/docs/memcore.8
G4=$DATA/aws-g4dn-metal-2xxeon8259cl-8xt4.xml   # 8 x T4, 96 CPUs
C=(check --config "$TMP/empty.conf" --topology "$G4")
# A job that fits (exit 0) and one that does not (exit 1) on that node.
FIT='"gres":"gpu:8","mem":"191G","cpus-per-gpu":"6"'
BIG='"gres":"gpu:8","mem":"400G"'

# (a) The man page's list is the script's output, byte for byte.
bash "$TOP/contrib/slurm-alloc-table.sh" >"$TMP/gen.roff" || fail "contrib/slurm-alloc-table.sh failed"
sed -n '/^\.\\" BEGIN slurm_alloc\.tsv$/,/^\.\\" END slurm_alloc\.tsv$/p' "$MAN" | sed '1d;$d' >"$TMP/man.roff"
expect_eq "memcore(8): the markers hold a list" "$([ -s "$TMP/man.roff" ] && echo yes)" yes
expect_eq "memcore(8) between the markers = contrib/slurm-alloc-table.sh" \
	"$(diff "$TMP/man.roff" "$TMP/gen.roff")" ""
rows=$(grep -vc -e '^#' -e '^item	' "$TSV")
expect_eq "one .TP entry for each tsv row" "$(grep -c '^\.TP$' "$TMP/gen.roff")" "$rows"
expect_eq "every row emulated or let through" \
	"$(awk -F'\t' '!/^#/ && $1 != "item" && $4 != "emulated" && $4 != "let-through"' "$TSV")" ""

# (b) The let-through options: the tsv's rows and the C table are the same
# names and reasons.
awk -F'\t' '$2 == "option" && $4 == "let-through" { print $1 "\t" $5 }' "$TSV" | sort >"$TMP/tsv.let"
sed -n '/^} let_through\[\] = {$/,/^};$/p' "$TOP/alloc/mc_slurm_alloc.c" |
	tr -d '\n' | grep -o '{ "[^"]*",[[:space:]]*"[^"]*" }' |
	sed 's/^{ "\([^"]*\)",[[:space:]]*"\([^"]*\)" }$/\1\t\2/' | sort >"$TMP/c.let"
expect_eq "let-through options in the tsv" "$([ "$(wc -l <"$TMP/tsv.let")" -ge 20 ] && echo yes)" yes
expect_eq "tsv let-through options = mc_slurm_let_through's table" "$(diff "$TMP/tsv.let" "$TMP/c.let")" ""

# Those that may give the job more than modelled (mc_slurm_may_give_more)
# let a job that does not fit as modelled through, never refuse it; the
# others leave the verdict as it was.
more=$(sed -n '/static const char \*const more\[\] = {$/,/};$/p' "$TOP/alloc/mc_slurm_alloc.c" | grep -o '"[a-z-]*"' | tr -d '"' | sort)
expect_eq "the options that may give more: seven, and --distribution by its value" "$(wc -l <<<"$more")" 7
n=0
while IFS=$'\t' read -r name why; do
	line="memcore: --$name is not modelled at submission: $why (the launch check judges it)"
	for base in "$FIT" "$BIG"; do
		run_mc "${C[@]}" --slurm-options "{$base}"
		want_rc=$RC want_out=$OUT
		run_mc "${C[@]}" --slurm-options "{$base,\"$name\":\"1\"}"
		if [ "$base" = "$BIG" ] && grep -qx -- "$name" <<<"$more"; then
			lt="memcore: as modelled without --$name the job does not fit this node; --$name may change what Slurm gives it ($why): let through, the launch check judges it"
			expect_eq "--$name: a job that does not fit as modelled is let through" "$want_rc $RC" "1 0"
			expect_contains "--$name: its let-through line" "$OUT" "$lt"
			expect_contains "--$name: its line (text)" "$OUT" "$line"
			run_mc "${C[@]}" --json --slurm-options "{$base,\"$name\":\"1\"}"
			expect_eq "--$name: let_through in the JSON" "$(jq -r .let_through <<<"$OUT")" "$lt"
			continue
		fi
		expect_eq "--$name: the verdict unchanged" "$RC" "$want_rc"
		expect_contains "--$name: its line (text)" "$OUT" "$line"
		expect_eq "--$name: only that line added" "$(grep -vxF -- "$line" <<<"$OUT")" "$want_out"
		run_mc "${C[@]}" --json --slurm-options "{$base,\"$name\":\"1\"}"
		expect_eq "--$name: its line (JSON explanation)" \
			"$(jq -r --arg l "$line" '[.explanation[] | select(. == $l)] | length' <<<"$OUT")" 1
	done
	n=$((n + 1))
done <"$TMP/tsv.let"
expect_eq "every let-through option tried" "$n" "$(wc -l <"$TMP/tsv.let")"
# --distribution: plane, arbitrary and nopack change how many tasks a
# node gets (let through); block and cyclic do not (the refusal stands).
for d in plane=4 arbitrary block:nopack; do
	run_mc "${C[@]}" --slurm-options "{$BIG,\"distribution\":\"$d\"}"
	expect_eq "--distribution=$d: let through" "$RC" 0
	expect_contains "--distribution=$d: its let-through line" "$OUT" "memcore: as modelled without --distribution the job does not fit this node;"
done
for d in block cyclic:cyclic; do
	run_mc "${C[@]}" --slurm-options "{$BIG,\"distribution\":\"$d\"}"
	expect_eq "--distribution=$d: still refused" "$RC" 1
done

# (c) An emulated option gives no such line (a value each takes).
declare -A V=([nodes]=1 [ntasks]=8 [ntasks-per-node]=8 [ntasks-per-gpu]=1
	[ntasks-per-tres]=1 [cpus-per-task]=2 [cpus-per-gpu]=2
	[sockets-per-node]=2 [cores-per-socket]=24 [threads-per-core]=2
	[hint]=nomultithread [mincpus]=4 [exclusive]=exclusive [mem]=100G
	[mem-per-cpu]=4G [mem-per-gpu]=10G [gpus]=8 [gpus-per-node]=8
	[gpus-per-task]=1 [gpus-per-socket]=4 [gres]=gpu:8
	[tres-per-task]=gres/gpu:1 [nodelist]=n1 [exclude]=n2)
while read -r name; do
	if [ -z "${V[$name]:-}" ]; then
		fail "emulated option --$name: no value in this test"; continue
	fi
	base='"gres":"gpu:8",'; [ "$name" = gres ] && base=
	run_mc "${C[@]}" --slurm-options "{$base\"$name\":\"${V[$name]}\"}"
	expect_eq "--$name=${V[$name]}: judged" "$([ "$RC" -le 1 ] && echo yes)" yes
	expect_eq "--$name (emulated): no not-modelled line" "$(grep -c 'is not modelled at submission' <<<"$OUT")" 0
	expect_eq "--$name (emulated): unknown to mc_slurm_let_through" \
		"$(grep -c "^$name	" "$TMP/c.let")" 0
done < <(awk -F'\t' '$2 == "option" && $4 == "emulated" { print $1 }' "$TSV")

# (d) The line reaches sbatch -v: contrib/cli_filter.lua logs it
# (slurm.log_verbose) for a job that is queued, once.
if command -v lua5.1 >/dev/null; then
	printf '#!/bin/sh\nexec "%s" "$@" --topology "%s"\n' "$MEMCORE" "$G4" >"$TMP/mc"
	chmod +x "$TMP/mc"
	sed -e "s|^local MEMCORE = .*|local MEMCORE = \"$TMP/mc\"|" \
	    -e "s|^local MEMCORE_CONF = .*|local MEMCORE_CONF = \"$TMP/empty.conf\"|" \
	    "$TOP/contrib/cli_filter.lua" >"$TMP/filter.lua"
	# cli_filter/lua's slurm table, as much of it as the script uses
	cat >"$TMP/driver.lua" <<LUA
slurm = { SUCCESS = 0, ERROR = -1,
	log_verbose = function(f, ...) print("V:" .. string.format(f, ...)) end,
	json_cli_options = function() return os.getenv("JOB") end }
dofile("$TMP/filter.lua")
print("rc=" .. slurm_cli_pre_submit({ type = "sbatch" }, 0))
LUA
	lua_run() { # JOB_JSON -> stdout: V:<verbose line> and rc=<code>
		JOB=$1 lua5.1 "$TMP/driver.lua" 2>"$TMP/lua.err"
	}
	out=$(lua_run "{$FIT,\"core-spec\":\"2\",\"constraint\":\"big\"}")
	expect_contains "cli_filter: queued" "$out" "rc=0"
	expect_contains "cli_filter: --core-spec at sbatch -v" "$out" \
		"V:memcore: --core-spec is not modelled at submission: $(awk -F'\t' '$1 == "core-spec" { print $5 }' "$TSV") (the launch check judges it)"
	expect_eq "cli_filter: one verbose line each" "$(grep -c '^V:memcore: --.* is not modelled' <<<"$out")" 2
	out=$(lua_run "{$FIT}")
	expect_eq "cli_filter: none without such an option" "$(grep -c 'is not modelled' <<<"$out")" 0
	out=$(lua_run "{$BIG,\"ntasks-per-socket\":\"2\"}")
	expect_contains "cli_filter: --ntasks-per-socket, not fitting as modelled: queued" "$out" "rc=0"
	expect_contains "cli_filter: ... its let-through line at sbatch -v" "$out" "V:memcore: as modelled without --ntasks-per-socket the job does not fit this node;"
	out=$(lua_run "{$BIG,\"overcommit\":\"1\"}")
	expect_contains "cli_filter: refused" "$out" "rc=-1"
	expect_contains "cli_filter: refused, the line with the explanation" "$(cat "$TMP/lua.err")" \
		"memcore: --overcommit is not modelled at submission:"
fi
finish
