-- group.lua: a group of sandboxes (rock.group), one command in each.
--   rock recipes/group.lua [--backend auto|docker|podman|local] [--image IMAGE]
--     [--size 4] [--start-concurrency 2] [--start-retry-times 3] [--require-all]
--     [--command 'uname -a']
-- Starts --size sandboxes, at most --start-concurrency at once, runs the
-- command in every member at once, prints each member's output and the
-- group's report (JSON: which started, which did not and why), then stops
-- them all. Exits 1 when a member did not start or its command failed.
local rock = require "rock"

local opts = rock.flags.parse(arg, {
  backend = { default = "auto", help = "auto|docker|podman|local" },
  image = { help = "image to run (auto then picks docker, then podman)" },
  size = { default = 4, help = "members" },
  start_concurrency = { default = 2, help = "starts under way at once, at most" },
  start_retry_times = { default = 3, help = "retries per member after a failed start" },
  require_all = { type = "boolean", help = "all or nothing" },
  command = { default = "uname -n", help = "the command each member runs" },
}, "rock recipes/group.lua [flags]")

local t0 = rock.uv.hrtime()
local g = rock.group.start{
  backend = opts.backend, image = opts.image, size = opts.size,
  start_concurrency = opts.start_concurrency, start_retry_times = opts.start_retry_times,
  require_all = opts.require_all,
}
io.write(string.format("group: %d of %d started in %.0f ms\n", #g, g.size, (rock.uv.hrtime() - t0) / 1e6))
local ok, runs = pcall(function()
  local tasks = {}
  for i, sb in ipairs(g) do
    tasks[i] = rock.spawn(sb.execute, sb, { command = opts.command, timeout = 60 })
  end
  return { rock.wait(tasks) }
end)
g:stop()
if not ok then error(runs, 0) end
local values, errs = runs[1], runs[2]
local failed = #g.failures > 0
for i, sb in ipairs(g) do
  local r = values[i]
  if r then
    io.write(string.format("member %d (%s): exit %d: %s", sb.group_index, sb.id, r.exit_code, r.stdout))
    failed = failed or r.exit_code ~= 0
  else
    io.write(string.format("member %d (%s): %s\n", sb.group_index, sb.id, tostring(errs[i])))
    failed = true
  end
end
print(rock.json.encode(g:report()))
if failed then os.exit(1) end
