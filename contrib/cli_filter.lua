--[[
contrib/cli_filter.lua - memcore's submit-time check for Slurm's cli_filter/lua.

Refuses a GPU job that memcore would refuse at launch before it is queued:
sbatch, salloc and srun (a new job; not a step inside an allocation) hand
their request to `memcore check --json` and, when it says refused, print the
explanation and return slurm.ERROR, so nothing is queued and the user does
not wait in the queue for a refusal.

This is a convenience. The enforcement stays the SPANK plugin at launch
(memcore.so in plugstack.conf): a cli_filter runs in the user's own
process and can be bypassed (another client, an edited SLURM_CONF).
Slurm's cli_filter docs say the same: "not a security mechanism".

Install on login hosts (Debian: cli_filter_lua.so is in
slurm-wlm-basic-plugins, built against liblua5.1-0):
  cp cli_filter.lua /etc/slurm/cli_filter.lua    # next to slurm.conf
(the one `make install` puts in DATADIR names its own BINDIR/memcore and
SYSCONFDIR/memcore.conf below; a copy of contrib/ names /usr/bin and
/etc/slurm)
  slurm.conf:  CliFilterPlugins=cli_filter/lua
The memcore.so plugin must be in the login host's plugstack.conf too, so
that sbatch/srun/salloc know --dataloader-workers and friends.
If the site already has a cli_filter.lua, paste the MEMCORE part below into
it and call memcore_pre_submit(options, pack_offset) from its
slurm_cli_pre_submit.

The same truth as `memcore check`, and nothing computed here: the script
hands the job's options over as Slurm's cli_filter has them
(slurm.json_cli_options(options): every option the user set, on the
command line, in #SBATCH lines or in SBATCH_*/SLURM_* variables, plus
memcore's own as "spank:NAME") and options.type to
`memcore check --slurm-options JSON --slurm-command TYPE --json
[--partition P]` and prints what it says; memcore's MEMCORE_* variables
are read as the job will have them (its --export, --export-file). memcore check predicts the allocation as Slurm computes it
(--mem/--mem-per-gpu/--mem-per-cpu, the partition's DefMemPerGPU,
DefCpuPerGPU, DefMemPerCPU/DefMemPerNode and MaxMemPerCPU as slurmctld
resolved them, PartitionName=DEFAULT lines and Include files included,
every --exclusive form, --mem=0, typed GPUs, GPUs spread over nodes) on
every node shape of the partition as slurmctld knows it (RealMemory,
Sockets x CoresPerSocket, ThreadsPerCore, Gres=gpu[:type]:N), and judges
it with the plugin's own judgement (memcore(8) SUBMISSION). Only the GPU
memory, which slurmctld does not know, comes from memcore.conf:
GpuMemory= (per partition line) or GpuTypeMemory=h100:80G,a100:40G by the
Gres type. A job is refused here when it fits no node of its
partition. One that fits some nodes of its partition and not others
Slurm may start it on is refused too, with the fix that keeps it off
them (--exclude, or what sizes it for them): Slurm picks the node, not
memcore. A partition list (-p a,b) that holds partitions the job does not
fit is narrowed to those it fits, and the user is told. A job is let
through by a partition with nodes memcore cannot judge (powered-down cloud nodes that
slurmctld hides without PrivateData=cloud): sbatch -v says why. Each of
the job's Slurm options that memcore does not model at submission
(--core-spec, --constraint, ...: memcore(8), "Slurm's options and settings
at submission") is judged at launch, and sbatch -v says that too.
memcore.conf's TopologyFile= or NodeRam=/NodeCores=/NodeGpus= on a
partition line still take precedence (sites without slurmctld access from
the login host). When slurmctld does not answer (`memcore check` exit 3),
or anything else keeps the check from running, the job is let through, and
the reason is said on stderr ("memcore: submit-time check skipped: ...",
with or without -v); the launch check remains.

Verified on Slurm 22.05 (Debian 12): SPANK options reach cli_filter/lua as
options.spank[<plugin name>][<option name>] (a string, nil when not given),
e.g. options.spank.memcore["dataloader-workers"]; options["spank:..."]
is nil (only slurm.json_cli_options() spells them "spank:NAME").
options.type is "sbatch", "salloc" or "srun". Unset numbers read as
cpus-per-task "0", cpus-per-gpu "0", ntasks-per-node "-2", nodes "1-0".
]]

-- ------------------------------------------------------------ settings ----
-- The memcore command and the policy file it reads (the site's, as the
-- plugin uses it on the nodes). `make install` writes its own BINDIR and
-- SYSCONFDIR here; the .deb and the RPM install /usr/bin and /etc/slurm.
local MEMCORE = "/usr/bin/memcore"
local MEMCORE_CONF = "/etc/slurm/memcore.conf"
-- The partition of a job that names none. nil: slurmctld's default one
-- (memcore check asks it).
local DEFAULT_PARTITION = nil

-- -------------------------------------------------------------- memcore ----
-- A word for the shell: single-quoted, so nothing of it is interpreted.
local function shquote(s)
	return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- A small JSON reader: enough for memcore check's one object.
local function json_decode(s)
	local pos = 1
	local value
	local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
	local function str()
		local out, i = {}, pos + 1
		while true do
			local c = s:sub(i, i)
			if c == "" then error("unterminated string") end
			if c == '"' then pos = i + 1; return table.concat(out) end
			if c == "\\" then
				local e = s:sub(i + 1, i + 1)
				local map = { b = "\b", f = "\f", n = "\n", r = "\r",
					      t = "\t", ['"'] = '"', ["\\"] = "\\",
					      ["/"] = "/" }
				if map[e] then
					out[#out + 1] = map[e]; i = i + 2
				elseif e == "u" then
					local code = tonumber(s:sub(i + 2, i + 5), 16) or 63
					out[#out + 1] = code < 128 and string.char(code) or "?"
					i = i + 6
				else
					error("bad escape")
				end
			else
				out[#out + 1] = c; i = i + 1
			end
		end
	end
	function value()
		ws()
		local c = s:sub(pos, pos)
		if c == "{" then
			local o = {}
			pos = pos + 1; ws()
			if s:sub(pos, pos) == "}" then pos = pos + 1; return o end
			while true do
				ws()
				if s:sub(pos, pos) ~= '"' then error("expected key") end
				local k = str(); ws()
				if s:sub(pos, pos) ~= ":" then error("expected :") end
				pos = pos + 1
				o[k] = value(); ws()
				local d = s:sub(pos, pos); pos = pos + 1
				if d == "}" then return o end
				if d ~= "," then error("expected , or }") end
			end
		elseif c == "[" then
			local a = {}
			pos = pos + 1; ws()
			if s:sub(pos, pos) == "]" then pos = pos + 1; return a end
			while true do
				a[#a + 1] = value(); ws()
				local d = s:sub(pos, pos); pos = pos + 1
				if d == "]" then return a end
				if d ~= "," then error("expected , or ]") end
			end
		elseif c == '"' then
			return str()
		elseif s:sub(pos, pos + 3) == "true" then
			pos = pos + 4; return true
		elseif s:sub(pos, pos + 4) == "false" then
			pos = pos + 5; return false
		elseif s:sub(pos, pos + 3) == "null" then
			pos = pos + 4; return nil
		else
			local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
			if not num or num == "" then error("unexpected input") end
			pos = pos + #num
			return tonumber(num)
		end
	end
	local ok, v = pcall(value)
	if not ok then return nil end
	return v
end

-- The user's memcore option: the command line, else its variable.
local function memcore_opt(options, name, env)
	local sp = options.spank
	local v = type(sp) == "table" and type(sp.memcore) == "table"
		  and sp.memcore[name] or nil
	if v == nil or v == "" then v = os.getenv(env) end
	if v == "" then v = nil end
	return v
end

-- Run memcore check; returns the decoded JSON, or nil and the reason.
local function run_check(job, partition, cmd)
	local argv = { MEMCORE, "check", "--json", "--config=" .. MEMCORE_CONF,
		       "--slurm-options=" .. job }
	-- whose --export rules give the job its MEMCORE_* variables
	if cmd == "sbatch" or cmd == "srun" or cmd == "salloc" then
		argv[#argv + 1] = "--slurm-command=" .. cmd
	end
	if partition then argv[#argv + 1] = "--partition=" .. partition end
	local words = {}
	for i, a in ipairs(argv) do words[i] = shquote(a) end
	-- stdout is the JSON; stderr (a message, a cache note) goes apart
	local errfile = os.tmpname()
	local cmd = table.concat(words, " ") .. " </dev/null 2>" ..
		    shquote(errfile) .. "; echo \"memcore-rc=$?\""
	local p = io.popen(cmd, "r")
	if not p then
		os.remove(errfile)
		return nil, "cannot run " .. MEMCORE
	end
	local out = p:read("*a") or ""
	p:close()
	local ef = io.open(errfile, "r")
	local err = ef and ef:read("*a") or ""
	if ef then ef:close() end
	os.remove(errfile)
	local rc = tonumber(out:match("memcore%-rc=(%d+)%s*$"))
	out = out:gsub("memcore%-rc=%d+%s*$", "")
	if rc == 0 or rc == 1 then
		local v = json_decode(out)
		if type(v) == "table" then return v end
		return nil, "unreadable output of memcore check"
	end
	err = err:gsub("%s+$", "")
	if err == "" then err = out:gsub("%s+$", "") end
	if err == "" then err = "exit status " .. tostring(rc) end
	if rc == 126 or rc == 127 then	-- the shell's: not there, not run
		err = MEMCORE .. " cannot be run (" .. err .. "): MEMCORE in " ..
		      "cli_filter.lua names the memcore command"
	end
	return nil, err, rc
end

local function say(lines)
	for _, l in ipairs(lines) do io.stderr:write(l, "\n") end
end

-- The check could not run: the job goes on unchecked at submission, and
-- the user reads why on stderr (not only at -v: a site whose filter
-- cannot find memcore would otherwise queue every misfit in silence).
local function skipped(why)
	say({ "memcore: submit-time check skipped: " .. why ..
	      " (the job is submitted; memcore checks it at launch)" })
	return slurm.SUCCESS
end

-- memcore check's lines for the job's Slurm options it does not model at
-- submission ("memcore: --core-spec is not modelled at submission: ..."),
-- at sbatch -v for a job that is queued (a refused or warned job shows
-- them with the rest of its explanation). Once, not per partition.
local function say_not_modelled(v, said)
	if said.done then return end
	said.done = true
	for _, l in ipairs(v.explanation or {}) do
		if l:match("^memcore: %-%-[%w%-]+ is not modelled at submission: ") then
			slurm.log_verbose("%s", l)
		end
	end
end

-- The check for one job component. Returns slurm.SUCCESS or slurm.ERROR.
function memcore_pre_submit(options, pack_offset)
	-- a step inside an allocation is not queued: the launch check has it
	if options.type == "srun" and os.getenv("SLURM_JOB_ID") then
		return slurm.SUCCESS
	end
	if type(slurm.json_cli_options) ~= "function" then
		return skipped("this Slurm has no slurm.json_cli_options")
	end
	local job = slurm.json_cli_options(options)
	if type(job) ~= "string" or job == "" then
		return skipped("slurm.json_cli_options gave nothing")
	end
	local parts = {}
	local plist = options.partition
	if plist == nil or plist == "" then plist = DEFAULT_PARTITION end
	if plist then
		for name in tostring(plist):gmatch("[^,]+") do
			parts[#parts + 1] = name
		end
	else
		parts[1] = false	-- slurmctld's default partition
	end

	local refused, warned = nil, nil
	local said = {}
	local fit, nofit = {}, {}	-- the listed partitions it fits, not
	for _, part in ipairs(parts) do
		local v, why, rc = run_check(job, part or nil, options.type)
		if v == nil then
			if rc == 2 and why:match("^memcore: %-%-") then
				-- the user's value (e.g. over MaxDataloaderWorkers)
				say({ why })
				return slurm.ERROR
			end
			-- rc 3: slurmctld did not answer; 127: no memcore at
			-- MEMCORE; the launch check remains
			return skipped(why)
		end
		if v.gpus == 0 then
			return slurm.SUCCESS	-- no GPUs: untouched
		end
		-- the login host's own hardware says nothing of the nodes
		if v.node_source == "live" or v.mode == "off" or
		   v.launch == "unchecked" then
			return slurm.SUCCESS
		end
		if v.let_through or v.fits then
			if v.let_through then
				slurm.log_verbose("%s", v.let_through)
			end
			say_not_modelled(v, said)
			fit[#fit + 1] = part
		else
			-- what launch would do (memcore check's "launch", the
			-- plugin's own decision): a job it would run with a
			-- warning is queued
			if v.launch == "warned" then
				warned = warned or { v = v, part = part }
			end
			refused = refused or { v = v, part = part }
			nofit[#nofit + 1] = { part = part, v = v }
		end
	end
	-- Slurm starts a job of a partition list in whichever listed
	-- partition can run it first, not in one memcore picks: a list
	-- holding partitions the job does not fit is narrowed to those it
	-- fits, and the user is told.
	if #fit > 0 then
		if #nofit > 0 then
			local names = {}
			for i, n in ipairs(nofit) do
				local first = (n.v.explanation or {})[1] or ""
				names[i] = n.part .. " (" ..
					first:gsub("^memcore: ", "") .. ")"
			end
			options.partition = table.concat(fit, ",")
			say({ "memcore: the job does not fit partition " ..
			      table.concat(names, "; ") .. ": submitted to " ..
			      "--partition=" .. options.partition .. " only" })
		end
		return slurm.SUCCESS
	end

	local v, part = (warned or refused).v, (warned or refused).part
	local lines = {}
	for _, l in ipairs(v.explanation or {}) do
		l = l:gsub("^memcore: this step", "memcore: this job")
		lines[#lines + 1] = l
	end
	local where = part and (" in partition " .. part)
		or (v.partition and (" in partition " .. v.partition)) or ""
	-- the job's own --memcore=warn, as the job will have it (its
	-- --export); an older memcore check does not say: the options
	local user_warn = v.user_warn
	if user_warn == nil then
		local mode = memcore_opt(options, "memcore", "MEMCORE_MODE") or ""
		user_warn = mode:match("warn") ~= nil
	end
	local launch = v.launch	-- runs, warned, refused, unchecked
	if launch == "warned" and v.mode == "warn" then
		lines[#lines + 1] = "memcore: Mode=warn" .. where ..
			": the job is submitted anyway"
		say(lines)
		return slurm.SUCCESS
	end
	if launch == "warned" then
		lines[#lines + 1] = "memcore: --memcore=warn: the job is " ..
			"submitted anyway"
		say(lines)
		return slurm.SUCCESS
	end
	-- Whether the user may downgrade it, as the refusal at launch says.
	if v.allow_user_warn then
		lines[#lines + 1] = "memcore: --memcore=warn is allowed here " ..
			"(AllowUserWarn=yes): it would submit the job anyway"
	else
		-- Once, about this refusal: a user who never asked for warn
		-- must not read it as a mistake in their command.
		if user_warn then
			lines[#lines + 1] = "memcore: --memcore=warn cannot " ..
				"turn this refusal into a warning at this " ..
				"site (AllowUserWarn=no)"
		else
			lines[#lines + 1] = "memcore: this refusal cannot be " ..
				"turned into a warning at this site " ..
				"(AllowUserWarn=no)"
		end
	end
	lines[#lines + 1] = "memcore: refused at submission" .. where ..
		": nothing was queued"
	say(lines)
	return slurm.ERROR
end

-- --------------------------------------------------- cli_filter entries ----
-- All three must exist for cli_filter/lua to load the script.
function slurm_cli_setup_defaults(options, early)
	return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, pack_offset)
	return memcore_pre_submit(options, pack_offset)
end

function slurm_cli_post_submit(offset, job_id, step_id)
	return slurm.SUCCESS
end
