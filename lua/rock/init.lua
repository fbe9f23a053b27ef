--- rock: the Lua library of rock (require "rock").
-- Tasks: rock.spawn, rock.wait, rock.sleep, rock.semaphore, rock.timeout.
-- Sandboxes: rock.sandbox.start{...} (sandbox.lua), their background jobs
-- rock.job (sb:arun{mode="nohup"}), many alike at once rock.group (group.lua), warm ones rock.pool (pool.lua). HTTP: rock.http.
-- Images: rock.images (cache). rock.teardown (end-of-task policies),
-- rock.engine (Engine API), rock.gc, rock.backends (the backend
-- contract). Models: rock.llm (chat completions).
-- SWE agents: rock.agent (the loop, grading), rock.filters. Fleets: rock.fleet (a pool of
-- `rock serve` nodes, placement).
-- Also rock.json (lua-cjson, with json.array for lists), rock.uv (luv), rock.errors, rock.log (also
-- a function: rock.log(level, fmt, ...)), rock.flags (recipes' --flags), rock.text (linear trims).
-- Modules load on first use, so `require "rock"` stays cheap.
local task = require "rock.task"

local M = {
  spawn = task.spawn,
  wait = task.wait,
  sleep = task.sleep,
  semaphore = task.semaphore,
  timeout = task.timeout,
  await = task.await,
}

local lazy = {
  sandbox = "rock.sandbox", http = "rock.http", errors = "rock.errors",
  images = "rock.images", teardown = "rock.teardown", engine = "rock.engine", gc = "rock.gc",
  json = "rock.json", uv = "luv", core = "rock.core", task = "rock.task",
  flags = "rock.flags", llm = "rock.llm", agent = "rock.agent", filters = "rock.filters",
  serve = "rock.serve",
  group = "rock.group", -- rock.group.start{size=, ...}: sandboxes started together
  log = "rock.log", -- rock.log(level, fmt, ...) and rock.log.warn(area, fmt, ...)
  text = "rock.text", -- trims that stay linear on any input
  job = "rock.job",
  envs = "rock.envs", -- environments: GEM's gym interface (docs/environments.md)
  backends = "rock.backends", -- the backend contract and registry (docs/backends.md)
  fleet = "rock.fleet", -- many `rock serve` nodes as one pool
  pool = "rock.pool", -- rock.pool{image=, size=, ...}: warm sandboxes, claimed at once
}

--- rock.run(fn, ...): run fn as the main task and the loop until all tasks
--- end (what `rock recipe.lua` does for a recipe); for stock lua5.4.
function M.run(fn, ...) return require("rock._main").run(fn, ...) end

function M.version() return require("rock.core").version() end

return setmetatable(M, {
  __index = function(t, k)
    local name = lazy[k]
    if not name then return nil end
    local mod = require(name)
    rawset(t, k, mod)
    return mod
  end,
})
