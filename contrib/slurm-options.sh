#!/bin/bash
# contrib/slurm-options.sh - every option of Slurm's option table
# (src/common/slurm_opt.c, the slurm_cli_opt_t structs) and the commands
# that take it, for each release given: a struct with .set_func is taken
# by sbatch, srun and salloc alike; .set_func_sbatch/_srun/_salloc by that
# command only. No network: it reads a local Slurm git tree.
#
# usage: contrib/slurm-options.sh SLURM_GIT_DIR TAG...
# output (TSV, one line per option and release): option, release,
#   commands (sbatch,srun,salloc as they take it), short option ('-N' or '')
set -euo pipefail
repo=${1:?usage: $0 SLURM_GIT_DIR TAG...}
shift
printf 'option\trelease\tcommands\tshort\n'
for tag in "$@"; do
	git -C "$repo" show "$tag:src/common/slurm_opt.c" |
	awk -v rel="${tag#slurm-}" '
	/^static slurm_cli_opt_t slurm_opt_[a-z0-9_]+ = \{/ { in_s = 1; name = ""; c = ""; sh = ""; all = 0; sb = 0; sr = 0; sa = 0; next }
	in_s && /\.name = "/ { n = $0; sub(/.*\.name = "/, "", n); sub(/".*/, "", n); name = n }
	in_s && /\.val = '\''.'\''/ { v = $0; sub(/.*\.val = '\''/, "", v); sh = "-" substr(v, 1, 1) }
	in_s && /\.set_func = / { all = 1 }
	in_s && /\.set_func_sbatch = / { sb = 1 }
	in_s && /\.set_func_srun = / { sr = 1 }
	in_s && /\.set_func_salloc = / { sa = 1 }
	in_s && /^\};/ {
		in_s = 0
		if (name == "") next
		if (all) { sb = 1; sr = 1; sa = 1 }
		c = ""
		if (sb) c = c (c ? "," : "") "sbatch"
		if (sr) c = c (c ? "," : "") "srun"
		if (sa) c = c (c ? "," : "") "salloc"
		if (c == "") c = "none"
		printf "%s\t%s\t%s\t%s\n", name, rel, c, sh
	}' | sort
done
