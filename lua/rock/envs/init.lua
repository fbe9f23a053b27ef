--- rock.envs: the environment seam (docs/environments.md). An environment
-- is GEM's gym interface:
--   env:reset(seed)   -> observation, info
--   env:step(action)  -> observation, reward, terminated, truncated, info
--   env:close()
-- made by id from a registry: register(env_id, spec), make(env_id, opts),
-- list(). A spec is either {make = function(env_id, opts) -> env} or a
-- process environment {command = {argv...} | env_id = <shipped id>,
-- image = ?, timeout = ?, cpus = ?, memory = ?} that runs inside a
-- sandbox (process.lua; cpus and memory: what its sandbox asks). rock's
-- shipped environments (GEM's GuessTheNumber and Sokoban, native: the
-- rocklet's `gem` command) are registered here; gem_spec(env_id) serves
-- an environment of an installed gem package (gem_adapter.py, in images
-- with python3 and gem), and $ROCK_GEM_ENVS ("id,id,...") registers such
-- ids at load (for `rock serve`). swe:<instance_id> is a SWE-bench task
-- (swe.lua; make's opts.task or opts.tasks holds it), the environment the
-- agent loop (rock.agent.episode) steps.
local errors = require "rock.errors"

local M = {}

local registry, order = {}, {}

--- The shipped ids (the rocklet's `rocklet gem --list`).
M.SHIPPED = {
  "game:GuessTheNumber-v0-easy", "game:GuessTheNumber-v0-hard", "game:GuessTheNumber-v0-random",
  "game:Sokoban-v0-easy", "game:Sokoban-v0-hard", "game:Sokoban-v0-random",
}

--- Register spec under env_id (a new id, or replacing one).
function M.register(env_id, spec)
  if type(env_id) ~= "string" or env_id == "" then
    errors.raise("invalid_argument", "register: env_id must be a non-empty string")
  end
  if type(spec) ~= "table" or (type(spec.make) ~= "function" and type(spec.command) ~= "table"
      and type(spec.env_id) ~= "string") then
    errors.raise("invalid_argument", "register: a spec is {make=function} or {command={argv...}} or {env_id=<shipped id>}")
  end
  if not registry[env_id] then order[#order + 1] = env_id end
  registry[env_id] = spec
end

--- The registered ids, in registration order.
function M.list()
  local out = {}
  for i, id in ipairs(order) do out[i] = id end
  return out
end

--- The spec registered under env_id, or nil.
function M.spec(env_id) return registry[env_id] end

--- Make an environment (*waits*). opts: sandbox (a running sandbox to
--- hold it; it is not stopped on close), else sandbox_opts (for
--- rock.sandbox.start; image defaults to the spec's), timeout (seconds
--- per call, default 60), close_timeout (seconds close() waits for the
--- answer to GEM's {"op":"close"} before killing it, default 5). Raises
--- not_found for an unknown id, invalid_argument for a timeout not above 0.
function M.make(env_id, opts)
  opts = opts or {}
  if type(env_id) ~= "string" then errors.raise("invalid_argument", "make: env_id must be a string", { op = "make" }) end
  local spec = registry[env_id]
  if not spec and env_id:find("^swe:.") then -- a SWE task (opts.task or opts.tasks): envs/swe.lua
    return require("rock.envs.swe").make(env_id, opts)
  end
  if not spec then
    errors.raise("not_found", "no environment '" .. tostring(env_id) .. "' (rock.envs.list() has the registered ids)",
      { op = "make" })
  end
  if spec.make then return spec.make(env_id, opts) end
  return require("rock.envs.process").make(env_id, spec, opts)
end

local adapter -- gem_adapter.py's text, read once
--- The spec of env_id served by gem's own gem.make(env_id) in the sandbox:
--- `python3 -c <gem_adapter.py> env_id` (extra: image, timeout, env, cwd).
function M.gem_spec(env_id, extra)
  if not adapter then
    local path = package.searchpath("rock.envs.gem_adapter", (package.path:gsub("%.lua", ".py")))
    local f = path and io.open(path, "rb")
    if not f then errors.raise("not_found", "rock.envs: gem_adapter.py is not beside rock/envs/init.lua") end
    adapter = f:read("a")
    f:close()
  end
  local spec = { command = { "python3", "-c", adapter, env_id } }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return spec
end

--- What a shipped game asks of a node when a sandbox is started for it
--- (rock serve's make; rock.envs.make with sandbox_opts): the rocklet and
--- the game take about 3 MB and no CPU between steps.
M.SHIPPED_CPUS, M.SHIPPED_MEMORY = 0.05, "64m"

for _, id in ipairs(M.SHIPPED) do
  M.register(id, { env_id = id, cpus = M.SHIPPED_CPUS, memory = M.SHIPPED_MEMORY })
end
for id in (os.getenv("ROCK_GEM_ENVS") or ""):gmatch("[^,%s]+") do M.register(id, M.gem_spec(id)) end

return M
