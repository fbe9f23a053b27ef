--- rock._main: how the host runs a recipe. Its top-level code becomes the
-- main task; the loop runs until that task and every task it spawned are
-- done; then sandboxes the recipe left running are stopped, so nothing
-- outlives the process. At start, a gc pass (gc.once) runs beside the main
-- task. SIGINT or SIGTERM runs the same exit sweep and exits 128+signal,
-- unless the recipe set a handler (rock.on_signal(fn)): then fn(name) runs
-- in a task of its own and the recipe winds down by itself (e.g. ends its
-- running tasks and writes their results), and the host exits 128+signal
-- when it is done. A second signal exits at once. Exit status: 0, or 1
-- when the main task failed.
local uv = require "luv"
local task = require "rock.task"
local log = require "rock.log"
local sandbox = require "rock.sandbox"

local M = {}

local SIGNALS = { sigint = 2, sigterm = 15 }
local handler -- rock.on_signal's fn
local caught  -- the first signal's name

--- rock.on_signal(fn): on the first SIGINT or SIGTERM call fn("sigint" |
--- "sigterm") in a new task instead of stopping everything at once; nil
--- restores the default.
function M.on_signal(fn)
  assert(fn == nil or type(fn) == "function", "rock.on_signal: fn must be a function or nil")
  handler = fn
end

--- Watch SIGINT and SIGTERM while a recipe runs. The handles are unref'd
--- (they never keep the loop alive); returns a function closing them.
local function watch_signals()
  local handles = {}
  for name, num in pairs(SIGNALS) do
    local h = uv.new_signal()
    h:start(name, function()
      local code = 128 + num
      if caught then os.exit(code) end -- a second signal: at once
      caught = name
      if handler then
        log.warn("host", "%s: winding down (again to exit now)", name:upper())
        task.spawn(handler, name)
        return
      end
      log.warn("host", "%s: stopping this host's sandboxes (again to exit now)", name:upper())
      task.spawn(function()
        pcall(sandbox.stop_all)
        os.exit(code)
      end)
    end)
    h:unref()
    handles[#handles + 1] = h
  end
  return function()
    for _, h in ipairs(handles) do
      if not h:is_closing() then h:close() end
    end
  end
end

function M.run(fn, ...)
  local unwatch = watch_signals()
  require("rock.gc").once() -- beside the main task: reap what dead hosts left
  local main = task.spawn(fn, ...)
  task.run_until(function() return main.done and task.live() == 0 end)
  if not main.done or task.live() > 0 then
    log.error("task", "%d task(s) still waiting with nothing left to wake them", task.live())
  end
  if sandbox.live_count() > 0 then
    local sweep = task.spawn(sandbox.stop_all)
    task.run_until(function() return sweep.done end)
  end
  -- after a signal, exit here with its status, the handles still
  -- watching: closed, they would give a second signal back its default
  -- action, and the host would die of it in its teardown instead of
  -- exiting 128+signal
  if caught then os.exit(128 + SIGNALS[caught]) end
  unwatch()
  uv.run("nowait") -- let the closes complete
  return (main.done and main.ok) and 0 or 1
end

return M
