#!/bin/bash
# Submit-time refusal with Slurm's own cli_filter/lua (contrib/cli_filter.lua)
# on a real Slurm 22.05: with CliFilterPlugins=cli_filter/lua and the script
# next to slurm.conf, a GPU job that memcore would refuse exits non-zero at
# submission with the explanation and nothing is queued; the same job with
# enough memory is queued and runs; a CPU-only job passes untouched.
#
# Two policy files, on purpose. The login host describes the partition as a
# login host must (a PartitionName line with GpuMemory, NodeRam, NodeCores,
# NodeGpus: 8 x 80 GiB nodes), which is the path this test is about. The node
# itself runs the plugin with its own topology (the g4dn.metal XML: 8 x T4),
# so the launch check stays the real one; every job this test lets through
# fits that node too (720 GiB and 24 cores are more than 8 T4s need), and
# the node claims 2000 GiB so that --mem=720G can be scheduled at all. On a
# real site both are one file describing the same nodes.
# Also: contrib/examples pass sbatch --test-only through the filter (and a
# smaller --mem is refused as their comments say); sbatch, srun and salloc
# --help list memcore's options with their text.
. "$(dirname "$0")/lib.sh"

TOPO=$MC_TOP/tests/data/aws-g4dn-metal-2xxeon8259cl-8xt4.xml
MC_REAL_MEMORY=2048000                    # 2000 GiB, as the examples' typical node
MC_SLURM_CONF_LINES="CliFilterPlugins=cli_filter/lua
PartitionName=other Nodes=$MC_NODE_NAME MaxTime=INFINITE State=UP"
mc_cluster_start

NODE_CONF=$MC_CONF_DIR/memcore.conf           # the node's policy (SPANK)
LOGIN_CONF=$MC_CONF_DIR/memcore-login.conf    # the login host's (cli_filter)
printf 'TopologyFile=%s\nAllowUserWarn=yes\n' "$TOPO" >"$NODE_CONF"
cat >"$LOGIN_CONF" <<EOF
# --memcore=warn is off by default; this site allows it
AllowUserWarn=yes
# what a login host knows of partition gpu: 8 x 80 GiB GPUs per node
PartitionName=gpu GpuMemory=80G NodeRam=2000G NodeCores=96 NodeGpus=8
EOF
mc_set_plugstack "required $MEMCORE_BUILD/memcore.so config=$NODE_CONF"
# cli_filter/lua loads cli_filter.lua from slurm.conf's directory.
mc_cli_filter_install "$MC_CONF_DIR" "$LOGIN_CONF"
assert_file_contains "$MC_CONF_DIR/cli_filter.lua" "$LOGIN_CONF"

queued() { squeue -h -o %i; }

# --- the issue's example: refused at submission, nothing queued ----------
# 8 x 80 GiB at w=2: 640 GiB floor + 16 x 4 GiB + 8 x 1 GiB = 712 GiB.
# No -p: the filter takes partition gpu from slurm.conf's Default=YES.
JOB=(-N1 -n1 --gpus=8 --dataloader-workers=2 --cpus-per-gpu=6)
mc_run sbatch "${JOB[@]}" --mem=400G --wrap "echo ran"
assert_ne 0 "$MC_RC" "sbatch --gpus=8 --mem=400G exits non-zero"
assert_contains "$MC_ERR" "memcore: this job needs more than it was given" "sbatch: the refusal"
assert_contains "$MC_ERR" "8 x 80 GiB" "sbatch: the partition's GPUs (memcore.conf partition line)"
assert_contains "$MC_ERR" "712 GiB needed = 640 GiB GPU floor + 16 workers x 4 GiB + 8 tasks x 1 GiB" "sbatch: RAM needed"
assert_contains "$MC_ERR" "400 GiB allocated (--mem=400G)" "sbatch: RAM asked"
assert_contains "$MC_ERR" "short 312 GiB" "sbatch: the shortfall"
assert_contains "$MC_ERR" "fix: --mem=712G" "sbatch: the fix"
assert_contains "$MC_ERR" "memcore: refused at submission in partition gpu: nothing was queued" "sbatch: says nothing was queued"
assert_contains "$MC_ERR" "--memcore=warn is allowed here (AllowUserWarn=yes)" "sbatch: says warn is allowed here"
assert_eq "" "$(queued)" "squeue shows nothing after the refused sbatch"
mc_log "what the user saw (rc $MC_RC):"; printf '%s\n' "$MC_ERR" >&2

# the same through srun and salloc
mc_run srun "${JOB[@]}" --mem=400G true
assert_ne 0 "$MC_RC" "srun of the same request exits non-zero"
assert_contains "$MC_ERR" "712 GiB needed" "srun: the explanation"
mc_run salloc "${JOB[@]}" --mem=400G true
assert_ne 0 "$MC_RC" "salloc of the same request exits non-zero"
assert_contains "$MC_ERR" "712 GiB needed" "salloc: the explanation"
assert_eq "" "$(queued)" "nothing queued after srun and salloc"

# #SBATCH lines in a script are part of the request
cat >"$MC_JOB_DIR/short.sh" <<'EOF'
#!/bin/bash
#SBATCH -N1 -n1 --gpus=8 --cpus-per-gpu=6
#SBATCH --mem=400G
echo ran
EOF
mc_run sbatch "$MC_JOB_DIR/short.sh"
assert_ne 0 "$MC_RC" "#SBATCH --mem=400G: refused"
assert_contains "$MC_ERR" "400 GiB allocated (--mem=400G)" "#SBATCH: the explanation"

# other forms of the same memory: --mem-per-gpu, --mem-per-cpu
mc_run sbatch "${JOB[@]}" --mem-per-gpu=50G --wrap true
assert_ne 0 "$MC_RC" "--mem-per-gpu=50G (400 GiB): refused"
assert_contains "$MC_ERR" "400 GiB allocated (--mem-per-gpu=50G)" "--mem-per-gpu named"
mc_run sbatch "${JOB[@]}" --mem-per-cpu=8G --wrap true
assert_ne 0 "$MC_RC" "--mem-per-cpu=8G x 48 CPUs (384 GiB): refused"
assert_contains "$MC_ERR" "384 GiB allocated (--mem-per-cpu=8G)" "--mem-per-cpu named"
# --gres=gpu:N and -p given explicitly
mc_run sbatch -p gpu -N1 -n1 --gres=gpu:8 --cpus-per-task=48 --mem=400G --wrap true
assert_ne 0 "$MC_RC" "--gres=gpu:8 -p gpu: refused"
assert_contains "$MC_ERR" "712 GiB needed" "--gres=gpu:8: 8 GPUs counted"
# too few cores: 1 CPU per task by default
mc_run sbatch -N1 -n1 --gpus=8 --mem=720G --wrap true
assert_ne 0 "$MC_RC" "no CPU option (1 CPU): refused"
assert_contains "$MC_ERR" "24 needed = 8 GPUs x (2 workers + 1)" "cores needed"
# several DataLoaders as a sum (8+2), handed to memcore check as given:
# 1+1 is sized as 2 workers, 0+0 (below) as none
mc_run sbatch -N1 -n1 --gpus=8 --dataloader-workers=1+1 --cpus-per-gpu=2 --mem=720G --wrap true
assert_ne 0 "$MC_RC" "--dataloader-workers=1+1 with 2 CPUs per GPU: refused"
assert_contains "$MC_ERR" "24 needed = 8 GPUs x (2 workers + 1)" "1+1 counts as 2 workers"
assert_eq "" "$(queued)" "nothing queued after the refusals"

# the DataLoader workers from the variable, as the plugin takes them:
# w=0 needs 640 + 8 = 648 GiB, so --mem=700G fits
mc_run env MEMCORE_DATALOADER_WORKERS=0 sbatch -N1 -n1 --gpus=8 --cpus-per-gpu=2 --mem=700G --wrap true
assert_eq 0 "$MC_RC" "MEMCORE_DATALOADER_WORKERS=0 with --mem=700G is submitted"
mc_run env MEMCORE_DATALOADER_WORKERS=0+0 sbatch -N1 -n1 --gpus=8 --cpus-per-gpu=2 --mem=700G --wrap true
assert_eq 0 "$MC_RC" "MEMCORE_DATALOADER_WORKERS=0+0 with --mem=700G is submitted"

# a value from the user's environment never reaches a shell unquoted
mc_run env "MEMCORE_MODEL_PARAMS=7B'; touch $MC_WORK/pwned; '" \
	sbatch "${JOB[@]}" --mem=400G --zero-stage=3 --offload=all --wrap true
assert_ne 0 "$MC_RC" "a hostile MEMCORE_MODEL_PARAMS is refused"
[ ! -e "$MC_WORK/pwned" ]; assert_eq 0 $? "the value was not run by a shell"

# --- the same job with enough memory: queued and runs ----------------------
id=$(mc_sbatch "${JOB[@]}" --mem=720G --wrap "echo fitting-job-ran")
assert_match "$id" '^[0-9]+$' "sbatch --mem=720G is queued (job id '$id')"
assert_eq COMPLETED "$(mc_wait_job "$id")" "the fitting job COMPLETES"
assert_file_contains "$(mc_job_out "$id")" "fitting-job-ran" "the fitting job ran"
mc_run srun "${JOB[@]}" --mem=720G echo srun-ran
assert_eq 0 "$MC_RC" "srun --mem=720G runs"
assert_contains "$MC_OUT" "srun-ran" "srun: the program ran"

# --memcore=warn: submitted with the explanation as a warning
mc_run sbatch --parsable "${JOB[@]}" --mem=400G --memcore=warn --wrap true
assert_eq 0 "$MC_RC" "--memcore=warn: submitted"
assert_contains "$MC_ERR" "--memcore=warn: the job is submitted anyway" "--memcore=warn: says so"
assert_contains "$MC_ERR" "712 GiB needed" "--memcore=warn: with the numbers"
mc_wait_job "${MC_OUT%%;*}" >/dev/null
# MEMCORE_MODE=warn, the variable form: what launch would run with a warning
# (memcore check's "launch": warned) is queued, not refused
MEMCORE_MODE=warn mc_run sbatch --parsable "${JOB[@]}" --mem=400G --wrap true
assert_eq 0 "$MC_RC" "MEMCORE_MODE=warn: submitted"
assert_contains "$MC_ERR" "--memcore=warn: the job is submitted anyway" "MEMCORE_MODE=warn: says so"
assert_not_contains "$MC_ERR" "refused at submission" "MEMCORE_MODE=warn: not refused"
mc_wait_job "${MC_OUT%%;*}" >/dev/null

# a partition memcore.conf does not describe is not checked here (the node
# checks at launch: 400 GiB is plenty for 8 T4s)
id=$(mc_sbatch -p other "${JOB[@]}" --mem=400G --wrap "echo other-ran")
assert_match "$id" '^[0-9]+$' "-p other (not in memcore.conf) is queued"
assert_eq COMPLETED "$(mc_wait_job "$id")" "-p other: COMPLETED"

# --- CPU-only: untouched -----------------------------------------------------
mc_run sbatch --parsable -N1 -n1 --mem=1G --wrap "echo cpu-ran"
assert_eq 0 "$MC_RC" "CPU-only sbatch is submitted"
assert_not_contains "$MC_ERR" "memcore" "CPU-only: nothing from memcore"
assert_eq COMPLETED "$(mc_wait_job "${MC_OUT%%;*}")" "CPU-only job COMPLETES"
mc_run srun -N1 -n1 --mem=1G echo cpu-step
assert_eq 0 "$MC_RC" "CPU-only srun runs"
assert_not_contains "$MC_ERR" "memcore" "CPU-only srun: nothing from memcore"

# --- contrib/examples: accepted as they are; refused as their comments say --
for f in "$MC_TOP"/contrib/examples/*.sbatch; do
	n=$(basename "$f")
	mc_run sbatch --test-only "$f"
	assert_eq 0 "$MC_RC" "sbatch --test-only $n"
	assert_not_contains "$MC_ERR" "needs more than" "$n: fits as its comment says"
	# the smaller --mem its comment says is refused
	small=$(sed -n 's/^#   memcore check .* --mem \([^ ]*\) .*-> refused$/\1/p' "$f" | head -n1)
	[ -n "$small" ] || continue
	mc_run sbatch --test-only --mem="$small" "$f"
	assert_ne 0 "$MC_RC" "$n with --mem=$small: refused at submission"
	assert_contains "$MC_ERR" "allocated (--mem=$small)" "$n with --mem=$small: the explanation"
done
assert_eq "" "$(queued)" "--test-only queued nothing"

# --- the filter as `make install` puts it -----------------------------------
# (PREFIX and SYSCONFDIR of the test's own: the installed filter calls the
# memcore and reads the memcore.conf it was installed with, not /usr/bin's
# and /etc/slurm's)
INST=$MC_WORK/inst
make -s -C "$MC_TOP" install PREFIX="$INST" SYSCONFDIR="$INST/etc" \
	SLURM_PLUGIN_DIR="$INST/lib" >"$MC_LOG_DIR/install.log" 2>&1 ||
	{ cat "$MC_LOG_DIR/install.log"; mc_die "make install failed"; }
assert_contains "$(grep '^local MEMCORE' "$INST/share/memcore/cli_filter.lua")" "\"$INST/bin/memcore\"" "make install: the filter names the memcore it installed"
assert_contains "$(grep '^local MEMCORE_CONF' "$INST/share/memcore/cli_filter.lua")" "\"$INST/etc/memcore.conf\"" "... and the memcore.conf of its SYSCONFDIR"
cp "$LOGIN_CONF" "$INST/etc/memcore.conf"
cp "$INST/share/memcore/cli_filter.lua" "$MC_CONF_DIR/cli_filter.lua"
touch -d '+2 seconds' "$MC_CONF_DIR/cli_filter.lua"   # cli_filter/lua reloads on a newer mtime
mc_run sbatch --parsable "${JOB[@]}" --mem=400G --wrap true
assert_ne 0 "$MC_RC" "through the installed filter: a misfit is refused at submission"
assert_contains "$MC_ERR" "allocated (--mem=400G)" "... with memcore's explanation"
assert_eq "" "$(queued)" "... and nothing is queued"

# --- a broken login-host setup never stops a submission ---------------------
# and says so on stderr, not only at -v: no memcore where the filter looks
# (a PREFIX the filter does not know), then a missing policy file
mv "$INST/bin/memcore" "$INST/bin/memcore.gone"
mc_run sbatch --parsable "${JOB[@]}" --mem=400G --wrap true
assert_eq 0 "$MC_RC" "no memcore where the filter looks: the job is submitted"
assert_contains "$MC_ERR" "memcore: submit-time check skipped: $INST/bin/memcore cannot be run" "... and sbatch says why on stderr, without -v"
scancel "${MC_OUT%%;*}" 2>/dev/null
mc_jobs_idle 30
mv "$INST/bin/memcore.gone" "$INST/bin/memcore"
sed -i "s|^local MEMCORE_CONF = .*|local MEMCORE_CONF = \"$MC_WORK/missing.conf\"|" "$MC_CONF_DIR/cli_filter.lua"
touch -d '+4 seconds' "$MC_CONF_DIR/cli_filter.lua"
mc_run sbatch --parsable "${JOB[@]}" --mem=400G --wrap true
assert_eq 0 "$MC_RC" "missing memcore.conf on the login host: the job is submitted"
assert_contains "$MC_ERR" "memcore: submit-time check skipped" "sbatch says the check was skipped, without -v"
assert_contains "$MC_ERR" "missing.conf" "and why"
scancel "${MC_OUT%%;*}" 2>/dev/null
mc_jobs_idle 30

# --- --help lists the options with their usage text -------------------------
for cmd in sbatch srun salloc; do
	mc_run "$cmd" --help
	assert_contains "$MC_OUT" "--dataloader-workers=N" "$cmd --help: --dataloader-workers"
	assert_contains "$MC_OUT" "DataLoader worker processes per GPU" "$cmd --help: its usage text"
	assert_contains "$MC_OUT" "--model-params=SIZE" "$cmd --help: --model-params"
	assert_contains "$MC_OUT" "--zero-stage=0-3" "$cmd --help: --zero-stage"
	assert_contains "$MC_OUT" "--offload=none|optimizer|all" "$cmd --help: --offload"
	assert_contains "$MC_OUT" "--memcore=explain|warn" "$cmd --help: --memcore"
done
assert_node_idle "node IDLE at the end"
