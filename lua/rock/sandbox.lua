--- rock.sandbox: start sandboxes and talk to them; names follow ROCK's SDK.
--   local sb = rock.sandbox.start{ backend = "local" }
--   sb:create_session{ session = "bash-1" }
--   local obs = sb:run_in_session{ session = "bash-1", command = "ls", timeout = 30 }
--   sb:stop()
-- A non-zero exit status is data (obs.exit_code), not an error. Failures of
-- the machinery (unknown session, dead sandbox, bad arguments) raise
-- {code=, message=}. A Sandbox speaks to its backend through the contract
-- of backends/init.lua (operations by name, never a backend's name or
-- URLs); a sandbox's state is one model (the fields below: M.transition,
-- M.status), also the one `rock serve`'s registry keeps. Every call here
-- waits: run it inside a task.
local errors = require "rock.errors"
local log = require "rock.log"
local task = require "rock.task"
local state = require "rock.state"
local backends = require "rock.backends"

local M = {}

--- Defaults, one per concept (documented in docs/lua-api.md):
--- seconds sandbox.start waits for the rocklet to answer (every backend),
M.DEFAULT_STARTUP_TIMEOUT = 60
--- seconds create_session waits for bash and the startup files,
M.DEFAULT_SESSION_STARTUP_TIMEOUT = 60
--- and the largest max_output accepted (bytes returned per call, 64 to
--- 256 MiB: the rocklet's own bounds, docs/rocklet-api.md).
M.MAX_OUTPUT_LIMIT = 1 << 28
--- The most retries start_retry_times may ask for.
M.MAX_START_RETRIES = 100

local live = {} -- sandboxes started and not stopped, for the exit sweep
local PHASES = { "image_pull", "container_create", "container_start", "rocklet_ready" }

--- A sandbox's state (a Sandbox, and `rock serve`'s entry for one): id,
--- backend, image, cpus, memory, limits, state ("pending" | "running" |
--- "stopped", and "deleted" for an entry), state_history (list of
--- {from_state, to_state, event, timestamp}), phases ({name = {status,
--- message, started_at, completed_at}}), stop_reason, create_time,
--- start_time, stop_time (os.time() seconds).
---@class rock.Sandbox
---@field id string
---@field backend string
---@field host_name string the node it runs on
---@field host_ip string the address its clients reach it by
---@field state string  "pending" | "running" | "stopped"
local Sandbox = {}
Sandbox.__index = Sandbox
M.Sandbox = Sandbox

local function now() return os.time() end
local function json_null() return require("rock.json").null end

local function check_table(t, fname)
  if t ~= nil and type(t) ~= "table" then
    errors.raise("invalid_argument", fname .. ": expects a table of options")
  end
  return t or {}
end

local function need(v, kind, fname, field)
  if type(v) ~= kind then
    errors.raise("invalid_argument", string.format("%s: '%s' must be a %s", fname, field, kind))
  end
  return v
end

local function opt(v, kind, fname, field)
  if v ~= nil then need(v, kind, fname, field) end
  return v
end

-- an optional duration in seconds (finite, 0 ..task.MAX_SECONDS)
local function seconds(v, fname, field)
  return task.check_seconds(v, string.format("%s: '%s'", fname, field), true)
end

-- an optional max_output: a whole number of bytes, 64 .. MAX_OUTPUT_LIMIT
local function max_output(v, fname)
  if v == nil then return nil end
  if math.type(v) == "float" and v == math.floor(v) and v >= 0 and v <= M.MAX_OUTPUT_LIMIT then
    v = math.tointeger(v)
  end
  if math.type(v) ~= "integer" or v < 64 or v > M.MAX_OUTPUT_LIMIT then
    errors.raise("invalid_argument", string.format(
      "%s: 'max_output' must be a whole number of bytes from 64 to %d, got %s",
      fname, M.MAX_OUTPUT_LIMIT, tostring(v)))
  end
  return v
end

-- An empty list is sent as no list: JSON has no way to tell {} from [].
local function list_or_nil(t)
  if t and next(t) == nil then return nil end
  return t
end

--- Move the state model m to state to, on event: its history says so.
function M.transition(m, to, event)
  if m.state == to then return end
  m.state_history[#m.state_history + 1] = {
    from_state = m.state, to_state = to, event = event, timestamp = now(),
  }
  m.state = to
end

function Sandbox:_transition(to, event) M.transition(self, to, event) end

function Sandbox:_phase(name, status, message)
  local p = self.phases[name]
  if not p then
    p = { status = "waiting" }
    self.phases[name] = p
  end
  if status == "running" or (not p.started_at and status ~= "waiting") then
    p.started_at = p.started_at or now()
  end
  if status == "success" or status == "failed" or status == "timeout" then
    p.completed_at = now()
  end
  p.status, p.message = status, message
  if self._on_phase then self._on_phase(self, name, status, message) end
end

local function start_once(backend, opts)
  local sb = setmetatable({
    backend = backend, _impl = backends.get(backend), image = opts.image, memory = opts.memory, cpus = opts.cpus,
    limits = opts.limits, auto_clear_seconds = opts.auto_clear_seconds,
    state = "pending", phases = {}, state_history = {},
    create_time = now(), start_time = now(),
  }, Sandbox)
  for _, name in ipairs(PHASES) do
    sb:_phase(name, "waiting")
  end
  sb._on_phase = opts.on_phase -- (sb, name, status, message) at each change from here on
  if opts.on_create then opts.on_create(sb) end -- lets a caller watch the phases (rock serve)
  live[sb] = true -- from now on, the exit sweep (a signal, the end) stops it too
  local ok, err = pcall(sb._impl.start, sb, opts, function(...) sb:_phase(...) end)
  if not ok then
    live[sb] = nil
    sb._released = true -- the backend removed what it made
    local ended = errors.is(err, "timeout") and "timeout" or "failed"
    for _, name in ipairs(PHASES) do
      local p = sb.phases[name]
      if p.status == "running" or p.status == "waiting" then
        p.status = ended
        p.message = tostring(err.message or err)
        p.completed_at = now()
        if sb._on_phase then sb._on_phase(sb, name, p.status, p.message) end
        break
      end
    end
    local q = sb.phases.queued -- a phase of a backend's own (slurm's queue) ends too
    if q and q.status == "running" then sb:_phase("queued", ended, tostring(err.message or err)) end
    sb:_transition("stopped", "start_failed")
    if task.cancelled(err) then error(err, 0) end -- the caller's cancel, not a failure to retry
    if not errors.is(err) then err = errors.new("sandbox_start_failed", tostring(err)) end
    err.phases, err.sandbox_id = sb.phases, sb.id
    return nil, err
  end
  if sb._released then -- stopped by the exit sweep while it started
    return nil, errors.new("sandbox_start_failed", "stopped while it started")
  end
  local where = sb:_where() -- the address its clients reach it by, its backend says
  sb.host_name, sb.host_ip = where.host_name, where.host_ip
  sb:_transition("running", "started")
  return sb
end

-- "a docker or podman sandbox": the backends that declare cap
local function which(cap)
  return "a " .. table.concat(backends.having(cap), " or ") .. " sandbox"
end

--- A Sandbox for a sandbox another process started and left running
--- (its record rec, in dir): `rock serve` restarted on the same
--- ROCK_HOME serves its sandboxes again. Raises sandbox_not_alive when
--- it does not answer, or its backend cannot attach (a local one dies
--- with its owner).
function M.attach(rec, dir)
  if type(rec) ~= "table" or type(rec.backend) ~= "string" or not backends.can(rec.backend, "attach") then
    errors.raise("sandbox_not_alive", "only " .. which("attach") .. " outlives its host")
  end
  local sb = setmetatable({
    backend = rec.backend, _impl = backends.get(rec.backend), image = rec.image, id = rec.id, dir = dir,
    auto_clear_seconds = rec.auto_clear_seconds, state = "pending", phases = {}, state_history = {},
    create_time = rec.created, start_time = rec.created,
  }, Sandbox)
  sb._impl.attach(sb, rec)
  for _, name in ipairs(PHASES) do sb:_phase(name, "success", "adopted") end
  live[sb] = true
  local where = sb:_where() -- the address its clients reach it by, its backend says
  sb.host_name, sb.host_ip = where.host_name, where.host_ip
  sb:_transition("running", "adopted")
  return sb
end

--- Remove what a sandbox no host serves any more left (its record rec,
--- nil when unreadable, and its dir; sandbox.attach failed on it): its
--- backend's part (a container the record proves its own) and the dir.
--- Returns true; or false and the seconds to wait, the dir kept, when
--- that part may still appear (a container create in flight when its
--- host died) and final is not set. Raises, keeping the dir, when that
--- part cannot be removed now (its engine does not answer).
function M.release(rec, dir, final)
  local impl = type(rec) == "table" and type(rec.backend) == "string" and backends.get(rec.backend)
  if impl and impl.release then
    local done, wait = impl.release(rec, dir, final)
    if done == false then return false, wait end
  end
  state.remove_dir(dir)
  return true
end

--- The resource limits of start options opts, checked: {memory=,
--- pids_limit=, disk=}, bytes and a count, nil for none (an option nil or
--- 0). memory and disk are bytes or sizes ("8g", "512m"); pids_limit a
--- whole number. What each bounds, on which backend: docs/lua-api.md.
function M.limits(opts)
  local images = require "rock.images"
  local out = {
    memory = images.parse_size(opts.memory, "sandbox.start: 'memory'"),
    disk = images.parse_size(opts.disk, "sandbox.start: 'disk'"),
  }
  local p = opts.pids_limit
  if p ~= nil then
    p = type(p) == "number" and math.tointeger(p)
    if not p or p < 0 or p > 1 << 31 then
      errors.raise("invalid_argument", "sandbox.start: 'pids_limit' must be a whole number from 0 (none) up, got " ..
        tostring(opts.pids_limit))
    end
    out.pids_limit = p
  end
  for k, v in pairs(out) do if v == 0 then out[k] = nil end end
  -- cpus is no limit kept here, but a number past range would reach the
  -- engine as NanoCpus 1e39
  local c = opts.cpus
  if c ~= nil and (type(c) ~= "number" or c ~= c or c < 0 or c > M.MAX_CPUS) then
    errors.raise("invalid_argument", string.format("sandbox.start: 'cpus' must be a number from 0 (none) to %d, got %s",
      M.MAX_CPUS, tostring(c)))
  end
  return out
end
M.MAX_CPUS = 1 << 16

--- Start a sandbox and wait until its rocklet answers.
---@param opts table {backend="auto"|"docker"|"podman"|"local", image=,
---  pull="missing"|"always"|"never", memory= ("8g" or bytes), cpus=,
---  pids_limit=, disk= ("10g" or bytes; the limits: M.limits, nil or 0 is
---  none), env={K=v}, mounts={"host:ctr[:ro]"}, network= (default
---  "none"), engine_args= (extra HostConfig fields), auto_clear_seconds=
---  (idle lease), startup_timeout= (seconds to wait for the rocklet,
---  default M.DEFAULT_STARTUP_TIMEOUT = 60), sandbox_id= (default a fresh
---  "rk-..."; ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$), start_retry_times= (0,
---  a whole number up to M.MAX_START_RETRIES = 100), on_create=fn(sb)
---  (the Sandbox before it starts), on_phase=fn(sb, name, status, message)
---  (each start phase's change: image_pull ..., a backend's own: slurm's
---  "queued")}
---@return rock.Sandbox
function M.start(opts)
  opts = check_table(opts, "sandbox.start")
  opt(opts.backend, "string", "sandbox.start", "backend")
  opt(opts.base_url, "string", "sandbox.start", "base_url")
  opt(opts.image, "string", "sandbox.start", "image")
  local backend = backends.resolve(opts)
  seconds(opts.auto_clear_seconds, "sandbox.start", "auto_clear_seconds")
  seconds(opts.startup_timeout, "sandbox.start", "startup_timeout")
  if opts.sandbox_id ~= nil and not state.valid_id(opts.sandbox_id) then
    errors.raise("invalid_argument", "sandbox.start: 'sandbox_id' must match " ..
      "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$, got " .. string.format("%q", tostring(opts.sandbox_id)))
  end
  opt(opts.env, "table", "sandbox.start", "env")
  opt(opts.mounts, "table", "sandbox.start", "mounts")
  opt(opts.engine_args, "table", "sandbox.start", "engine_args")
  opt(opts.on_create, "function", "sandbox.start", "on_create")
  opt(opts.on_phase, "function", "sandbox.start", "on_phase")
  local limits = M.limits(opts)
  local retries = opt(opts.start_retry_times, "number", "sandbox.start", "start_retry_times") or 0
  retries = math.tointeger(retries) -- a float loop bound (NaN, -1, 2^63) ran no attempt: nil, no error
  if not retries or retries < 0 or retries > M.MAX_START_RETRIES then
    errors.raise("invalid_argument", string.format(
      "sandbox.start: 'start_retry_times' must be a whole number from 0 to %d, got %s",
      M.MAX_START_RETRIES, tostring(opts.start_retry_times)))
  end
  local given = opts
  opts = {} -- the backends' copy, with the defaults filled in
  for k, v in pairs(given) do opts[k] = v end
  opts.startup_timeout = opts.startup_timeout or M.DEFAULT_STARTUP_TIMEOUT
  opts.limits = limits
  require("rock.gc").once()
  local failures = {}
  for attempt = 1, retries + 1 do
    local sb, err = start_once(backend, opts)
    if sb then
      sb.start_failures = failures
      return sb
    end
    failures[#failures + 1] = err
    if attempt <= retries and not errors.is(err, "invalid_argument") then
      log.warn("sandbox", "start failed (attempt %d of %d): %s; retrying",
        attempt, retries + 1, tostring(err))
    else
      err.attempts = failures
      error(err, 0)
    end
  end
end

--- If the rocklet is gone for good (the backend says why), the sandbox is
--- stopped: record it (state "stopped", event "rocklet_gone", stop_reason).
--- Returns the reason, or nil while it runs.
function Sandbox:_check_gone()
  if self.state ~= "running" then return self.stop_reason end
  local ok, why = pcall(self._impl.gone, self)
  if not ok or not why then return nil end
  self.stop_reason = why
  self.stop_time = now()
  self:_transition("stopped", "rocklet_gone")
  return why
end

--- One data-plane operation of the contract (backends/init.lua: name,
--- its arguments, the seconds it may take, a host file to stream).
function Sandbox:_op(name, args, timeout, file)
  if self.state ~= "running" then
    errors.raise("sandbox_not_alive", "sandbox " .. tostring(self.id) .. " is " .. self.state ..
      (self.stop_reason and (": " .. self.stop_reason) or ""), { op = name })
  end
  local ok, res = pcall(self._impl.op, self, name, args or {}, timeout, file)
  if ok then return res end
  if errors.is(res, "sandbox_not_alive") then
    local why = self:_check_gone()
    if why then res.message = res.message .. " (" .. why .. ")" end
  end
  error(res, 0)
end

--- Grace on top of a command's own timeout for the HTTP exchange.
local CALL_MARGIN = 30

--- Start a bash session. opts: session (default "default"),
--- startup_source (list of files to source), env, cwd, startup_timeout,
--- remote_user (the shell runs as this user of the sandbox's /etc/passwd;
--- default: the rocklet's user, root in a container).
--- Returns {output=} (what the startup files printed).
function Sandbox:create_session(opts)
  opts = check_table(opts, "create_session")
  local st = seconds(opts.startup_timeout, "create_session", "startup_timeout")
    or M.DEFAULT_SESSION_STARTUP_TIMEOUT
  local r = self:_op("create_session", {
    session = opt(opts.session, "string", "create_session", "session") or "default",
    startup_source = list_or_nil(opt(opts.startup_source, "table", "create_session", "startup_source")),
    env = opt(opts.env, "table", "create_session", "env"),
    cwd = opt(opts.cwd, "string", "create_session", "cwd"),
    remote_user = opt(opts.remote_user, "string", "create_session", "remote_user"),
    startup_timeout = st,
  }, st + CALL_MARGIN)
  return { output = r.output, session_type = "bash", exit_code = r.exit_code }
end

--- Run a command in a session. opts: session, command (any bytes: one
--- that is not UTF-8 or holds a NUL travels base64-encoded), timeout
--- (seconds, default none), max_output (bytes returned, default 1 MiB).
--- Returns {output, exit_code, failure_reason, truncated, output_file}.
function Sandbox:run_in_session(opts)
  opts = check_table(opts, "run_in_session")
  local timeout = seconds(opts.timeout, "run_in_session", "timeout")
  local command = need(opts.command, "string", "run_in_session", "command")
  return self:_op("run_in_session", {
    session = opt(opts.session, "string", "run_in_session", "session") or "default",
    command = command,
    timeout = timeout,
    max_output = max_output(opts.max_output, "run_in_session"),
  }, timeout and timeout + CALL_MARGIN or nil)
end

--- ROCK's arun. mode "normal" (the default) is run_in_session(opts).
--- mode "nohup" runs command as a background job outside every session
--- (rock.job): opts command, cwd, env, output_file, wait (default true),
--- wait_timeout (seconds, default none), max_output. wait=false returns
--- the rock.Job (job.id, job.pid, job.output_file, job:wait(timeout),
--- job:kill(signal), job:status()); else the job's result after waiting:
--- {output, exit_code, output_file, job_id, pid, failure_reason = "" |
--- "timeout" (still running: it is not killed), ...}.
function Sandbox:arun(opts)
  opts = check_table(opts, "arun")
  local mode = opt(opts.mode, "string", "arun", "mode") or "normal"
  if mode == "nohup" then return require("rock.job").arun(self, opts) end
  if mode ~= "normal" then
    errors.raise("invalid_argument", "arun: 'mode' must be \"normal\" or \"nohup\", got " ..
      string.format("%q", mode))
  end
  return self:run_in_session(opts)
end

--- The sandbox's background jobs (rock.job), oldest first: running ones
--- and the last 1000 finished; opts.running = true keeps the running.
--- Each {job_id, pid, running, exit_code, output_file, command,
--- started_at, ended_at}.
function Sandbox:jobs(opts)
  return require("rock.job").list(self, check_table(opts, "jobs"))
end

--- Interrupt the command running in a session (its output so far comes
--- back to run_in_session with failure_reason "interrupted").
function Sandbox:interrupt(opts)
  opts = check_table(opts, "interrupt")
  return self:_op("interrupt", { session = opts.session or "default" }, CALL_MARGIN)
end

--- Close a session and everything it started.
function Sandbox:close_session(opts)
  opts = check_table(opts, "close_session")
  return self:_op("close_session", { session = opts.session or "default" }, CALL_MARGIN)
end

--- Run one process outside any session. command: a list (run as is) or a
--- string (run by /bin/sh -c). Returns {stdout, stderr, exit_code}.
function Sandbox:execute(opts)
  opts = check_table(opts, "execute")
  local cmd = opts.command
  if type(cmd) ~= "string" and type(cmd) ~= "table" then
    errors.raise("invalid_argument", "execute: 'command' must be a string or a list")
  end
  local timeout = seconds(opts.timeout, "execute", "timeout")
  return self:_op("execute", {
    command = cmd, timeout = timeout,
    cwd = opt(opts.cwd, "string", "execute", "cwd"),
    env = opt(opts.env, "table", "execute", "env"),
    max_output = max_output(opts.max_output, "execute"),
  }, timeout and timeout + CALL_MARGIN or nil)
end

--- Write a file (parents created). content is any bytes: content that
--- is not UTF-8 or holds a NUL travels base64-encoded and lands as is.
--- Returns {success=true, message=}.
function Sandbox:write_file(opts)
  opts = check_table(opts, "write_file")
  return self:_op("write_file", {
    path = need(opts.path, "string", "write_file", "path"),
    content = need(opts.content, "string", "write_file", "content"),
  }, CALL_MARGIN)
end

--- Read a file (a regular file, up to 32 MiB: a larger one is for
--- download). Returns {content=}: text (invalid UTF-8 replaced, as
--- command output is cleaned), or with binary=true the exact bytes. The
--- bytes come in one raw body (the rocklet's GET /file, `rock serve`'s
--- GET .../file): no JSON, no base64 on the way.
function Sandbox:read_file(opts)
  opts = check_table(opts, "read_file")
  return self:_op("read_file", {
    path = need(opts.path, "string", "read_file", "path"),
    binary = opt(opts.binary, "boolean", "read_file", "binary"),
  }, CALL_MARGIN)
end

--- Download a file of the sandbox to a host file, any size: streamed
--- (never held in memory) when the backend can (download_stream), else
--- through read_file. opts: path (in the sandbox), file (the host file:
--- written beside it, then renamed over it once whole; a failure or a
--- cancel leaves no file), timeout (seconds, default none). Returns
--- {success=true, size=, message=}.
function Sandbox:download(opts)
  opts = check_table(opts, "download")
  local path = need(opts.path, "string", "download", "path")
  local file = need(opts.file, "string", "download", "file")
  local timeout = seconds(opts.timeout, "download", "timeout")
  if not self._impl.caps.download_stream then -- the backend reads it whole (backends/init.lua)
    local content = self:read_file{ path = path, binary = true }.content
    local tmp = file .. ".rock-part"
    local f = io.open(tmp, "wb")
    local ok = f and f:write(content) and f:close()
    if not ok or not os.rename(tmp, file) then
      os.remove(tmp)
      errors.raise("io_error", "download: cannot write " .. file)
    end
    return { success = true, size = #content, message = "downloaded " .. path .. " to " .. file }
  end
  return self:_op("download", { path = path, file = file }, timeout)
end

--- Upload a host file into the sandbox at path (parents made), streamed
--- (never held in memory: the rocklet's PUT /file, `rock serve`'s PUT
--- .../file) when the backend can (upload_stream), else as one
--- write_file. opts: path, file (the host file).
function Sandbox:upload(opts)
  opts = check_table(opts, "upload")
  local path = need(opts.path, "string", "upload", "path")
  local file = need(opts.file, "string", "upload", "file")
  local st = require("luv").fs_stat(file)
  if not st or st.type ~= "file" then
    errors.raise("invalid_argument", "upload: " .. file .. " is not a readable regular file")
  end
  if not self._impl.caps.upload_stream then -- the backend takes it whole (backends/init.lua)
    local f = io.open(file, "rb")
    local content = f and f:read("a")
    if f then f:close() end
    if not content then errors.raise("io_error", "upload: cannot read " .. file) end
    return self:_op("write_file", { path = path, content = content }, CALL_MARGIN + st.size / (1 << 20))
  end
  return self:_op("upload", { path = path }, CALL_MARGIN + st.size / (1 << 20), file)
end

--- Python's str() of a float that is not an integer: the shortest digits
--- that read back as x (what SWE-agent renders of a model's 1.5, and
--- argparse then names: "invalid int value: '1.5'").
local function py_float(x)
  if x ~= x then return "nan" end
  if x == math.huge or x == -math.huge then return x > 0 and "inf" or "-inf" end
  for p = 1, 17 do
    local s = string.format("%." .. p .. "g", x)
    if tonumber(s) == x then return s end
  end
end

--- SWE-agent's str_replace_editor, run by the rocklet (any image: no
--- python or bash needed). opts: command ("view" | "create" |
--- "str_replace" | "insert" | "undo_edit"), path (absolute), file_text,
--- view_range {a, b}, old_str, new_str, insert_line, cwd (for the hint
--- after a relative path; default "/"). insert_line and view_range's
--- elements are taken as SWE-agent's argparse takes them: an integer (a
--- float with an integral value too: JSON's numbers all read as floats),
--- or a string int() reads ("1", " +1 "); what argparse refuses is the
--- tool's error 2, and a view_range that is not two integers its error 11.
--- Returns {output, error, exit_code}: a tool error (error=true,
--- SWE-agent's exit code) is data for the model, not a raise. The undo
--- history lives in the rocklet.
function Sandbox:editor(opts)
  opts = check_table(opts, "editor")
  local vr = opts.view_range
  if type(vr) == "table" and next(vr) == nil then
    vr = nil -- [] is no range (cjson would send {})
  elseif vr ~= nil and not require("cjson.safe").encode(vr) then -- a function, a sparse table
    errors.raise("invalid_argument", "editor: 'view_range' must be a list of two integers")
  end
  local line = opts.insert_line
  if math.type(line) == "float" then
    line = math.tointeger(line) or py_float(line)
  elseif line ~= nil and not ({ number = true, string = true, boolean = true })[type(line)] then
    errors.raise("invalid_argument", "editor: 'insert_line' must be an integer or a string")
  end
  return self:_op("editor", {
    command = need(opts.command, "string", "editor", "command"),
    path = need(opts.path, "string", "editor", "path"),
    file_text = opt(opts.file_text, "string", "editor", "file_text"),
    old_str = opt(opts.old_str, "string", "editor", "old_str"),
    new_str = opt(opts.new_str, "string", "editor", "new_str"),
    insert_line = line, view_range = vr,
    cwd = opt(opts.cwd, "string", "editor", "cwd"),
  }, CALL_MARGIN)
end

--- Is the sandbox's rocklet answering? When it is gone for good, the
--- sandbox's state becomes "stopped" (get_status says why).
function Sandbox:is_alive()
  if self.state ~= "running" then return false end
  local ok, alive = pcall(self._impl.is_alive, self)
  if ok and alive then return true end
  self:_check_gone()
  return false
end

--- ROCK's SandboxStatus: {sandbox_id, state, is_alive, status (phases),
--- image, create_time, start_time, stop_time, state_history, ...}. A
--- sandbox whose rocklet died reads state "stopped", is_alive false, and
--- stop_reason says why.
function Sandbox:get_status()
  return M.status(self, self:is_alive())
end

--- The address a sandbox's clients reach it by and its backend's own
--- status fields (the contract's status(sb)); this node's before a
--- backend knows (a start in flight).
function Sandbox:_where()
  local ok, w = pcall(self._impl.status, self)
  return ok and w or backends.this_host()
end

local function iso(t)
  if not t then return json_null() end
  return os.date("!%Y-%m-%dT%H:%M:%SZ", math.floor(t))
end

--- The one status builder: ROCK's SandboxStatus of the state model m (a
--- Sandbox, or `rock serve`'s entry), alive whether it answers. With
--- wire (`rock serve`'s answer), times are ISO 8601 strings, what is
--- unknown JSON null, and wire.extra's fields are added (ROCK's fields
--- of the request: user_id, ...); else times are os.time() seconds.
--- sb is the Sandbox (nil before it exists): its backend says where.
function M.status(m, alive, wire, sb)
  sb = sb or (getmetatable(m) == Sandbox and m or nil)
  local where = sb and sb:_where() or backends.this_host()
  local st = {
    sandbox_id = m.id, state = m.state, is_alive = alive == true, stop_reason = m.stop_reason,
    status = m.phases, phases = m.phases, backend = m.backend,
    image = m.image, cpus = m.cpus, memory = m.memory, limits = m.limits,
    host_name = where.host_name, host_ip = where.host_ip, port_mapping = where.port_mapping or {},
    create_time = m.create_time, start_time = m.start_time,
    stop_time = m.stop_time, state_history = m.state_history,
  }
  for k, v in pairs(where) do if st[k] == nil then st[k] = v end end -- the backend's own (slurm_job_id)
  if not wire then return st end
  local null = json_null()
  local phases = {}
  for name, p in pairs(m.phases or {}) do
    phases[name] = { status = p.status, message = p.message or null,
      started_at = iso(p.started_at), completed_at = iso(p.completed_at) }
  end
  local history = require("rock.json").array()
  for i, h in ipairs(m.state_history or {}) do
    history[i] = { from_state = h.from_state, to_state = h.to_state, event = h.event, timestamp = iso(h.timestamp) }
  end
  st.status, st.phases, st.state_history, st.stop_reason, st.limits = phases, nil, history, nil, nil
  st.cpus, st.memory, st.disk = m.cpus or null, m.memory or null, m.disk or null
  st.create_time, st.start_time, st.stop_time = iso(m.create_time), iso(m.start_time), iso(m.stop_time)
  for k, v in pairs(wire.extra or {}) do st[k] = v end
  return st
end

--- Stop the sandbox: every process in it ends, then its files go. Safe
--- to call twice. It runs to its end even under a rock.timeout whose
--- deadline falls meanwhile (task.shield): a stop cut half-way would
--- leave a container that nothing stops any more. Its own steps are
--- bounded (the local backend: 5 s for /close, 5 s for the exit).
function Sandbox:stop()
  if self._released then return end
  self._released = true
  live[self] = nil
  task.shield(self._impl.stop, self)
  if self.state ~= "stopped" then
    self.stop_time = now()
    self:_transition("stopped", "stop")
  end
end

--- Keep the sandbox running past this host (for debugging a failed
--- task): the exit sweep and `rock gc` leave it; its idle lease
--- (auto_clear_seconds) still ends it, and sb:stop() or `rock gc` after
--- the lease removes it. Local sandboxes die with their host regardless.
function Sandbox:keep()
  if not self._impl.caps.keep then
    errors.raise("invalid_argument", "keep is not supported for a " .. self.backend .. " sandbox")
  end
  if self.state ~= "running" then
    errors.raise("sandbox_not_alive", "sandbox " .. tostring(self.id) .. " is " .. self.state)
  end
  live[self] = nil
  self.kept = true
  self._impl.keep(self)
end

--- Commit the sandbox's files as the image named reference ("repo[:tag]")
--- on backends that can (docker and podman: an image in the engine; runc:
--- an archive in the image cache, backends/runc.lua). Returns its id.
function Sandbox:commit(reference)
  if self.state ~= "running" then
    errors.raise("sandbox_not_alive", "sandbox " .. tostring(self.id) .. " is " .. self.state)
  end
  return self:_capable("commit", "commit")(self, reference)
end

--- The backend's function for capability cap (backends/init.lua) for
--- what (a phrase: "commit"), or raises invalid_argument naming the
--- backends that have it.
function Sandbox:_capable(cap, what)
  if not self._impl.caps[cap] then
    errors.raise("invalid_argument", string.format("%s needs %s (this one is %s)", what, which(cap), self.backend))
  end
  return self._impl[backends.CAPS[cap]]
end

--- Stop every sandbox this host started and did not stop (the exit sweep
--- of _main.lua; recipes may call it too).
function M.stop_all()
  local list = {}
  for sb in pairs(live) do list[#list + 1] = sb end
  for _, sb in ipairs(list) do
    local ok, err = pcall(sb.stop, sb)
    if not ok then log.error("sandbox", "stopping %s: %s", tostring(sb.id), tostring(err)) end
  end
  return #list
end

--- Sandboxes started and not yet stopped.
function M.live_count()
  local n = 0
  for _ in pairs(live) do n = n + 1 end
  return n
end

return M
