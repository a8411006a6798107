#!/bin/bash
# contrib/slurm-alloc-table.sh - the roff of memcore(8)'s "Slurm's options
# and settings at submission": one .TP entry for each row of
# tests/integration/corpus/slurm_alloc.tsv, in its order (name, emulated
# or let through, and the Slurm source it follows or why not). Its output
# stands in docs/memcore.8 between the lines
# .\" BEGIN slurm_alloc.tsv and .\" END slurm_alloc.tsv
# (tests/cli/test_alloc_table.sh checks they are the same). Usage:
#   bash contrib/slurm-alloc-table.sh [TSV] > table.roff
set -eu
tsv=${1:-$(cd "$(dirname "$0")/.." && pwd)/tests/integration/corpus/slurm_alloc.tsv}
awk -F'\t' '
function roff(s) { gsub(/\\/, "\\\\", s); gsub(/-/, "\\-", s); return s }
/^#/ || $1 == "item" || NF == 0 { next }
NF != 5 { printf "%s:%d: %d columns, want 5\n", FILENAME, FNR, NF > "/dev/stderr"; bad = 1; exit 1 }
{
	name = ($2 == "option") ? "--" $1 : $1
	print ".TP"
	print ".B " roff(name)
	if ($4 == "emulated")
		print "emulated (" $3 "), as Slurm computes it: " roff($5) "."
	else if ($4 == "let-through")
		print "let through (" $3 "): not modelled at submission, " roff($5) "; the launch check judges it."
	else { printf "%s:%d: treatment %s\n", FILENAME, FNR, $4 > "/dev/stderr"; bad = 1; exit 1 }
}
END { exit bad }' "$tsv"
