--- rock.sandbox: start sandboxes and talk to them; names follow ROCK's SDK.
--   local sb = rock.sandbox.start{ backend = "local" }
--   sb:create_session{ session = "bash-1" }
--   local obs = sb:run_in_session{ session = "bash-1", command = "ls", timeout = 30 }
--   sb:stop()
-- A non-zero exit status is data (obs.exit_code), not an error. Failures of
-- the machinery (unknown session, dead sandbox, bad arguments) raise
-- {code=, message=}. Backends live in backends/*.lua; the wire protocol in
-- rocklet.lua. Every call here waits: run it inside a task.
local errors = require "rock.errors"
local rocklet = require "rock.rocklet"

local M = {}

local backends = {
  ["local"] = "rock.backends.local",
  docker = "rock.backends.container",
  podman = "rock.backends.container",
}
local live = {} -- sandboxes started and not stopped, for the exit sweep
local PHASES = { "image_pull", "container_create", "container_start", "rocklet_ready" }

---@class rock.Sandbox
---@field id string
---@field backend string
---@field state string  "pending" | "running" | "stopped"
local Sandbox = {}
Sandbox.__index = Sandbox
M.Sandbox = Sandbox

local function now() return os.time() end

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

function Sandbox:_transition(to, event)
  self.state_history[#self.state_history + 1] = {
    from_state = self.state, to_state = to, event = event, timestamp = now(),
  }
  self.state = to
end

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
end

local function start_once(backend, opts)
  local sb = setmetatable({
    backend = backend, image = opts.image, memory = opts.memory, cpus = opts.cpus,
    auto_clear_seconds = opts.auto_clear_seconds,
    state = "pending", phases = {}, state_history = {},
    create_time = now(), start_time = now(),
  }, Sandbox)
  sb._impl = require(backends[backend])
  for _, name in ipairs(PHASES) do
    sb:_phase(name, "waiting")
  end
  if backend == "local" then sb:_phase("image_pull", "success", "no image for the local backend") end
  local ok, err = pcall(sb._impl.start, sb, opts, function(...) sb:_phase(...) end)
  if not ok then
    for _, name in ipairs(PHASES) do
      local p = sb.phases[name]
      if p.status == "running" or p.status == "waiting" then
        p.status = errors.is(err, "timeout") and "timeout" or "failed"
        p.message = tostring(err.message or err)
        p.completed_at = now()
        break
      end
    end
    sb:_transition("stopped", "start_failed")
    if not errors.is(err) then err = errors.new("sandbox_start_failed", tostring(err)) end
    err.phases, err.sandbox_id = sb.phases, sb.id
    return nil, err
  end
  sb:_transition("running", "started")
  live[sb] = true
  return sb
end

--- Start a sandbox and wait until its rocklet answers.
---@param opts table {backend="auto"|"docker"|"podman"|"local", image=,
---  pull="missing"|"always"|"never", memory= ("8g" or bytes), cpus=,
---  pids_limit=, env={K=v}, mounts={"host:ctr[:ro]"}, network= (default
---  "none"), engine_args= (extra HostConfig fields), auto_clear_seconds=
---  (idle lease), startup_timeout=, sandbox_id=, start_retry_times= (0)}
---@return rock.Sandbox
function M.start(opts)
  opts = check_table(opts, "sandbox.start")
  local backend = opt(opts.backend, "string", "sandbox.start", "backend") or "auto"
  if backend == "auto" then -- a container backend needs an image to run
    backend = opts.image and require("rock.engine").detect() or "local"
  end
  if not backends[backend] then
    errors.raise("invalid_argument", "sandbox.start: unknown backend '" .. backend ..
      "' (auto, docker, podman or local)")
  end
  opt(opts.auto_clear_seconds, "number", "sandbox.start", "auto_clear_seconds")
  opt(opts.startup_timeout, "number", "sandbox.start", "startup_timeout")
  opt(opts.image, "string", "sandbox.start", "image")
  opt(opts.env, "table", "sandbox.start", "env")
  opt(opts.mounts, "table", "sandbox.start", "mounts")
  opt(opts.engine_args, "table", "sandbox.start", "engine_args")
  opt(opts.pids_limit, "number", "sandbox.start", "pids_limit")
  local retries = opt(opts.start_retry_times, "number", "sandbox.start", "start_retry_times") or 0
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
      io.stderr:write(string.format("rock: sandbox start failed (attempt %d of %d): %s; retrying\n",
        attempt, retries + 1, tostring(err)))
    else
      err.attempts = failures
      error(err, 0)
    end
  end
end

--- POST to this sandbox's rocklet.
function Sandbox:_call(path, body, timeout)
  if self.state ~= "running" then
    errors.raise("sandbox_not_alive", "sandbox " .. tostring(self.id) .. " is " .. self.state,
      { op = path:sub(2) })
  end
  return rocklet.call(self.socket, path, body, timeout)
end

--- Grace on top of a command's own timeout for the HTTP exchange.
local CALL_MARGIN = 30

--- Start a bash session. opts: session (default "default"),
--- startup_source (list of files to source), env, cwd, startup_timeout.
--- Returns {output=} (what the startup files printed).
function Sandbox:create_session(opts)
  opts = check_table(opts, "create_session")
  local st = opt(opts.startup_timeout, "number", "create_session", "startup_timeout") or 60
  local r = self:_call("/create_session", {
    session = opt(opts.session, "string", "create_session", "session") or "default",
    startup_source = opt(opts.startup_source, "table", "create_session", "startup_source"),
    env = opt(opts.env, "table", "create_session", "env"),
    cwd = opt(opts.cwd, "string", "create_session", "cwd"),
    startup_timeout = st,
  }, st + CALL_MARGIN)
  return { output = r.output, session_type = "bash", exit_code = r.exit_code }
end

--- Run a command in a session. opts: session, command, timeout (seconds,
--- default none), max_output (bytes returned, default 1 MiB).
--- Returns {output, exit_code, failure_reason, truncated, output_file}.
function Sandbox:run_in_session(opts)
  opts = check_table(opts, "run_in_session")
  local timeout = opt(opts.timeout, "number", "run_in_session", "timeout")
  return self:_call("/run_in_session", {
    session = opt(opts.session, "string", "run_in_session", "session") or "default",
    command = need(opts.command, "string", "run_in_session", "command"),
    timeout = timeout,
    max_output = opt(opts.max_output, "number", "run_in_session", "max_output"),
  }, timeout and timeout + CALL_MARGIN or nil)
end
Sandbox.arun = Sandbox.run_in_session

--- Interrupt the command running in a session (its output so far comes
--- back to run_in_session with failure_reason "interrupted").
function Sandbox:interrupt(opts)
  opts = check_table(opts, "interrupt")
  return self:_call("/interrupt", { session = opts.session or "default" }, CALL_MARGIN)
end

--- Close a session and everything it started.
function Sandbox:close_session(opts)
  opts = check_table(opts, "close_session")
  return self:_call("/close_session", { session = opts.session or "default" }, CALL_MARGIN)
end

--- Run one process outside any session. command: a list (run as is) or a
--- string (run by /bin/sh -c). Returns {stdout, stderr, exit_code}.
function Sandbox:execute(opts)
  opts = check_table(opts, "execute")
  local cmd = opts.command
  if type(cmd) ~= "string" and type(cmd) ~= "table" then
    errors.raise("invalid_argument", "execute: 'command' must be a string or a list")
  end
  local timeout = opt(opts.timeout, "number", "execute", "timeout")
  return self:_call("/execute", {
    command = cmd, timeout = timeout,
    cwd = opt(opts.cwd, "string", "execute", "cwd"),
    env = opt(opts.env, "table", "execute", "env"),
    max_output = opt(opts.max_output, "number", "execute", "max_output"),
  }, timeout and timeout + CALL_MARGIN or nil)
end

--- Write a text file (parents created). Returns {success=true, message=}.
function Sandbox:write_file(opts)
  opts = check_table(opts, "write_file")
  return self:_call("/write_file", {
    path = need(opts.path, "string", "write_file", "path"),
    content = need(opts.content, "string", "write_file", "content"),
  }, CALL_MARGIN)
end

--- Read a text file. Returns {content=}.
function Sandbox:read_file(opts)
  opts = check_table(opts, "read_file")
  return self:_call("/read_file", { path = need(opts.path, "string", "read_file", "path") },
    CALL_MARGIN)
end

--- Is the sandbox's rocklet answering?
function Sandbox:is_alive()
  if self.state ~= "running" then return false end
  return (pcall(rocklet.call, self.socket, "/is_alive", {}, 5))
end

--- ROCK's SandboxStatus: {sandbox_id, state, is_alive, status (phases),
--- image, create_time, start_time, stop_time, state_history, ...}.
function Sandbox:get_status()
  return {
    sandbox_id = self.id, state = self.state, is_alive = self:is_alive(),
    status = self.phases, phases = self.phases, backend = self.backend,
    image = self.image, cpus = self.cpus, memory = self.memory,
    host_name = "localhost", host_ip = "127.0.0.1", port_mapping = {},
    create_time = self.create_time, start_time = self.start_time,
    stop_time = self.stop_time, state_history = self.state_history,
  }
end

--- Stop the sandbox: every process in it ends, then its files go. Safe
--- to call twice.
function Sandbox:stop()
  if self.state == "stopped" then return end
  live[self] = nil
  self._impl.stop(self)
  self.stop_time = now()
  self:_transition("stopped", "stop")
end

--- Keep the sandbox running past this host (for debugging a failed
--- task): the exit sweep and `rock gc` leave it; its idle lease
--- (auto_clear_seconds) still ends it, and sb:stop() or `rock gc` after
--- the lease removes it. Local sandboxes die with their host regardless.
function Sandbox:keep()
  if self.state ~= "running" then
    errors.raise("sandbox_not_alive", "sandbox " .. tostring(self.id) .. " is " .. self.state)
  end
  live[self] = nil
  self.kept = true
  if self._impl.keep then self._impl.keep(self) end
end

--- Stop every sandbox this host started and did not stop (the exit sweep
--- of _main.lua; recipes may call it too).
function M.stop_all()
  local list = {}
  for sb in pairs(live) do list[#list + 1] = sb end
  for _, sb in ipairs(list) do
    local ok, err = pcall(sb.stop, sb)
    if not ok then io.stderr:write("rock: stopping ", tostring(sb.id), ": ", tostring(err), "\n") end
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
