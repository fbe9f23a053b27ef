--- rock.backends.slurm: a sandbox placed by Slurm. Each sandbox is one
-- Slurm job (sbatch --parsable) asking --cpus-per-task = its cpus and
-- --mem = its memory (ROCK's defaults where not given: 2, 8g), plus the user's partition, account, qos,
-- constraint, nodelist, time and sbatch_args (the escape hatch):
--   rock.sandbox.start{ backend = "slurm", image = ..., cpus = 4, memory = "16g",
--     slurm = { partition = "cpu", node_backend = "podman", shared_dir = "/shared/rock" } }
-- The job runs a one-sandbox `rock serve --once` on its node (the node's
-- engine: node_backend auto|docker|podman|local), which writes its URL
-- and a token it made (owner-only) to <shared_dir>/<id>.addr; until then
-- the start waits, the phase "queued" saying Slurm's state and reason
-- (PENDING (Resources)), up to startup_timeout, then cancels the job.
-- From there the sandbox is that server's remote sandbox (remote.lua).
-- stop stops it there and scancels the job. A job that ends (scancel
-- from outside, its node DOWN, its time limit) makes the sandbox gone and
-- its calls fail node_lost. The job's server stops its sandbox on
-- Slurm's SIGTERM and exits once the sandbox is gone (its idle lease
-- too), which ends the job. Slurm's own CLI (sbatch, squeue, scancel) and
-- SLURM_CONF (or slurm.conf =) are used as the user has them. A record in
-- the state dir names the job and its owner, so `rock gc` cancels the
-- jobs of a dead client (release); the job's name is rock-<id> and its
-- comment rock-owner=<owner>. docs/clusters.md.
local uv = require "luv"
local json = require "rock.json"
local errors = require "rock.errors"
local task = require "rock.task"
local state = require "rock.state"
local log = require "rock.log"
local remote = require "rock.backends.remote"

-- image: the node's engine runs it (a local node backend only records it)
local M = { caps = { image = true, upload_stream = true } }

M.POLL = 0.1 -- seconds between looks for the address file
M.ASK_EVERY = 1 -- seconds between squeue calls while a start waits

local ENDED = { COMPLETED = true, CANCELLED = true, FAILED = true, TIMEOUT = true, NODE_FAIL = true,
  PREEMPTED = true, OUT_OF_MEMORY = true, BOOT_FAIL = true, DEADLINE = true, REVOKED = true, SPECIAL_EXIT = true }

local OPTS = { partition = "string", account = "string", qos = "string", constraint = "string",
  nodelist = "string", time = "string", sbatch_args = "table", node_backend = "string", shared_dir = "string",
  conf = "string", rock = "string", node_address = "string" }

local function check(so)
  if so == nil then return {} end
  if type(so) ~= "table" then errors.raise("invalid_argument", "sandbox.start: 'slurm' must be a table") end
  for k, v in pairs(so) do
    if not OPTS[k] then
      errors.raise("invalid_argument", "sandbox.start: unknown slurm option '" .. tostring(k) .. "'")
    end
    if type(v) ~= OPTS[k] and not (k == "time" and type(v) == "number") then
      errors.raise("invalid_argument", string.format("sandbox.start: slurm.%s must be a %s", k, OPTS[k]))
    end
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
  shared_dir = { help = "--backend slurm: a directory this host and the nodes share" },
  node_backend = { help = "--backend slurm: the nodes' engine, auto|docker|podman|local (default auto)" },
}
local FLAG_KEYS = { "partition", "account", "qos", "constraint", "nodelist", "shared_dir", "node_backend" }

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

local function sh_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- The job's script: rock serve --once on this node; its URL and token
-- to the address file (owner-only, written whole: a temp file renamed).
-- What the sandbox reserves, as its node's `rock serve` counts it:
-- {cpus, memory (bytes)}, ROCK's defaults where not given (admission.lua).
local function need(opts)
  return require("rock.serve.admission").need{ cpus = opts.cpus, memory = (opts.limits or {}).memory }
end

local function script(sb, so, opts)
  local n = need(opts)
  local serve = { sh_quote(so.rock or uv.exepath()), "serve", "--host", "0.0.0.0", "--port", "0",
    "--backend", so.node_backend or "auto", "--once", tostring(math.floor(opts.startup_timeout) + 60),
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
    "addr=" .. sh_quote(sb.addr_file),
    "host=" .. (so.node_address and sh_quote(so.node_address) or "$(hostname -f 2>/dev/null || hostname)"),
    "export ROCK_HOME=\"${TMPDIR:-/tmp}/rock-slurm-$SLURM_JOB_ID\"",
    "export ROCK_API_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')",
    "mkdir -p \"$ROCK_HOME\"",
    "log=\"$ROCK_HOME/serve.out\"",
    table.concat(serve, " ") .. " >\"$log\" 2>&1 &",
    "pid=$!",
    "trap 'kill -TERM $pid 2>/dev/null; wait $pid; rm -rf \"$ROCK_HOME\"; exit 143' TERM INT",
    "url=",
    "for _ in $(seq 1 600); do",
    "  url=$(sed -n 's/^rock serve: listening on //p' \"$log\")",
    "  [ -n \"$url\" ] && break",
    "  kill -0 $pid 2>/dev/null || { cat \"$log\" >&2; rm -rf \"$ROCK_HOME\"; exit 1; }",
    "  sleep 0.05",
    "done",
    "[ -n \"$url\" ] || { echo 'rock serve did not listen in 30 s' >&2; cat \"$log\" >&2; exit 1; }",
    "printf '{\"url\":\"http://%s:%s\",\"token\":\"%s\",\"node\":\"%s\",\"job\":\"%s\"}\\n' \"$host\" " ..
      "\"${url##*:}\" \"$ROCK_API_TOKEN\" \"$SLURMD_NODENAME\" \"$SLURM_JOB_ID\" > \"$addr.tmp\" && mv \"$addr.tmp\" \"$addr\"",
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
  for _, k in ipairs({ "partition", "account", "qos", "constraint", "nodelist", "time" }) do
    if so[k] ~= nil then a[#a + 1] = "--" .. k .. "=" .. tostring(so[k]) end
  end
  for _, v in ipairs(so.sbatch_args or {}) do a[#a + 1] = tostring(v) end
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
    addr_file = sb.addr_file, out_file = sb.out_file })
end

-- Remove the job and its files (a start that failed, a stop).
local function cleanup(sb)
  if sb.job_id then
    local _, err, code = M.run(sb.slurm_conf, { "scancel", tostring(sb.job_id) })
    if code ~= 0 and not err:find("Invalid job id", 1, true) and not err:find("already completing", 1, true) then
      log.warn("slurm", "scancel %s: %s", sb.job_id, trim(err))
    end
  end
  for _, f in ipairs({ sb.addr_file, sb.addr_file and sb.addr_file .. ".tmp", sb.out_file }) do
    if f then os.remove(f) end
  end
  if sb.dir then pcall(state.remove_dir, sb.dir); sb.dir = nil end
end

local function describe(j)
  return j.state .. (j.reason ~= "" and j.reason ~= "None" and (" (" .. j.reason .. ")") or "")
end

-- Wait for the job's server to write its address: Slurm's state as the
-- phase "queued", a job that ends is its words and its output's tail.
local function wait_address(sb, opts, phase, deadline)
  local last_ask, shown = -math.huge, nil
  phase("queued", "waiting", "submitted: job " .. sb.job_id) -- running once Slurm says why it waits
  while true do
    local s = read(sb.addr_file)
    if s and s ~= "" then
      local ok, addr = pcall(json.decode, s)
      if ok and type(addr) == "table" and addr.url then
        if shown ~= "RUNNING" then phase("queued", "success", "job " .. sb.job_id .. " running on " .. tostring(addr.node)) end
        return addr
      end
    end
    if uv.now() - last_ask >= M.ASK_EVERY * 1000 then
      last_ask = uv.now()
      local j = M.job(sb.slurm_conf, sb.job_id)
      if j then
        sb.slurm_state, sb.slurm_reason, sb.slurm_node = j.state, j.reason, j.node
        local d = describe(j)
        if j.state == "PENDING" and shown ~= d then
          phase("queued", (j.reason ~= "" and j.reason ~= "None") and "running" or "waiting",
            "job " .. sb.job_id .. " " .. d)
        elseif j.state == "RUNNING" and shown ~= "RUNNING" then
          phase("queued", "success", "job " .. sb.job_id .. " running on " .. j.node)
          phase("container_start", "running", "rock serve starting on " .. j.node)
          d = "RUNNING"
        end
        shown = d
        if ENDED[j.state] or j.state == "GONE" then
          task.sleep(0.3) -- its output is written as it ends
          local t = tail(sb.out_file)
          errors.raise("sandbox_start_failed", string.format("slurm job %s ended before its sandbox started: %s%s",
            sb.job_id, d, t ~= "" and ("; its output: " .. t) or ""))
        end
      end
    end
    if uv.now() > deadline then
      errors.raise("timeout", string.format("slurm job %s did not start in %gs: %s", sb.job_id,
        opts.startup_timeout, sb.slurm_state and describe({ state = sb.slurm_state, reason = sb.slurm_reason or "" })
        or "squeue does not answer"))
    end
    task.sleep(M.POLL)
  end
end

function M.start(sb, opts, phase)
  local so = check(opts.slurm)
  sb.id = opts.sandbox_id or state.new_id()
  sb.slurm_conf = so.conf or os.getenv("SLURM_CONF")
  sb.created = os.time()
  local shared = so.shared_dir or os.getenv("ROCK_SLURM_SHARED_DIR") or (state.dir() .. "/slurm")
  state.mkdir_p(shared)
  sb.addr_file, sb.out_file = shared .. "/" .. sb.id .. ".addr", shared .. "/" .. sb.id .. ".out"
  sb.dir = state.make_sandbox_dir(sb.id) -- from here on, cleanup removes it
  local ok, err = pcall(function()
    record(sb) -- before the job exists: gc's proof is there first
    local argv = sbatch_argv(sb, so, opts)
    phase("container_create", "running", "sbatch")
    local out, serr, code = M.run(sb.slurm_conf, argv, script(sb, so, opts))
    if code ~= 0 then
      errors.raise("sandbox_start_failed", "sbatch refused the job: " ..
        (trim(serr) ~= "" and trim(serr) or ("exit " .. tostring(code))))
    end
    sb.job_id = trim(out):match("^(%d+)")
    if not sb.job_id then errors.raise("sandbox_start_failed", "sbatch answered no job id: " .. trim(out)) end
    record(sb)
    phase("container_create", "success", "slurm job " .. sb.job_id)
    local deadline = uv.now() + opts.startup_timeout * 1000 -- the queue's wait counts
    local addr = wait_address(sb, opts, phase, deadline)
    sb.slurm_node, sb.slurm_state = addr.node, "RUNNING"
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

-- Why the job is gone (its Slurm state), or nil while it runs (or squeue
-- does not answer: no proof).
local function job_gone(sb)
  if sb.job_ended then return sb.job_ended end
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
    local why = job_gone(sb)
    if why then errors.raise("node_lost", why .. ": the sandbox is gone", { op = name }) end
  end
  error(res, 0)
end

function M.is_alive(sb)
  local ok, alive = pcall(remote.is_alive, sb)
  if ok then return alive end
  if job_gone(sb) then return false end
  error(alive, 0)
end

function M.gone(sb)
  return job_gone(sb) or remote.gone(sb)
end

function M.stop(sb)
  if sb.base_url and sb.id and not sb.job_ended then -- an ended job took its sandbox with it
    -- stop, not delete: the job's server (--once) exits as its sandbox stops
    local ok, err = pcall(remote.api, sb, "stop", { sandbox_id = sb.id }, 60)
    if not ok and not errors.is(err, "node_lost") and not errors.is(err, "sandbox_not_found") then
      log.warn("slurm", "%s: stop on its node: %s", tostring(sb.id), tostring(err.message or err))
    end
  end
  cleanup(sb)
end

--- Where it is reached, and its job: slurm_job_id, slurm_node.
function M.status(sb)
  local w = remote.status(sb)
  return { host_name = w.host_name, host_ip = w.host_ip, port_mapping = w.port_mapping,
    slurm_job_id = sb.job_id, slurm_node = sb.slurm_node, slurm_state = sb.slurm_state }
end

--- gc: a sandbox whose owner died: its job is cancelled (by id, and by
--- name for one submitted as its owner died), its files go.
function M.release(rec)
  local conf = rec.slurm_conf
  if rec.job_id then M.run(conf, { "scancel", tostring(rec.job_id) }) end
  if rec.id then M.run(conf, { "scancel", "--name=rock-" .. rec.id }) end
  for _, f in ipairs({ rec.addr_file, rec.addr_file and rec.addr_file .. ".tmp", rec.out_file }) do
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
      if rec and rec.job_id then
        local j = M.job(rec.slurm_conf, rec.job_id)
        row.state = j and ("job " .. rec.job_id .. " " .. j.state) or ("job " .. rec.job_id)
      end
    end
  end
end

return M
