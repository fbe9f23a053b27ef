--- rock.serve.gem: GEM's environment API of ROCK, under /apis/v1/envs/gem/
-- (ROCK-API.md "GEM env API"; docs/environments.md): bare JSON, no
-- envelope. POST make {env_id, cpus?, memory?} -> {sandbox_id}: a
-- sandbox of its own (the registry's: admission, lease and placement as
-- any sandbox; image from $ROCK_ENVHUB_DEFAULT_DOCKER_IMAGE, else the
-- registration's, else ROCK's python:3.11) holding the environment
-- (rock.envs.make); it asks for cpus and memory (rock's fields), else the
-- registration's, else DEFAULT_CPUS and DEFAULT_MEMORY: not ROCK's 2
-- CPUs and 8g of a sandbox, so a node holds many environments; reset
-- {sandbox_id, seed?} -> {observation, info}; step {sandbox_id, action}
-- -> {observation, reward, terminated, truncated, info}, or (rock's) step
-- {steps: [{sandbox_id, action}, ...]} -> {results: [...]} stepping them
-- concurrently; close {sandbox_id} -> {sandbox_id}: the sandbox stopped
-- and forgotten; list -> {env_id: [the registered ids]}. Where ROCK
-- answers a traceback, this answers {detail, code} (STATUS): 400 a bad
-- field, 404 an unknown env_id or sandbox_id, 409 the environment's own
-- error, 410 an environment that died (its last words in detail) or was
-- closed while the call ran, 503 a sandbox the node cannot hold or
-- start, 504 a call past its timeout; 500 only for a bug. A make that
-- fails leaves no sandbox behind. An environment idle past its lease is
-- closed with it (the registry's reaper). Answers carry numbers exactly
-- (json.encode_exact: a reward reads back as the double the environment
-- wrote).
local json = require "rock.json"
local errors = require "rock.errors"
local task = require "rock.task"
local envs = require "rock.envs"
local images = require "rock.images"
local sandbox = require "rock.sandbox"

local M = {}

M.PREFIX = "/apis/v1/envs/gem/"
M.DEFAULT_IMAGE = "python:3.11" -- ROCK's
M.START_WAIT = 300 -- seconds a make waits for its sandbox (ROCK's cap)
-- What make asks of the node (admission, and the sandbox's limits) for an
-- environment whose registration says nothing (rock.envs: the shipped
-- games ask for less): a process in a language runtime, idle between steps
M.DEFAULT_CPUS = 0.5
M.DEFAULT_MEMORY = "1g"

-- rock.errors codes -> HTTP statuses; anything else is a 500 (a bug)
local STATUS = { invalid_argument = 400, bad_request = 400, not_found = 404, sandbox_not_found = 404,
  image_not_found = 404, env_error = 409, conflict = 409, sandbox_not_alive = 410, cancelled = 410,
  timeout = 504, insufficient_resources = 503, sandbox_start_failed = 503, engine_unavailable = 503,
  engine_error = 503, node_lost = 503, connection_failed = 503, spawn_failed = 503 }
M.STATUS = STATUS

local function fail(status, code, detail)
  error({ gem_status = status, code = code, detail = detail }, 0)
end
local function bad(detail) fail(400, "invalid_argument", detail) end

local function str(args, name)
  local v = args[name]
  if type(v) ~= "string" or v == "" then bad("field '" .. name .. "' must be a non-empty string") end
  return v
end

-- The environment of sandbox_id, held for the call (its lease renewed).
local function env_of(srv, id, held)
  local e = srv.gem_envs[id]
  local entry = srv.registry:get(id)
  if not e or not entry then
    fail(404, "not_found", "no environment in sandbox '" .. id .. "' (never made, or closed)")
  end
  local ok, err = pcall(srv.registry.live, srv.registry, entry, held)
  if not ok then
    srv.gem_envs[id] = nil -- its sandbox is gone (stopped, its lease lapsed): so is the environment
    fail(410, "sandbox_not_alive", "the environment's sandbox " .. id .. " is gone: " ..
      tostring(errors.is(err) and err.message or err))
  end
  return e
end

local function info_of(i) return type(i) == "table" and i or {} end -- {} is written as {}

-- make's request of the node: args' cpus and memory (checked), else spec's, else the defaults
local function request_of(args, spec)
  local cpus, mem = args.cpus, args.memory
  if cpus == json.null then cpus = nil end
  if mem == json.null then mem = nil end
  if cpus ~= nil and (type(cpus) ~= "number" or not (cpus > 0 and cpus <= sandbox.MAX_CPUS)) then
    bad("field 'cpus' must be a number above 0, up to " .. sandbox.MAX_CPUS)
  end
  if mem ~= nil then
    local ok, n = pcall(images.parse_size, mem, "memory")
    if (type(mem) ~= "string" and type(mem) ~= "number") or not ok or not n or n <= 0 then
      bad("field 'memory' must be a size above 0: \"512m\", \"2g\", or bytes")
    end
  end
  return cpus or spec.cpus or M.DEFAULT_CPUS, mem or spec.memory or M.DEFAULT_MEMORY
end

local function make(srv, args)
  local id = str(args, "env_id")
  local spec = envs.spec(id)
  if not spec then fail(404, "not_found", "no environment '" .. id .. "'; /list has the registered ids") end
  local cpus, memory = request_of(args, spec)
  local reg = srv.registry
  local image = os.getenv("ROCK_ENVHUB_DEFAULT_DOCKER_IMAGE")
  if not image or image == "" then image = spec.image or M.DEFAULT_IMAGE end
  local entry = reg:start({ image = image, cpus = cpus, memory = memory }, {})
  -- a make that fails leaves nothing: its sandbox_id was never given out
  local function drop(event) pcall(reg.stop, reg, entry, event); pcall(reg.delete, reg, entry) end
  if not reg:wait_started(entry, M.START_WAIT) then
    drop("start_timeout")
    fail(504, "timeout", "the sandbox for " .. id .. " did not start within " .. M.START_WAIT .. " s; it is stopped")
  end
  if entry.state ~= "running" then
    local err = entry.start_error
    drop("start_failed")
    if errors.is(err) and STATUS[err.code] then error(err, 0) end -- its own code: insufficient_resources, ...
    fail(503, "sandbox_start_failed", "the sandbox for " .. id .. " did not start: " ..
      tostring(errors.is(err) and err.message or err or entry.state))
  end
  local ok, env = pcall(envs.make, id, { sandbox = entry.sb })
  if not ok then
    drop("env_failed")
    error(env, 0)
  end
  srv.gem_envs[entry.id] = env
  return { sandbox_id = entry.id }
end

local function reset(srv, args, held)
  local id = str(args, "sandbox_id")
  local seed = args.seed
  if seed == json.null then seed = nil end
  if seed ~= nil then -- cjson reads every number as a float
    seed = type(seed) == "number" and math.tointeger(seed)
    if not seed then bad("field 'seed' must be an integer or absent") end
  end
  local obs, info = env_of(srv, id, held):reset(seed)
  return { observation = obs, info = info_of(info) }
end

-- The sandbox_id and action of one step's args (where: "" or "steps[i]: ").
local function step_args(args, where)
  local id = args.sandbox_id
  if type(id) ~= "string" or id == "" then bad(where .. "field 'sandbox_id' must be a non-empty string") end
  if type(args.action) ~= "string" then bad(where .. "field 'action' must be a string") end
  return id, args.action
end

local function step_one(srv, args, held)
  local id, action = step_args(args, "")
  local obs, reward, term, trunc, info = env_of(srv, id, held):step(action)
  return { observation = obs, reward = reward, terminated = term, truncated = trunc, info = info_of(info) }
end

-- The answer of a failed call inside a vectorized step: {error, code}.
local function error_item(err)
  if type(err) == "table" and err.gem_status then return { error = err.detail, code = err.code } end
  if errors.is(err) then return { error = err.message, code = err.code } end
  return { error = tostring(err), code = "internal" }
end

-- rock's vectorized step: the whole list is checked before anything is
-- stepped, so a bad item refuses the call (400) with no environment
-- stepped and none held; then every item steps in a task of its own.
local function step(srv, args, held)
  if args.steps == nil then return step_one(srv, args, held) end
  local list = args.steps
  if type(list) ~= "table" or (next(list) ~= nil and list[1] == nil) then
    bad("field 'steps' must be a list of {sandbox_id, action}")
  end
  local seen = {}
  for i, s in ipairs(list) do
    local where = "steps[" .. i .. "]: "
    if type(s) ~= "table" or (next(s) ~= nil and s[1] ~= nil) then
      bad("steps[" .. i .. "] must be an object {sandbox_id, action}")
    end
    local id = step_args(s, where)
    if seen[id] then
      bad(where .. "sandbox '" .. id .. "' is stepped already by steps[" .. seen[id] .. "]: one step per environment per call")
    end
    seen[id] = i
  end
  local tasks = {}
  for i, s in ipairs(list) do tasks[i] = task.spawn(step_one, srv, s, held) end
  local values, errs = task.wait(tasks)
  local out = {}
  for i = 1, #list do out[i] = errs[i] and error_item(errs[i]) or values[i] end
  return { results = json.array(out) }
end

local function close(srv, args)
  local id = str(args, "sandbox_id")
  local env, entry = srv.gem_envs[id], srv.registry:get(id)
  if not env or not entry then
    fail(404, "not_found", "no environment in sandbox '" .. id .. "' (never made, or closed)")
  end
  srv.gem_envs[id] = nil
  pcall(env.close, env)
  srv.registry:stop(entry, "close")
  pcall(srv.registry.delete, srv.registry, entry)
  return { sandbox_id = id }
end

local function list() return { env_id = envs.list() } end

local ROUTES = { make = make, reset = reset, step = step, close = close, list = list }
M.ROUTES = ROUTES

--- Answer one request under PREFIX: (status, body table).
function M.handle(srv, name, req, args_of)
  srv.gem_envs = srv.gem_envs or {}
  local fn = ROUTES[name]
  if not fn then return 404, { detail = "Not Found" } end
  if req.method ~= "POST" then return 405, { detail = "Method Not Allowed" } end
  local held = {}
  local ok, res = pcall(function()
    if fn == list then return list() end -- ROCK's SDK sends {sandbox_id}; nothing of it is needed
    local okb, args = pcall(args_of, req)
    if not okb then bad("the body must be a JSON object: " .. tostring(type(args) == "table" and args.why or args)) end
    return fn(srv, args, held)
  end)
  for i = 1, #held do srv.registry:release(held[i]) end
  if ok then return 200, json.encode_exact(res) end -- rewards exact (cjson keeps 14 digits)
  if type(res) == "table" and res.gem_status then return res.gem_status, { detail = res.detail, code = res.code } end
  if errors.is(res) then return STATUS[res.code] or 500, { detail = res.message, code = res.code } end
  return 500, { detail = tostring(res), code = "internal" }
end

return M
