--- rock.teardown: what happens to a sandbox when its task ends, as one
-- policy applied by one call, on success and on error alike.
--   local policy = { keep_on_failure = true, remove_image = true }
--   local result = rock.teardown.run(policy, { backend = "docker", image = img },
--     function(sb) ... end)                     -- start, run, tear down
--   rock.teardown.apply(sb, policy, failed)     -- or by hand, at the end
-- Policy fields:
--   keep_on_failure  a failed task's sandbox is kept running for debugging
--                    (its idle lease still ends it; `rock gc` spares it
--                    while the lease runs). Default false.
--   remove_image     remove the sandbox's image once the task is done (a
--                    per-task image), unless ROCK_KEEP_IMAGES=1 or the
--                    sandbox was kept, or its backend cannot (the
--                    remove_image capability: backends/init.lua).
--                    Default false.
-- Default: stop and delete.
local errors = require "rock.errors"
local log = require "rock.log"

local M = {}

--- Apply policy to sb, whose task failed or not. Returns what was done:
--- {stopped=, kept=, image_removed=, errors={...}}. Never raises for a
--- teardown step that fails: the step's error is listed and the rest runs.
function M.apply(sb, policy, failed)
  policy = policy or {}
  local done = { stopped = false, kept = false, image_removed = false, errors = {} }
  local function step(fn, ...)
    local ok, err = pcall(fn, ...)
    if not ok then done.errors[#done.errors + 1] = err end
    return ok
  end
  if failed and policy.keep_on_failure then
    done.kept = step(sb.keep, sb)
    if done.kept then
      log.warn("teardown", "task failed; sandbox %s kept for debugging (%s)", tostring(sb.id), sb.backend)
      return done
    end
  end
  done.stopped = step(sb.stop, sb)
  if policy.remove_image and sb.image and sb._impl.caps.remove_image
      and os.getenv("ROCK_KEEP_IMAGES") ~= "1" then
    done.image_removed = step(sb._impl.remove_image, sb)
  end
  return done
end

--- Start a sandbox with start_opts, call fn(sb), then apply policy (also
--- when fn raises, which is then re-raised). Returns fn's results.
function M.run(policy, start_opts, fn)
  if type(fn) ~= "function" then
    errors.raise("invalid_argument", "teardown.run(policy, start_opts, fn): fn must be a function")
  end
  local sb = require("rock.sandbox").start(start_opts)
  local res = table.pack(pcall(fn, sb))
  local done = M.apply(sb, policy, not res[1])
  if not res[1] then
    local err = res[2]
    if type(err) == "table" then err.teardown = done end
    error(err, 0)
  end
  return table.unpack(res, 2, res.n)
end

return M
