--- rock.envs.process: an environment that is a process in a sandbox,
-- speaking JSON lines (docs/environments.md); the sandbox's rocklet starts
-- it and relays each call (/env/start, /env/call, /env/stop). Its
-- {"error": ...} answers are raised as env_error; its death, as
-- sandbox_not_alive with its exit status and stderr's tail; a call past
-- its timeout as timeout (the rocklet killed it); one cut by close() as
-- cancelled. close() sends GEM's
-- {"op":"close"} first (its answer awaited close_timeout seconds at
-- most), then stops the process tree whatever it did.
local errors = require "rock.errors"
local task = require "rock.task"

local M = {}

local Env = {}
Env.__index = Env

local HTTP_MARGIN = 30
M.CLOSE_TIMEOUT = 5 -- seconds close() waits for the environment's answer to {"op":"close"}

-- A call that fails because close() came meanwhile (the environment
-- stopped under it) says so: cancelled.
local function call(self, request)
  if self.closed then errors.raise("conflict", "the environment " .. self.env_id .. " is closed") end
  local ok, r = pcall(self.sandbox._op, self.sandbox, "env/call",
    { env = self.handle, request = request, timeout = self.timeout }, self.timeout + HTTP_MARGIN)
  if not ok and self.closed and not task.cancelled(r) then
    errors.raise("cancelled", "the environment " .. self.env_id .. " was closed while this " ..
      tostring(request.op) .. " ran", { op = request.op })
  end
  if not ok then error(r, 0) end
  if r.error ~= nil then
    errors.raise("env_error", self.env_id .. ": " .. tostring(r.error), { op = request.op })
  end
  return r
end

--- One raw call ({op=...}) -> the answer table; for tests and new ops.
function Env:_call_raw(request) return call(self, request or { op = "nope" }) end

--- reset(seed) -> observation, info (seed: an integer, or nil for a fresh one)
function Env:reset(seed)
  if seed ~= nil and math.type(seed) ~= "integer" then
    errors.raise("invalid_argument", "reset: seed must be an integer or nil")
  end
  local r = call(self, { op = "reset", seed = seed })
  return r.observation, r.info or {}
end

--- step(action) -> observation, reward, terminated, truncated, info
function Env:step(action)
  if type(action) ~= "string" then errors.raise("invalid_argument", "step: action must be a string") end
  local r = call(self, { op = "step", action = action })
  return r.observation, r.reward, r.terminated == true, r.truncated == true, r.info or {}
end

--- close(): GEM's {"op":"close"} is sent first, so the environment can
--- release what it holds (its answer awaited close_timeout seconds at
--- most: past that, or on a call already under way, it is not waited
--- for); then the process tree is killed, and the sandbox stopped if make
--- started it. Safe twice.
function Env:close()
  if self.closed then return end
  self.closed = true
  pcall(self.sandbox._op, self.sandbox, "env/call",
    { env = self.handle, request = { op = "close" }, timeout = self.close_timeout },
    self.close_timeout + HTTP_MARGIN)
  pcall(self.sandbox._op, self.sandbox, "env/stop", { env = self.handle }, HTTP_MARGIN)
  if self.owns_sandbox then self.sandbox:stop() end
end

-- seconds: a number above 0, at most a day (a call always has a timeout)
local function seconds(v, what)
  if type(v) ~= "number" or not (v > 0 and v <= 86400) then
    errors.raise("invalid_argument", "make: " .. what .. " must be a number of seconds above 0, up to 86400, got " ..
      tostring(v), { op = "make" })
  end
  return v
end

--- Start spec's process in opts.sandbox or in a sandbox of its own.
--- opts (or spec): timeout (seconds per call, default 60), close_timeout
--- (seconds close() waits for the answer to {"op":"close"}, default
--- CLOSE_TIMEOUT).
function M.make(env_id, spec, opts)
  local timeout = seconds(opts.timeout or spec.timeout or 60, "timeout")
  local close_timeout = seconds(opts.close_timeout or spec.close_timeout or M.CLOSE_TIMEOUT, "close_timeout")
  local sb, owns = opts.sandbox, false
  if not sb then
    local so = {}
    for k, v in pairs(opts.sandbox_opts or {}) do so[k] = v end
    so.image = so.image or spec.image
    so.cpus = so.cpus or spec.cpus
    so.memory = so.memory or spec.memory
    sb, owns = require("rock.sandbox").start(so), true
  end
  local ok, r = pcall(sb._op, sb, "env/start",
    { command = spec.command, env_id = spec.command == nil and spec.env_id or nil, env = spec.env, cwd = spec.cwd },
    HTTP_MARGIN)
  if not ok then
    if owns then sb:stop() end
    error(r, 0)
  end
  return setmetatable({ env_id = env_id, sandbox = sb, owns_sandbox = owns, handle = r.env, pid = r.pid,
    timeout = timeout, close_timeout = close_timeout, closed = false }, Env)
end

return M
