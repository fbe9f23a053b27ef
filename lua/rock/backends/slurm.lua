--- rock.backends.slurm: a sandbox placed by Slurm. Each sandbox is one
-- Slurm job (sbatch --parsable) asking --cpus-per-task = its cpus and
-- --mem = its memory (ROCK's defaults where not given: 2, 8g), plus the user's partition, account, qos,
-- constraint, nodelist, time and sbatch_args (the escape hatch):
--   rock.sandbox.start{ backend = "slurm", image = ..., cpus = 4, memory = "16g",
--     slurm = { partition = "cpu", node_backend = "podman", shared_dir = "/shared/rock" } }
-- Its --time is slurm.time, else the lease (auto_clear_seconds) plus
-- TIME_MARGIN, else the partition's default; a job with a time limit
-- gets a --deadline, so Slurm drops it from the queue once its client
-- would have given up. The job runs a one-sandbox `rock serve --once` on
-- its node (node_backend auto|docker|podman|local), which writes its URL
-- and a token it made (owner-only) to <shared_dir>/<id>.addr; until then
-- the start waits, the phase "queued" saying Slurm's state and reason
-- (PENDING (Resources)), up to startup_timeout, then cancels the job. The
-- waiting client touches <id>.wait: a job that starts after its client
-- stopped waiting (died) exits unserved. From there the sandbox is that
-- server's remote sandbox (remote.lua). stop stops it there and scancels
-- the job. A job that ends (scancel from outside, its node DOWN, its time
-- limit) makes the sandbox gone and its calls fail node_lost. Slurm's
-- SIGTERM reaches every process of the job: its server stops its sandbox
-- and exits (the script only waits for it). `rock gc` cancels the jobs of
-- a dead client from their records (release; a record stays while
-- scancel fails); the job's name is rock-<id>, its comment
-- rock-owner=<owner>. Slurm's own CLI and SLURM_CONF (or slurm.conf)
-- are used as the user has them.
-- Inside an allocation the user holds (slurm.allocation = its job id,
-- e.g. $SLURM_JOB_ID from salloc), each sandbox is instead an srun step
-- of it (srun --jobid --exact, the same cpus, memory and time, the
-- user's srun_args): the same script and server, placed within the
-- allocation by Slurm; a step that does not fit waits. The srun is this
-- host's child in a session of its own (a terminal's Ctrl-C is this
-- host's to handle); its end is the step's (node_lost). A step is ended
-- as Slurm ends a job (end_step: SIGTERM, then SIGKILL, which is all a
-- plain scancel of a step sends); gc does so for a dead client and ends
-- its srun (pid and start time recorded). docs/clusters.md.
local uv = require "luv"
local json = require "rock.json"
local errors = require "rock.errors"
local task = require "rock.task"
local state = require "rock.state"
local log = require "rock.log"
local remote = require "rock.backends.remote"

-- image: the node's engine runs it (a local node backend only records it)
local M = { caps = { image = true, upload_stream = true, download_stream = true, served_elsewhere = true } }

M.POLL = 0.1 -- seconds between looks for the address file
M.ASK_EVERY = 1 -- seconds between squeue calls while a start waits
M.TIME_MARGIN = 600 -- seconds a job's time limit adds to its lease: its sandbox's start and stop
M.DEADLINE_SLACK = 30 -- seconds Slurm's deadline leaves after the client's own (its timeout is the client's)
M.WAITING_FRESH = 60 -- seconds: a job that finds <id>.wait older than this exits unserved
M.SERVE_WAIT = 300 -- seconds a job's server waits for the start request past its address (and 60 more)
-- seconds a step has from its SIGTERM to its SIGKILL (a job has Slurm's
-- KillWait): its server stops its sandbox (an engine under load may take
-- a while), then its script removes its state dir; a SIGKILL would leave it
M.STEP_GRACE = 20

local ENDED = { COMPLETED = true, CANCELLED = true, FAILED = true, TIMEOUT = true, NODE_FAIL = true,
  PREEMPTED = true, OUT_OF_MEMORY = true, BOOT_FAIL = true, DEADLINE = true, REVOKED = true, SPECIAL_EXIT = true }

local OPTS = { partition = "string", account = "string", qos = "string", constraint = "string",
  nodelist = "string", time = "string", sbatch_args = "table", node_backend = "string", shared_dir = "string",
  conf = "string", rock = "string", node_address = "string", allocation = "string", srun_args = "table" }
-- what a step takes from its allocation rather than asks for
local NOT_FOR_STEPS = { "partition", "account", "qos", "constraint", "sbatch_args" }

local function check(so)
  if so == nil then return {} end
  if type(so) ~= "table" then errors.raise("invalid_argument", "sandbox.start: 'slurm' must be a table") end
  for k, v in pairs(so) do
    if not OPTS[k] then
      errors.raise("invalid_argument", "sandbox.start: unknown slurm option '" .. tostring(k) .. "'")
    end
    if type(v) ~= OPTS[k] and not ((k == "time" or k == "allocation") and math.type(v) == "integer") then
      errors.raise("invalid_argument", string.format("sandbox.start: slurm.%s must be a %s", k, OPTS[k]))
    end
  end
  if so.allocation ~= nil then
    if not tostring(so.allocation):match("^%d+$") then
      errors.raise("invalid_argument", "sandbox.start: slurm.allocation must be a job id, e.g. $SLURM_JOB_ID")
    end
    for _, k in ipairs(NOT_FOR_STEPS) do
      if so[k] ~= nil then
        errors.raise("invalid_argument", "sandbox.start: slurm." .. k .. " is for a job of its own: a step of " ..
          "allocation " .. tostring(so.allocation) .. " has its allocation's (srun_args are the escape hatch)")
      end
    end
  elseif so.srun_args ~= nil then
    errors.raise("invalid_argument", "sandbox.start: slurm.srun_args are for a step of an allocation (slurm.allocation)")
  end
  local nb = so.node_backend
  if nb and not ({ auto = true, docker = true, podman = true, ["local"] = true })[nb] then
    errors.raise("invalid_argument", "sandbox.start: slurm.node_backend must be auto, docker, podman or local")
  end
  return so
end

-- The environment of Slurm's commands: ours, with SLURM_CONF when given.
local function env_of(conf)
  if not conf then return nil end
  local env = {}
  for k, v in pairs(uv.os_environ()) do if k ~= "SLURM_CONF" then env[#env + 1] = k .. "=" .. v end end
  env[#env + 1] = "SLURM_CONF=" .. conf
  return env
end

--- The recipes' Slurm flags (rock.flags specs; recipes/swe_agent.lua
--- --backend slurm --partition P ...) and the start options they make.
M.QUEUE_TIMEOUT = 86400 -- a recipe's start may wait in Slurm's queue this long by default
M.FLAGS = {
  queue_timeout = { type = "number", help = "--backend slurm: seconds a sandbox start may wait, " ..
    "Slurm's queue included (default " .. M.QUEUE_TIMEOUT .. ")" },
  partition = { help = "--backend slurm: the partition its jobs go to" },
  account = { help = "--backend slurm: the account they are charged to" },
  qos = { help = "--backend slurm: their quality of service" },
  constraint = { help = "--backend slurm: node features they need" },
  nodelist = { help = "--backend slurm: the nodes they may run on, e.g. n[1-4]" },
  sbatch_arg = { type = "list", help = "--backend slurm: one more sbatch argument" },
  allocation = { help = "--backend slurm: each sandbox an srun step of this allocation " ..
    "(a job id the user holds, e.g. $SLURM_JOB_ID), not a job of its own" },
  srun_arg = { type = "list", help = "--backend slurm --allocation: one more srun argument" },
  shared_dir = { help = "--backend slurm: a directory this host and the nodes share" },
  node_backend = { help = "--backend slurm: the nodes' engine, auto|docker|podman|local (default auto)" },
}
local FLAG_KEYS = { "partition", "account", "qos", "constraint", "nodelist", "shared_dir", "node_backend", "allocation" }

--- The rock.sandbox.start options parsed FLAGS make: {slurm = {...},
--- startup_timeout = queue_timeout} for backend "slurm", {} for another;
--- raises invalid_argument when one is given and backend is not
--- "slurm", or node_backend is not one of the four.
function M.from_flags(o, backend)
  local so, given = {}, o.queue_timeout ~= nil and "queue_timeout" or nil
  for _, k in ipairs(FLAG_KEYS) do
    if o[k] ~= nil then so[k], given = o[k], given or k end
  end
  if o.sbatch_arg and #o.sbatch_arg > 0 then so.sbatch_args, given = o.sbatch_arg, given or "sbatch_arg" end
  if o.srun_arg and #o.srun_arg > 0 then so.srun_args, given = o.srun_arg, given or "srun_arg" end
  if backend ~= "slurm" then
    if given then errors.raise("invalid_argument", "--" .. given:gsub("_", "-") .. " is for --backend slurm") end
    return {}
  end
  return { slurm = check(so), startup_timeout = o.queue_timeout or M.QUEUE_TIMEOUT }
end

--- Run argv (a Slurm command) without blocking the loop, stdin the bytes
--- fed to it; returns its stdout, stderr and exit code (127: not found).
function M.run(conf, argv, stdin)
  return require("rock.proc").run(argv, { stdin = stdin, env = env_of(conf) })
end

local function trim(s) return (tostring(s or ""):gsub("^%s+", ""):gsub("%s+$", "")) end

--- Slurm's view of job id: {state=, reason=, node=}; state "GONE" when
--- Slurm no longer knows it; nil and why when squeue does not answer.
function M.job(conf, id)
  local out, err, code = M.run(conf, { "squeue", "-h", "-t", "all", "-j", tostring(id), "-o", "%T|%r|%N" })
  if code ~= 0 then
    if err:find("Invalid job id", 1, true) then return { state = "GONE", reason = "purged" } end
    return nil, trim(err)
  end
  local st, reason, node = out:match("^([^|\n]*)|([^|\n]*)|([^\n]*)")
  if not st then return { state = "GONE", reason = "not listed" } end
  return { state = st, reason = reason, node = node }
end

-- sinfo's compact states of a node that takes no new work
local NO_WORK = { down = true, drain = true, drng = true, fail = true, failg = true, futr = true,
  inval = true, maint = true, unk = true }

--- How many nodes the jobs of slurm options so may land on: the nodes of
--- so.partition (else the default partition), within so.nodelist, that
--- take work, as sinfo says; for a step, its allocation's nodes (squeue).
--- nil and why when Slurm does not say (inside a task).
function M.nodes(so)
  so = so or {}
  local conf = so.conf or os.getenv("SLURM_CONF")
  if so.allocation then
    local out, err, code = M.run(conf, { "squeue", "-h", "-j", tostring(so.allocation), "-o", "%D" })
    local n = code == 0 and math.tointeger(tonumber(trim(out)))
    if not n then return nil, trim(err) ~= "" and trim(err) or "squeue: no such allocation" end
    return n
  end
  local argv = { "sinfo", "-h", "-N", "-o", "%N|%P|%t" }
  if so.nodelist then argv[#argv + 1] = "--nodes=" .. so.nodelist end
  local out, err, code = M.run(conf, argv)
  if code ~= 0 then return nil, trim(err) end
  local seen, n = {}, 0
  for name, part, st in out:gmatch("([^|\n]+)|([^|\n]+)|([^\n]+)") do
    local here = so.partition and part:gsub("%*$", "") == so.partition or (not so.partition and part:sub(-1) == "*")
    local mode = trim(st)
    if here and not seen[name] and not NO_WORK[mode:gsub("[^%a]+$", "")] and not mode:find("*", 1, true) then
      seen[name], n = true, n + 1
    end
  end
  if n == 0 then return nil, "sinfo lists no node taking work" .. (so.partition and (" in " .. so.partition) or "") end
  return n
end

local function sh_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- What the sandbox reserves, as its node's `rock serve` counts it:
-- {cpus, memory (bytes)}, ROCK's defaults where not given (admission.lua).
local function need(opts)
  return require("rock.serve.admission").need{ cpus = opts.cpus, memory = (opts.limits or {}).memory }
end

-- Slurm's time ("M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S"; a
-- number: minutes) in seconds; nil for none it can read (UNLIMITED).
local function time_seconds(t)
  if math.type(t) == "integer" then return t * 60 end
  local d, rest = tostring(t):match("^(%d+)%-(.+)$")
  local p = {}
  for x in ((rest or tostring(t)) .. ":"):gmatch("([^:]*):") do
    if not x:match("^%d+$") then return nil end
    p[#p + 1] = tonumber(x)
  end
  if d then
    if #p > 3 then return nil end
    return ((tonumber(d) * 24 + p[1]) * 60 + (p[2] or 0)) * 60 + (p[3] or 0)
  end
  if #p == 1 then return p[1] * 60 elseif #p == 2 then return p[1] * 60 + p[2] end
  if #p == 3 then return (p[1] * 60 + p[2]) * 60 + p[3] end
  return nil
end
M.time_seconds = time_seconds

-- The value of option long (or its short form) among the user's args
-- (sbatch_args, srun_args): "--time=X", "--time X", "-tX", "-t X".
local function arg_value(args, long, short)
  for i, a in ipairs(args or {}) do
    a = tostring(a)
    if a == "--" .. long or (short and a == "-" .. short) then return tostring(args[i + 1] or "") end
    local v = a:match("^%-%-" .. long .. "=(.*)$") or (short and a:match("^%-" .. short .. "(.+)$"))
    if v then return v end
  end
end

--- The time limit a sandbox's job (or step) asks: {arg = its --time (nil:
--- none of ours), seconds = the limit (nil: unknown)}: slurm.time, or
--- one in the user's args (they win), else its lease (auto_clear_seconds)
--- plus TIME_MARGIN in whole minutes, else none (the partition's default).
function M.time_limit(so, opts)
  local user = arg_value(so.allocation and so.srun_args or so.sbatch_args, "time", "t")
  if user then return { seconds = time_seconds(user) } end
  if so.time ~= nil then return { arg = tostring(so.time), seconds = time_seconds(so.time) } end
  if opts.auto_clear_seconds then
    local min = math.ceil((opts.auto_clear_seconds + M.TIME_MARGIN) / 60)
    return { arg = tostring(min), seconds = min * 60 }
  end
  return {}
end

-- The job's (or step's) script: rock serve --once on this node; its URL
-- and token to the address file (owner-only, written whole: a temp file
-- renamed). A step first names itself (J.S) in the step file, so that it
-- can be cancelled from the moment it exists. A job (or step) whose
-- client stopped waiting (<id>.wait older than WAITING_FRESH, or gone)
-- ends there, unserved. Slurm signals every process of the job (scancel,
-- its time limit): rock serve has its SIGTERM and stops its sandbox, so
-- the trap only waits for it (a second TERM would make it exit at once,
-- the sandbox left: a container on its node).
local function script(sb, so, opts)
  local n = need(opts)
  local job = so.allocation and "$SLURM_JOB_ID.$SLURM_STEP_ID" or "$SLURM_JOB_ID"
  local serve = { sh_quote(so.rock or uv.exepath()), "serve", "--host", "0.0.0.0", "--port", "0",
    "--backend", so.node_backend or "auto",
    "--once", tostring(math.floor(math.min(opts.startup_timeout, M.SERVE_WAIT)) + 60),
    "--budget-cpu", tostring(n.cpus), "--max-starting", "1",
    "--budget-memory-gb", string.format("%.6f", n.memory / (1 << 30) + 1e-6) }
  if opts.auto_clear_seconds then
    serve[#serve + 1] = "--lease"
    serve[#serve + 1] = tostring(opts.auto_clear_seconds)
  end
  return table.concat({
    "#!/bin/bash",
    "# rock: one sandbox (" .. sb.id .. ") served by `rock serve --once` (lua/rock/backends/slurm.lua)",
    "umask 077",
    so.allocation and ("printf '%s\\n' \"" .. job .. "\" > " .. sh_quote(sb.step_file)) or "",
    "age=$(( $(date +%s) - $(stat -c %Y " .. sh_quote(sb.wait_file) .. " 2>/dev/null || echo 0) ))",
    "if [ \"$age\" -gt " .. M.WAITING_FRESH .. " ]; then",
    "  echo \"rock: sandbox " .. sb.id .. ": its client stopped waiting (${age} s ago): not served\" >&2",
    "  exit 0",
    "fi",
    "addr=" .. sh_quote(sb.addr_file),
    "host=" .. (so.node_address and sh_quote(so.node_address) or "$(hostname -f 2>/dev/null || hostname)"),
    "export ROCK_HOME=\"${TMPDIR:-/tmp}/rock-slurm-" .. job .. "-" .. sb.id .. "\"",
    "export ROCK_API_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')",
    -- set before anything is made: a TERM that comes while the server
    -- starts (a step started just as gc ends its srun) removes the dir too
    "pid=",
    "trap '[ -n \"$pid\" ] && wait $pid; rm -rf \"$ROCK_HOME\"; exit 143' TERM INT",
    "mkdir -p \"$ROCK_HOME\"",
    "log=\"$ROCK_HOME/serve.out\"",
    table.concat(serve, " ") .. " >\"$log\" 2>&1 &",
    "pid=$!",
    "url=",
    "for _ in $(seq 1 600); do",
    "  url=$(sed -n 's/^rock serve: listening on //p' \"$log\")",
    "  [ -n \"$url\" ] && break",
    "  kill -0 $pid 2>/dev/null || { cat \"$log\" >&2; rm -rf \"$ROCK_HOME\"; exit 1; }",
    "  sleep 0.05",
    "done",
    "[ -n \"$url\" ] || { echo 'rock serve did not listen in 30 s' >&2; cat \"$log\" >&2; exit 1; }",
    "printf '{\"url\":\"http://%s:%s\",\"token\":\"%s\",\"node\":\"%s\",\"job\":\"%s\"}\\n' \"$host\" " ..
      "\"${url##*:}\" \"$ROCK_API_TOKEN\" \"$SLURMD_NODENAME\" \"" .. job .. "\" > \"$addr.tmp\" && mv \"$addr.tmp\" \"$addr\"",
    "wait $pid",
    "rc=$?",
    "tail -n 20 \"$log\" >&2",
    "rm -rf \"$ROCK_HOME\"",
    "exit $rc",
    "",
  }, "\n")
end

local function sbatch_argv(sb, so, opts)
  local a = { "sbatch", "--parsable", "--no-requeue", "--job-name=rock-" .. sb.id,
    "--comment=rock-owner=" .. state.owner_label(state.me()), "--output=" .. sb.out_file,
    "--cpus-per-task=" .. tostring(math.max(1, math.ceil(need(opts).cpus))),
    "--mem=" .. math.ceil(need(opts).memory / (1 << 20)) .. "M" }
  for _, k in ipairs({ "partition", "account", "qos", "constraint", "nodelist" }) do
    if so[k] ~= nil then a[#a + 1] = "--" .. k .. "=" .. tostring(so[k]) end
  end
  local t = M.time_limit(so, opts)
  if t.arg then a[#a + 1] = "--time=" .. t.arg end
  if t.seconds and not arg_value(so.sbatch_args, "deadline") then
    a[#a + 1] = string.format("--deadline=now+%d", math.ceil(opts.startup_timeout + M.DEADLINE_SLACK + t.seconds))
  end
  for _, v in ipairs(so.sbatch_args or {}) do a[#a + 1] = tostring(v) end
  return a
end

-- srun of a step of so.allocation running the script (bash -c): the
-- same cpus, memory and time as a job asks, within the allocation (--exact).
local function srun_argv(sb, so, opts)
  local a = { "srun", "--jobid=" .. tostring(so.allocation), "--ntasks=1", "--nodes=1", "--exact",
    "--input=none", "--job-name=rock-" .. sb.id, "--output=" .. sb.out_file,
    "--cpus-per-task=" .. tostring(math.max(1, math.ceil(need(opts).cpus))),
    "--mem=" .. math.ceil(need(opts).memory / (1 << 20)) .. "M" }
  if so.nodelist ~= nil then a[#a + 1] = "--nodelist=" .. so.nodelist end
  local t = M.time_limit(so, opts)
  if t.arg then a[#a + 1] = "--time=" .. t.arg end
  for _, v in ipairs(so.srun_args or {}) do a[#a + 1] = tostring(v) end
  a[#a + 1] = "bash"
  a[#a + 1] = "-c"
  a[#a + 1] = script(sb, so, opts)
  return a
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function tail(path, n)
  local s = read(path)
  if not s or s == "" then return "" end
  return s:sub(-(n or 600))
end

local function record(sb)
  state.write_record(sb.dir, { id = sb.id, backend = "slurm", owner = state.owner_label(state.me()),
    created = sb.created, image = sb.image, job_id = sb.job_id, slurm_conf = sb.slurm_conf,
    addr_file = sb.addr_file, out_file = sb.out_file, wait_file = sb.wait_file, allocation = sb.allocation,
    step_file = sb.step_file, srun = sb.srun_pid and { pid = sb.srun_pid, start = sb.srun_start } or nil })
end

-- The files a sandbox (or its record) has in the shared dir.
local function files_of(r)
  return { r.addr_file, r.addr_file and r.addr_file .. ".tmp", r.out_file, r.wait_file, r.step_file }
end

-- A step's id (J.S) once it has named itself in its step file, else nil.
local function named_step(step_file)
  local s = type(step_file) == "string" and trim(read(step_file)) or ""
  return s:match("^%d+%.%d+$") and s or nil
end

local function step_id(sb)
  if not sb.job_id and sb.step_file then sb.job_id = named_step(sb.step_file) end
  return sb.job_id
end

-- srun pid of a record, if that process still runs (the same start time:
-- not another that took its pid).
local function srun_alive(srun)
  local pid = type(srun) == "table" and math.tointeger(srun.pid)
  if not pid then return false end
  local st = require("rock.core").proc_start_time(pid)
  return st ~= nil and st == srun.start
end

-- scancel id (with signal: that signal only): true, or false and
-- scancel's words when it failed for another reason than the job (step)
-- being gone already.
local function scancel(conf, id, signal)
  local argv = { "scancel", tostring(id) }
  if signal then table.insert(argv, 2, "--signal=" .. signal) end
  local _, err, code = M.run(conf, argv)
  if code == 0 or err:find("Invalid job id", 1, true) or err:find("already completing", 1, true)
      or err:find("already completed", 1, true) then
    return true
  end
  return false, trim(err) ~= "" and trim(err) or ("exit " .. tostring(code))
end

-- Whether Slurm still lists step id (J.S); true when squeue does not answer.
local function step_listed(conf, id)
  local out, _, code = M.run(conf, { "squeue", "-h", "-s", "-j", (tostring(id):match("^%d+")), "-o", "%i" })
  if code ~= 0 then return true end
  for s in out:gmatch("%S+") do if s == id then return true end end
  return false
end

-- End step id as Slurm ends a job: SIGTERM to its processes (its server
-- stops its sandbox, the script removes its state dir), then, if it is
-- not gone() in STEP_GRACE seconds, a plain scancel, which is SIGKILL
-- at once for a step. gone() is asked every `every` seconds (default
-- 0.1; a gone() that asks squeue, a fork and a call to slurmctld, passes
-- more). true, or false and scancel's words.
local function end_step(conf, id, gone, every)
  local ok, why = scancel(conf, id, "TERM")
  if not ok then return false, why end
  local t0 = uv.now()
  while not gone() and uv.now() - t0 < M.STEP_GRACE * 1000 do task.sleep(every or 0.1) end
  if gone() then return true end
  return scancel(conf, id)
end

-- End an srun (its pid and start time: srun) that is still running:
-- SIGTERM, which makes it give up a step it still waits for, or pass the
-- signal to the step it runs (the step ends); SIGKILL after wait seconds.
-- gone() says when it has exited.
local function end_srun(srun, gone, wait)
  if gone() or not srun_alive(srun) then return end
  uv.kill(math.tointeger(srun.pid), "sigterm")
  local t0 = uv.now()
  while not gone() and srun_alive(srun) and uv.now() - t0 < wait * 1000 do task.sleep(0.05) end
  if not gone() and srun_alive(srun) then uv.kill(math.tointeger(srun.pid), "sigkill") end
end

-- Remove the job (or step) and its files (a start that failed, a stop;
-- stopped: its sandbox was stopped on its node, so its server exits by
-- itself). A job: scancel'd (Slurm's SIGTERM, KillWait, SIGKILL). A
-- step: given 5 s to end by itself when stopped, else ended (end_step)
-- once it has named itself, its srun SIGTERMed (end_srun), and one
-- that names itself meanwhile ended too.
local function cleanup(sb, stopped)
  if sb.allocation then
    step_id(sb)
    local function gone() return sb.srun_task == nil or sb.srun_exit ~= nil end
    local t0 = uv.now()
    while stopped and not gone() and uv.now() - t0 < 5000 do task.sleep(0.05) end
    if sb.job_id and not gone() then
      local ok, why = end_step(sb.slurm_conf, sb.job_id, gone)
      if not ok then log.warn("slurm", "scancel %s: %s", sb.job_id, why) end
    end
    if sb.srun_task then
      end_srun({ pid = sb.srun_pid, start = sb.srun_start }, gone, 5)
      if not gone() then task.cancel(sb.srun_task, errors.new("cancelled", "the sandbox stops")) end
      pcall(task.wait, sb.srun_task)
      local named = not sb.job_id and step_id(sb)
      if named then
        end_step(sb.slurm_conf, named, function() return not step_listed(sb.slurm_conf, named) end, 0.5)
      end
    end
  elseif sb.job_id then
    local ok, why = scancel(sb.slurm_conf, sb.job_id)
    if not ok then log.warn("slurm", "scancel %s: %s", sb.job_id, why) end
  end
  for _, f in ipairs(files_of(sb)) do os.remove(f) end
  if sb.dir then pcall(state.remove_dir, sb.dir); sb.dir = nil end
end

local function describe(j)
  return j.state .. (j.reason ~= "" and j.reason ~= "None" and (" (" .. j.reason .. ")") or "")
end

-- What the sandbox is to Slurm, in words: "job J", "step J.S", or
-- "step of allocation J" before it has its id.
local function label(sb)
  if not sb.allocation then return "job " .. sb.job_id end
  return step_id(sb) and ("step " .. sb.job_id) or ("step of allocation " .. sb.allocation)
end

-- Slurm's view of a step, from what its srun said (to its log) and
-- whether it still runs: the shape of M.job; nil while it has said
-- nothing yet.
local function step_state(sb)
  if sb.srun_exit ~= nil then
    return { state = "ENDED", reason = "srun exited " .. tostring(sb.srun_exit), node = "" }
  end
  local said = read(sb.srun_log) or ""
  local last
  for line in said:gmatch("[^\n]+") do
    local why = line:match("step creation temporarily disabled, retrying %((.-)%)")
    if why then last = { state = "PENDING", reason = why, node = "" }
    elseif line:find("Step created for job", 1, true) then last = nil end
  end
  return last or { state = step_id(sb) and "RUNNING" or "PENDING", reason = "", node = "" }
end

-- Wait for the job's server to write its address: Slurm's state as the
-- phase "queued" (a job's from squeue, a step's from its srun), a job
-- that ends is its words and its output's tail. The wait file is touched
-- all along (a job that finds it stale exits unserved), removed at the end.
local function wait_address(sb, opts, phase, deadline)
  local last_ask, shown, touched = -math.huge, nil, uv.now()
  phase("queued", "waiting", "submitted: " .. label(sb)) -- running once Slurm says why it waits
  while true do
    local s = read(sb.addr_file)
    if s and s ~= "" then
      local ok, addr = pcall(json.decode, s)
      if ok and type(addr) == "table" and addr.url then
        if shown ~= "RUNNING" then phase("queued", "success", label(sb) .. " running on " .. tostring(addr.node)) end
        os.remove(sb.wait_file)
        return addr
      end
    end
    if uv.now() - touched >= M.WAITING_FRESH * 250 then
      touched = uv.now()
      uv.fs_utime(sb.wait_file, os.time(), os.time())
    end
    if uv.now() - last_ask >= M.ASK_EVERY * 1000 or sb.srun_exit ~= nil then
      last_ask = uv.now()
      local j
      if sb.allocation then j = step_state(sb) else j = M.job(sb.slurm_conf, sb.job_id) end
      if j then
        sb.slurm_state, sb.slurm_reason, sb.slurm_node = j.state, j.reason, j.node
        local d = describe(j)
        if j.state == "PENDING" and shown ~= d then
          phase("queued", (j.reason ~= "" and j.reason ~= "None") and "running" or "waiting",
            label(sb) .. " " .. d)
        elseif j.state == "RUNNING" and shown ~= "RUNNING" then
          local on = j.node ~= "" and (" on " .. j.node) or ""
          phase("queued", "success", label(sb) .. " running" .. on)
          phase("container_start", "running", "rock serve starting" .. on)
          d = "RUNNING"
        end
        shown = d
        if ENDED[j.state] or j.state == "GONE" or j.state == "ENDED" then
          task.sleep(0.3) -- its output is written as it ends
          local t = tail(sb.out_file) .. (sb.allocation and tail(sb.srun_log) or "")
          errors.raise("sandbox_start_failed", string.format("slurm %s ended before its sandbox started: %s%s",
            label(sb), d, t ~= "" and ("; its output: " .. t) or ""))
        end
      end
    end
    if uv.now() > deadline then
      errors.raise("timeout", string.format("slurm %s did not start in %gs: %s", label(sb),
        opts.startup_timeout, sb.slurm_state and describe({ state = sb.slurm_state, reason = sb.slurm_reason or "" })
        or "squeue does not answer"))
    end
    task.sleep(M.POLL)
  end
end

-- sbatch the job: its id, or raises with sbatch's words.
local function submit_job(sb, so, opts, phase)
  phase("container_create", "running", "sbatch")
  local out, serr, code = M.run(sb.slurm_conf, sbatch_argv(sb, so, opts), script(sb, so, opts))
  if code ~= 0 then
    errors.raise("sandbox_start_failed", "sbatch refused the job: " ..
      (trim(serr) ~= "" and trim(serr) or ("exit " .. tostring(code))))
  end
  sb.job_id = trim(out):match("^(%d+)")
  if not sb.job_id then errors.raise("sandbox_start_failed", "sbatch answered no job id: " .. trim(out)) end
  record(sb)
  phase("container_create", "success", "slurm job " .. sb.job_id)
end

-- srun the step, as a task that lasts as long as it does (sb.srun_exit
-- once it ends), in a session of its own (a terminal's Ctrl-C is for
-- this host, which stops the step); its pid and start time recorded for gc.
local function launch_step(sb, so, opts, phase)
  phase("container_create", "running", "srun --jobid=" .. sb.allocation)
  sb.srun_log = sb.dir .. "/srun.log"
  local started, why = false, nil
  sb.srun_task = task.spawn(function()
    local _, err, code = require("rock.proc").run(srun_argv(sb, so, opts), { env = env_of(sb.slurm_conf),
      output = sb.srun_log, detached = true, on_pid = function(pid)
        sb.srun_pid, sb.srun_start = pid, require("rock.core").proc_start_time(pid)
        started = true
      end })
    why, sb.srun_exit, started = err, code, true
  end)
  sb.srun_task.quiet = true
  while not started do task.sleep(0.01) end
  if not sb.srun_pid then
    errors.raise("sandbox_start_failed", "srun did not run: " .. (trim(why) ~= "" and trim(why) or
      ("exit " .. tostring(sb.srun_exit))))
  end
  record(sb)
  phase("container_create", "success", "srun: a step of allocation " .. sb.allocation)
end

function M.start(sb, opts, phase)
  local so = check(opts.slurm)
  sb.id = opts.sandbox_id or state.new_id()
  sb.slurm_conf = so.conf or os.getenv("SLURM_CONF")
  sb.created = os.time()
  local shared = so.shared_dir or os.getenv("ROCK_SLURM_SHARED_DIR") or (state.dir() .. "/slurm")
  state.mkdir_p(shared)
  sb.addr_file, sb.out_file = shared .. "/" .. sb.id .. ".addr", shared .. "/" .. sb.id .. ".out"
  sb.wait_file = shared .. "/" .. sb.id .. ".wait"
  if so.allocation then
    sb.allocation, sb.step_file = tostring(so.allocation), shared .. "/" .. sb.id .. ".step"
  end
  sb.dir = state.make_sandbox_dir(sb.id) -- from here on, cleanup removes it
  local ok, err = pcall(function()
    record(sb) -- before the job exists: gc's proof is there first
    local f = assert(io.open(sb.wait_file, "w")) -- its client waits (the job checks it is fresh)
    f:close()
    if sb.allocation then launch_step(sb, so, opts, phase) else submit_job(sb, so, opts, phase) end
    local deadline = uv.now() + opts.startup_timeout * 1000 -- the queue's wait counts
    local addr = wait_address(sb, opts, phase, deadline)
    sb.slurm_node, sb.slurm_state = addr.node, "RUNNING"
    if sb.allocation then
      sb.job_id = addr.job
      record(sb)
    end
    local ropts = {}
    for k, v in pairs(opts) do ropts[k] = v end
    ropts.base_url, ropts.token, ropts.sandbox_id = addr.url, addr.token, sb.id
    ropts.image = opts.image or "none" -- recorded by a local node backend
    -- what is left of it, within what a server takes (ROCK's API: up to 3600 s)
    ropts.startup_timeout = math.min(3600, math.max(30, (deadline - uv.now()) / 1000))
    remote.start(sb, ropts, phase)
    sb.image = opts.image
  end)
  if not ok then
    task.shield(cleanup, sb)
    error(err, 0)
  end
end

-- Why the job (or step) is gone (its Slurm state, its srun's end), or
-- nil while it runs (or squeue does not answer: no proof). A step's is
-- its srun's end: grace seconds for it to follow a step that is ending
-- (asked after a call failed).
local function job_gone(sb, grace)
  if sb.job_ended then return sb.job_ended end
  if sb.allocation then
    local t0 = uv.now()
    while sb.srun_exit == nil and uv.now() - t0 < (grace or 0) * 1000 do task.sleep(0.05) end
    if sb.srun_exit == nil then return nil end
    sb.slurm_state = "ENDED"
    sb.job_ended = string.format("slurm %s ended (srun exited %s)", label(sb), tostring(sb.srun_exit))
    return sb.job_ended
  end
  if not sb.job_id then return nil end
  local j = M.job(sb.slurm_conf, sb.job_id)
  if not j then return nil end
  sb.slurm_state, sb.slurm_reason = j.state, j.reason
  if j.state == "RUNNING" or j.state == "PENDING" or j.state == "CONFIGURING" then return nil end
  sb.job_ended = string.format("slurm job %s is %s", sb.job_id, describe(j))
  return sb.job_ended
end

function M.op(sb, name, args, timeout, file)
  local ok, res = pcall(remote.op, sb, name, args, timeout, file)
  if ok then return res end
  if errors.is(res, "node_lost") or errors.is(res, "sandbox_not_alive") then
    local why = job_gone(sb, 2)
    if why then errors.raise("node_lost", why .. ": the sandbox is gone", { op = name }) end
  end
  error(res, 0)
end

function M.is_alive(sb)
  local ok, alive = pcall(remote.is_alive, sb)
  if ok then return alive end
  if job_gone(sb, 2) then return false end
  error(alive, 0)
end

function M.gone(sb)
  return job_gone(sb) or remote.gone(sb)
end

function M.stop(sb)
  local stopped = false
  if sb.base_url and sb.id and not sb.job_ended then -- an ended job took its sandbox with it
    -- stop, not delete: the job's server (--once) exits as its sandbox stops
    local ok, err = pcall(remote.api, sb, "stop", { sandbox_id = sb.id }, 60)
    stopped = ok
    if not ok and not errors.is(err, "node_lost") and not errors.is(err, "sandbox_not_found") then
      log.warn("slurm", "%s: stop on its node: %s", tostring(sb.id), tostring(err.message or err))
    end
  end
  cleanup(sb, stopped)
end

--- Where it is reached, and its job: slurm_job_id (J, or J.S for a
--- step), slurm_node, slurm_state; slurm_allocation for a step.
function M.status(sb)
  local w = remote.status(sb)
  return { host_name = w.host_name, host_ip = w.host_ip, port_mapping = w.port_mapping,
    slurm_job_id = sb.job_id, slurm_node = sb.slurm_node, slurm_state = sb.slurm_state,
    slurm_allocation = sb.allocation }
end

--- gc: a sandbox whose owner died: its job is cancelled (by id, and by
--- name for one submitted as its owner died), its files go. A step: the
--- step ended as a job is (end_step: its id recorded or in its step
--- file), its srun ended if it still runs (a step still waiting for room
--- has only that). Raises, the record kept (gc's proof), when scancel
--- fails for another reason than the job being gone (Slurm does not answer).
function M.release(rec)
  local conf = rec.slurm_conf
  local function ended(id, ok, why)
    if not ok then errors.raise("engine_unavailable", string.format("scancel %s: %s: it may still run", id, why)) end
  end
  if rec.allocation then
    local function end_named(id)
      ended(id, end_step(conf, id, function() return not step_listed(conf, id) end, 0.5))
    end
    local id = rec.job_id or named_step(rec.step_file)
    if id then end_named(id) end
    end_srun(rec.srun, function() return false end, 5)
    if not id and named_step(rec.step_file) then end_named(named_step(rec.step_file)) end
  else
    if rec.job_id then ended(rec.job_id, scancel(conf, rec.job_id)) end
    if rec.id then ended("--name=rock-" .. rec.id, scancel(conf, "--name=rock-" .. rec.id)) end
  end
  for _, f in ipairs(files_of(rec)) do
    if type(f) == "string" then os.remove(f) end
  end
  return true
end

--- rock ps: each slurm sandbox's job and its state.
function M.list(rows)
  for _, row in pairs(rows.by_id) do
    if row.backend == "slurm" then
      local f = io.open(state.sandboxes_dir() .. "/" .. row.id .. "/sandbox.json")
      local rec = f and json.decode(f:read("a"))
      if f then f:close() end
      if rec and rec.allocation then
        row.state = (rec.job_id and ("step " .. rec.job_id) or ("step of allocation " .. rec.allocation)) ..
          (srun_alive(rec.srun) and "" or " (its srun ended)")
      elseif rec and rec.job_id then
        local j = M.job(rec.slurm_conf, rec.job_id)
        row.state = j and ("job " .. rec.job_id .. " " .. j.state) or ("job " .. rec.job_id)
      end
    end
  end
end

return M
