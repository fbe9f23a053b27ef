--- rock._main: how the host runs a recipe. Its top-level code becomes the
-- main task; the loop runs until that task and every task it spawned are
-- done; then sandboxes the recipe left running are stopped, so nothing
-- outlives the process. At start, a gc pass (gc.once) runs beside the main
-- task. Exit status: 0, or 1 when the main task failed.
local task = require "rock.task"
local sandbox = require "rock.sandbox"

local M = {}

function M.run(fn, ...)
  require("rock.gc").once() -- beside the main task: reap what dead hosts left
  local main = task.spawn(fn, ...)
  task.run_until(function() return main.done and task.live() == 0 end)
  if not main.done or task.live() > 0 then
    io.stderr:write("rock: ", task.live(), " task(s) still waiting with nothing left to wake them\n")
  end
  if sandbox.live_count() > 0 then
    local sweep = task.spawn(sandbox.stop_all)
    task.run_until(function() return sweep.done end)
  end
  return (main.done and main.ok) and 0 or 1
end

return M
