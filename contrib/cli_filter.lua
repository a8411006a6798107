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
  slurm.conf:  CliFilterPlugins=cli_filter/lua
The memcore.so plugin must be in the login host's plugstack.conf too, so
that sbatch/srun/salloc know --dataloader-workers and friends.
If the site already has a cli_filter.lua, paste the MEMCORE part below into
it and call memcore_pre_submit(options, pack_offset) from its
slurm_cli_pre_submit.

The same truth as `memcore check`: this script computes nothing itself
but the request's per-node figures, and hands them to
`memcore check --partition P --json`, which judges them against the
partition's nodes as slurmctld knows them (RealMemory, Sockets x
CoresPerSocket, ThreadsPerCore, Gres=gpu[:type]:N, every node shape of the
partition; CPUs are counted as threads as Slurm counts them), so a site
adds no node facts to memcore.conf. Only the GPU memory, which slurmctld
does not know, comes from memcore.conf: GpuMemory= (per partition line) or
GpuTypeMemory=h100:80G,a100:40G by the Gres type. A job is refused here
only when it fits no node of its partition; "fits on some nodes" lets it
through (Slurm may place it on one of them, and the launch check judges
the node it got).
memcore.conf's TopologyFile= or NodeRam=/NodeCores=/NodeGpus= on a
partition line still take precedence (sites without slurmctld access from
the login host). When slurmctld does not answer (`memcore check` exit 3),
or anything else keeps the check from running, the job is let through, and
the reason is logged (sbatch -v); the launch check remains.

Verified on Slurm 22.05 (Debian 12): SPANK options reach cli_filter/lua as
options.spank[<plugin name>][<option name>] (a string, nil when not given),
e.g. options.spank.memcore["dataloader-workers"]; options["spank:..."]
is nil (only slurm.json_cli_options() spells them "spank:NAME").
options.type is "sbatch", "salloc" or "srun". Unset numbers read as
cpus-per-task "0", cpus-per-gpu "0", ntasks-per-node "-2", nodes "1-0".
]]

-- ------------------------------------------------------------ settings ----
-- The memcore command and the policy file it reads (the site's, as the
-- plugin uses it on the nodes).
local MEMCORE = "/usr/bin/memcore"
local MEMCORE_CONF = "/etc/slurm/memcore.conf"
-- The partition of a job that names none. nil: the PartitionName line with
-- Default=YES in slurm.conf (SLURM_CONF, else /etc/slurm/slurm.conf).
local DEFAULT_PARTITION = nil
-- slurm.conf, read for Default=YES and the DefCpuPerGPU, DefMemPerGPU,
-- DefMemPerCPU and DefMemPerNode defaults of a job that gives none.
local SLURM_CONF = os.getenv("SLURM_CONF") or "/etc/slurm/slurm.conf"

-- -------------------------------------------------------------- memcore ----
local MEMCORE_OPTS = {
	-- option (SPANK, without --), its environment default; values go to
	-- memcore check as given ("8+2" DataLoader workers included), which
	-- parses and refuses them as the plugin does (mc_opts)
	{ "dataloader-workers", "MEMCORE_DATALOADER_WORKERS" },
	{ "model-params", "MEMCORE_MODEL_PARAMS" },
	{ "zero-stage", "MEMCORE_ZERO_STAGE" },
	{ "offload", "MEMCORE_OFFLOAD" },
	{ "largest-layer-params", "MEMCORE_LARGEST_LAYER_PARAMS" },
	{ "zero-init", "MEMCORE_ZERO_INIT" },
	{ "memcore", "MEMCORE_MODE" },
}

-- A word for the shell: single-quoted, so nothing of it is interpreted.
local function shquote(s)
	return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function int(s)
	if s == nil then return nil end
	s = tostring(s)
	if not s:match("^%d+$") then return nil end
	return tonumber(s)
end

local function ceil_div(a, b) return math.floor((a + b - 1) / b) end

-- GPUs in a --gpus/--gpus-per-node/--gpus-per-task value: "8", "a100:8",
-- "a100:4,v100:2" (summed). nil when it cannot be read.
local function gpu_count(spec)
	if spec == nil or spec == "" then return nil end
	local total = 0
	for item in tostring(spec):gmatch("[^,]+") do
		local n = int(item:match("([^:]+)$"))
		if n == nil then return nil end
		total = total + n
	end
	return total
end

-- GPUs per node in a --gres value as Slurm prints it: "gres:gpu:2",
-- "gres:gpu:t4:2", "gpu", "gres:gpu:2,gres:nic:1". 0 when no gpu.
local function gres_gpus(spec)
	local total = 0
	if spec == nil then return 0 end
	for item in tostring(spec):gmatch("[^,]+") do
		item = item:gsub("^gres[:/]", "")
		local name = item:match("^([^:]+)")
		if name == "gpu" then
			-- gpu, gpu:N, gpu:type, gpu:type:N (no count: one)
			total = total + (tonumber(item:match(":(%d+)$")) or 1)
		end
	end
	return total
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

-- slurm.conf: the default partition and the Def* memory/CPU defaults,
-- global and per partition (Include files are not followed).
local slurm_conf_cache
local function slurm_conf()
	if slurm_conf_cache then return slurm_conf_cache end
	local c = { global = {}, partitions = {}, default_partition = nil }
	local f = io.open(SLURM_CONF, "r")
	if f then
		for line in f:lines() do
			line = line:gsub("#.*", "")
			local kv = {}
			for k, v in line:gmatch("([%w]+)=(%S+)") do
				kv[k:lower()] = v
			end
			if kv.partitionname then
				for name in kv.partitionname:gmatch("[^,]+") do
					c.partitions[name] = kv
				end
				if kv.default and kv.default:upper() == "YES" then
					c.default_partition = kv.partitionname
				end
			elseif not kv.nodename then
				for k, v in pairs(kv) do c.global[k] = v end
			end
		end
		f:close()
	end
	slurm_conf_cache = c
	return c
end

-- A Def* key of slurm.conf for the partition, else the global one.
local function slurm_default(partition, key)
	local c = slurm_conf()
	local p = partition and c.partitions[partition]
	if p and p[key] then return p[key] end
	return c.global[key]
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

-- The request of one job (component) per node, as memcore check's flags.
-- Returns nil for a job without GPUs.
local function request_args(options, partition)
	local nodes = int(tostring(options.nodes or ""):match("^(%d+)")) or 1
	if nodes < 1 then nodes = 1 end
	local ntasks = int(options.ntasks) or 1
	if ntasks < 1 then ntasks = 1 end
	local ntpn = tonumber(options["ntasks-per-node"] or "")
	local tasks = (ntpn and ntpn > 0) and ntpn or ceil_div(ntasks, nodes)

	local g = 0
	local per_node = gpu_count(options["gpus-per-node"])
	local per_task = gpu_count(options["gpus-per-task"])
	local total = gpu_count(options.gpus)
	local gres = gres_gpus(options.gres)
	if per_node and per_node > 0 then
		g = per_node
	elseif gres > 0 then
		g = gres
	elseif per_task and per_task > 0 then
		g = per_task * tasks
	elseif total and total > 0 then
		g = ceil_div(total, nodes)
	end
	if g == 0 then return nil end
	-- a total (--gpus) over an unstated number of nodes: Slurm may spread
	-- it, so "no node has that many GPUs" is not ours to say
	local spread = total and total > 0 and not (per_node and per_node > 0)
		and gres == 0 and not (per_task and per_task > 0)
		and (options.nodes == nil or options.nodes == "" or
		     tostring(options.nodes):match("^1%-0$") ~= nil)

	local args = { "--gpus=" .. g, "--nodes=" .. nodes }
	-- The GPU type, when one names an NVIDIA MIG profile ("1g.10gb",
	-- "a100_3g.40gb"): memcore check sizes the RAM floor per slice.
	for _, spec in ipairs({ options.gres or "", options["gpus-per-node"] or "",
				options["gpus-per-task"] or "", options.gpus or "" }) do
		local mig = tostring(spec):match("(%d+[gG]%.%d+[gG][bB][%w+]*)")
		if mig then
			args[#args + 1] = "--gpu-type=" .. mig
			break
		end
	end
	local exclusive = options.exclusive
	local whole = exclusive ~= nil and exclusive ~= "unset"
		      and exclusive ~= "" and exclusive ~= "oversubscribe"

	-- CPUs (as Slurm counts them; memcore check turns them into cores)
	local cpg = int(options["cpus-per-gpu"]) or 0
	local cpt = int(options["cpus-per-task"]) or 0
	if cpg == 0 and cpt == 0 then
		cpg = int(slurm_default(partition, "defcpupergpu")) or 0
	end
	-- in the user's own option, so that the fix names it too
	if whole then
		-- the whole node: its cores
	elseif cpg > 0 and cpt == 0 then
		args[#args + 1] = "--cpus-per-gpu=" .. cpg
	elseif cpt > 0 and cpg == 0 then
		args[#args + 1] = "--cpus-per-task=" .. cpt
		args[#args + 1] = "--ntasks-per-node=" .. tasks
	else
		local cpus = math.max(cpg * g, math.max(cpt, 1) * tasks)
		args[#args + 1] = "--cpus=" .. cpus
	end

	-- memory per node (Slurm's units: MB without a suffix)
	if options.mem then
		args[#args + 1] = "--mem=" .. options.mem
	elseif options["mem-per-gpu"] then
		args[#args + 1] = "--mem-per-gpu=" .. options["mem-per-gpu"]
	elseif options["mem-per-cpu"] then
		args[#args + 1] = "--mem-per-cpu=" .. options["mem-per-cpu"]
	elseif not whole then
		local d = slurm_default(partition, "defmempergpu")
		if d then
			args[#args + 1] = "--mem-per-gpu=" .. d
		else
			d = slurm_default(partition, "defmempercpu")
			if d then
				args[#args + 1] = "--mem-per-cpu=" .. d
			else
				d = slurm_default(partition, "defmempernode")
				if d then args[#args + 1] = "--mem=" .. d end
			end
		end
		-- none of them: the job gets the whole node's memory
	end

	for _, o in ipairs(MEMCORE_OPTS) do
		local v = memcore_opt(options, o[1], o[2])
		if v ~= nil and o[1] ~= "memcore" then
			args[#args + 1] = "--" .. o[1] .. "=" .. v
		end
	end
	return args, spread
end

-- Run memcore check; returns the decoded JSON, or nil and the reason.
local function run_check(args, partition)
	local argv = { MEMCORE, "check", "--json", "--config=" .. MEMCORE_CONF }
	if partition then argv[#argv + 1] = "--partition=" .. partition end
	for _, a in ipairs(args) do argv[#argv + 1] = a end
	local words = {}
	for i, a in ipairs(argv) do words[i] = shquote(a) end
	local cmd = table.concat(words, " ") ..
		    " </dev/null 2>&1; echo \"memcore-rc=$?\""
	local p = io.popen(cmd, "r")
	if not p then return nil, "cannot run " .. MEMCORE end
	local out = p:read("*a") or ""
	p:close()
	local rc = tonumber(out:match("memcore%-rc=(%d+)%s*$"))
	out = out:gsub("memcore%-rc=%d+%s*$", "")
	if rc == 0 or rc == 1 then
		local v = json_decode(out)
		if type(v) == "table" then return v end
		return nil, "unreadable output of memcore check"
	end
	out = out:gsub("%s+$", "")
	if out == "" then out = "exit status " .. tostring(rc) end
	return nil, out, rc
end

local function say(lines)
	for _, l in ipairs(lines) do io.stderr:write(l, "\n") end
end

-- The check for one job component. Returns slurm.SUCCESS or slurm.ERROR.
function memcore_pre_submit(options, pack_offset)
	-- a step inside an allocation is not queued: the launch check has it
	if options.type == "srun" and os.getenv("SLURM_JOB_ID") then
		return slurm.SUCCESS
	end
	local parts = {}
	local plist = options.partition
	if plist == nil or plist == "" then
		plist = DEFAULT_PARTITION or slurm_conf().default_partition
	end
	if plist then
		for name in tostring(plist):gmatch("[^,]+") do
			parts[#parts + 1] = name
		end
	else
		parts[1] = false	-- the global policy
	end

	local refused = nil
	for _, part in ipairs(parts) do
		local args, spread = request_args(options, part or nil)
		if args == nil then
			return slurm.SUCCESS	-- no GPUs: untouched
		end
		local v, why, rc = run_check(args, part or nil)
		if v == nil then
			if rc == 2 and why:match("^memcore: %-%-") then
				-- the user's value (e.g. over MaxDataloaderWorkers)
				say({ why })
				return slurm.ERROR
			end
			-- rc 3: slurmctld did not answer; the launch check remains
			slurm.log_verbose("memcore: submit-time check skipped: %s",
					  why)
			return slurm.SUCCESS
		end
		-- the login host's own hardware says nothing of the nodes
		if v.node_source == "live" or v.mode == "off" then
			return slurm.SUCCESS
		end
		if spread and v.node_gpus and v.node_gpus > 0 and
		   v.gpus > v.node_gpus then
			return slurm.SUCCESS	-- spread over nodes we cannot predict
		end
		if v.fits then return slurm.SUCCESS end
		refused = refused or { v = v, part = part }
	end

	local v, part = refused.v, refused.part
	local lines = {}
	for _, l in ipairs(v.explanation or {}) do
		l = l:gsub("^memcore: this step", "memcore: this job")
		lines[#lines + 1] = l
	end
	local where = part and (" in partition " .. part) or ""
	local mode = memcore_opt(options, "memcore", "MEMCORE_MODE") or ""
	if v.mode == "warn" then
		lines[#lines + 1] = "memcore: Mode=warn" .. where ..
			": the job is submitted anyway"
		say(lines)
		return slurm.SUCCESS
	end
	if mode:match("warn") and v.allow_user_warn then
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
		if mode:match("warn") then
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
