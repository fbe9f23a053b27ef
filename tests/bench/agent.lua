-- agent.lua: the loop's host overhead per step, demo tasks per minute and
-- eval throughput: instances graded per minute (grading.run, gold
-- patches) on the demo tasks and on the SWE-bench-layout images
-- (tests/images/swebench) at 1, 4 and 8 workers (tests/bench/agent).
--   rock agent.lua N ROUNDS -> a report on stdout; PARTS="step tasks eval"
local rock = require "rock"
local json = rock.json
local hr = rock.uv.hrtime
local n, rounds = tonumber(arg[1]) or 500, tonumber(arg[2]) or 3
local here = arg[0]:match("(.*/)")
local demo = here .. "../../recipes/demo/"
local tmp = os.getenv("TMPDIR") or "/tmp"

local function sh(cmd)
  local p = io.popen(cmd)
  local s = p:read("a")
  p:close()
  return (s:gsub("%s+$", ""))
end

local parts = os.getenv("PARTS") or "step tasks eval"
local function part(name) return (" " .. parts .. " "):find(" " .. name .. " ", 1, true) end

-- a git repo for the step part
local repo = tmp .. "/repo"
os.execute("mkdir -p " .. repo .. " && cd " .. repo .. " && echo x > f && git init -q && git add -A && "
  .. "git -c user.name=b -c user.email=b@b commit -qm base")
local base = sh("git -C " .. repo .. " rev-parse HEAD")
local t = { instance_id = "bench__steps-1", repo = "bench/steps", repo_dir = repo, base_commit = base,
            problem_statement = "bench", test_patch = "", FAIL_TO_PASS = json.array(), PASS_TO_PASS = json.array() }
local actions = {}
for i = 1, n do actions[i] = { tool = "bash", command = "true #" .. i } end -- distinct: no loop detection
actions[n + 1] = { tool = "submit" }
local replay = tmp .. "/replay.jsonl"
local f = assert(io.open(replay, "w"))
f:write(json.encode({ instance_id = t.instance_id, actions = actions }), "\n")
f:close()

if part("step") then
print(string.format("step overhead: %d steps per round, %d rounds (local backend)", n, rounds))
-- the time the loop spends inside run_in_session (the command's round
-- trip), measured around the real method: the rest of a step is the loop's
local Sandbox = rock.sandbox.Sandbox
local real_run, in_cmd = Sandbox.run_in_session, 0
Sandbox.run_in_session = function(...)
  local t0 = hr()
  local r = real_run(...)
  in_cmd = in_cmd + (hr() - t0)
  return r
end
local direct_us, loop_us, own_us = {}, {}, {}
for r = 1, rounds do
  -- direct: the same commands on one sandbox
  local sb = rock.sandbox.start{ backend = "local" }
  sb:create_session{ session = "agent", cwd = repo }
  local t0 = hr()
  for i = 1, n do sb:run_in_session{ session = "agent", command = "true #" .. i, timeout = 60, max_output = 10000 } end
  direct_us[r] = (hr() - t0) / 1e3 / n
  sb:stop()
  -- the loop: only the agent phase (setup and teardown are not steps)
  in_cmd = 0
  local _, trajs = rock.agent.run({ t }, { policy = "replay", replay = replay, backend = "local",
    out = tmp .. "/out-steps-" .. r, eval = "none", progress = false, step_limit = 0 })
  assert(trajs[1].termination_reason == "finish", trajs[1].exit_status)
  loop_us[r] = trajs[1].timings.agent * 1e6 / (n + 1)
  own_us[r] = (trajs[1].timings.agent * 1e9 - in_cmd) / 1e3 / (n + 1)
  print(string.format("  round %d: direct run_in_session %6.1f us/call   loop %6.1f us/step, of which the loop's own %5.1f us",
    r, direct_us[r], loop_us[r], own_us[r]))
end
Sandbox.run_in_session = real_run
table.sort(direct_us); table.sort(loop_us); table.sort(own_us)
local mid = (rounds + 1) // 2
print(string.format("  median: direct %.1f us, loop %.1f us per step; host overhead per step (not the command) %.1f us (target < 1000 us)",
  direct_us[mid], loop_us[mid], own_us[mid]))
end

-- tasks per minute on the demo set, oracle, docker
local ok, up = pcall(function() return require("rock.engine").connect("docker"):ping(2) end)
if not (ok and up) then print("tasks: docker not answering, skipped"); return end
local tasks = rock.agent.tasks.load(demo .. "tasks.jsonl")
local copies = tonumber(os.getenv("COPIES") or "") or 4 -- each task this many times
local function copied(ts)
  local list = {}
  for c = 1, copies do
    for _, x in ipairs(ts) do
      local y = {}
      for k, v in pairs(x) do y[k] = v end
      y.instance_id = x.instance_id .. "-" .. c
      list[#list + 1] = y
    end
  end
  return list
end
local list = copied(tasks)
if part("tasks") then
print(string.format("tasks: %d demo tasks (oracle, docker, eval in a fresh sandbox)", #list))
for _, w in ipairs({ 1, 4, 8 }) do
  local t0 = hr()
  local s = rock.agent.run(list, { policy = "oracle", backend = "docker", workers = w,
    out = tmp .. "/out-tasks-" .. w, progress = false })
  local wall = (hr() - t0) / 1e9
  print(string.format("  workers %d: %5.1f s wall, %6.1f tasks/min, resolved %d/%d; in sandboxes: setup %.1f s, agent %.1f s, eval %.1f s (summed over tasks)",
    w, wall, #list / wall * 60, s.resolved, s.total, s.seconds.setup, s.seconds.agent, s.seconds.eval))
end
end

-- eval throughput: grading.run of each task's gold patch in a fresh sandbox
if not part("eval") then return end
local grading = rock.agent.grading
local function read(path)
  local f = assert(io.open(path, "rb"))
  local t = f:read("a")
  f:close()
  return t
end
-- the SWE-bench-layout rows (classic: repo and version only), as test_engine_swebench makes them
local swe = here .. "../images/swebench/"
local SWE = { { "django", "django__django-90001", "django/django", "5.0" }, { "sympy", "sympy__sympy-90002", "sympy/sympy", "1.12" },
  { "requests", "psf__requests-90003", "psf/requests", "2.27" }, { "pytest", "pytest-dev__pytest-90004", "pytest-dev/pytest", "7.2" } }
local swe_rows = {}
for _, x in ipairs(SWE) do
  local img = rock.images.swebench_name(x[2])
  local present = os.execute("docker image inspect " .. img .. " >/dev/null 2>&1")
  if present then
    local commit = sh(swe .. "make-repo " .. x[1] .. " " .. tmp .. "/swe-" .. x[1])
    swe_rows[#swe_rows + 1] = { instance_id = x[2], repo = x[3], version = x[4], base_commit = commit,
      problem_statement = "", test_patch = read(swe .. "patches/" .. x[1] .. ".test.diff"),
      patch = read(swe .. "patches/" .. x[1] .. ".gold.diff"), FAIL_TO_PASS = json.array(), PASS_TO_PASS = json.array(),
      image = img }
  end
end
local function graded_per_minute(set, w)
  local sem, t0, resolved, secs, running = rock.semaphore(w), hr(), 0, 0, {}
  for _, t in ipairs(set) do
    running[#running + 1] = rock.spawn(function()
      sem:with(function()
        local r = grading.run(t, t.patch, { sandbox = { backend = "docker", pull = "never" } })
        if r.resolved then resolved = resolved + 1 end
        secs = secs + (r.seconds or 0)
      end)
    end)
  end
  rock.wait(running)
  local wall = (hr() - t0) / 1e9
  return wall, #set / wall * 60, resolved, secs
end
for _, set in ipairs({ { "demo tasks", list }, { "SWE-bench-layout images", copied(swe_rows) } }) do
  if #set[2] == 0 then
    print("eval: " .. set[1] .. ": none (tests/images/swebench/build)")
  else
    print(string.format("eval: %d instances, %s (gold patches, a fresh docker sandbox each)", #set[2], set[1]))
    for _, w in ipairs({ 1, 4, 8 }) do
      local wall, rate, resolved, secs = graded_per_minute(set[2], w)
      print(string.format("  workers %d: %5.1f s wall, %6.1f instances graded/min, resolved %d/%d; %.1f s per instance (mean)",
        w, wall, rate, resolved, #set[2], secs / #set[2]))
    end
  end
end
