-- dagger.lua: the DAgger evaluator's host overhead per mixture turn and
-- rounds per minute on the demo tasks (tests/bench/dagger).
--   rock dagger.lua N ROUNDS -> a report on stdout; PARTS="turn rounds"
local rock = require "rock"
local json = rock.json
local dagger = rock.agent.dagger
local scripted = require "rock.agent.policies.scripted"
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

local parts = os.getenv("PARTS") or "turn rounds"
local function part(name) return (" " .. parts .. " "):find(" " .. name .. " ", 1, true) end
local function median(list)
  table.sort(list)
  return list[(#list + 1) // 2]
end

local actions = {}
for i = 1, n do actions[i] = { tool = "bash", command = "true #" .. i } end -- distinct: no loop detection
actions[n + 1] = { tool = "submit" }
local function factory(name) return { name = name, episode = function() return scripted.new(name, actions) end } end

if part("turn") then
  -- 1. the mixture alone: both acts, the draw, the record, then the
  -- record made a dataset line and encoded (what records.lua writes)
  print(string.format("turn overhead: %d turns per round, %d rounds", n, rounds))
  local alone, mixed = {}, {}
  for r = 1, rounds do
    local t0 = hr()
    for _ = 1, 20 do
      local p = factory("replay"):episode({ instance_id = "x" })
      local ctx = { messages = { {}, {} } }
      for _ = 1, n do p:act(ctx) end
    end
    alone[r] = (hr() - t0) / 1e3 / (20 * n)
    t0 = hr()
    for k = 1, 20 do
      local f = dagger.mixture.new{ student = factory("s"), teacher = factory("t"), beta = 0.5, seed = r, round = 1 }
      local p = f:episode({ instance_id = "x" .. k })
      local ctx = { messages = { {}, {} } }
      for _ = 1, n do p:act(ctx) end
      local traj = { instance_id = "x" .. k, termination_reason = "finish", messages = ctx.messages }
      p:annotate(traj)
      for _, line in ipairs(dagger.records.turns(traj, 1)) do json.encode(line) end
    end
    mixed[r] = (hr() - t0) / 1e3 / (20 * n)
    print(string.format("  round %d: one replay's act %5.2f us; mixture turn (two acts, draw, record, dataset line) %5.2f us",
      r, alone[r], mixed[r]))
  end
  print(string.format("  median: replay act %.2f us, mixture turn %.2f us: the mixture's own %.2f us per turn (target < 1000 us)",
    median(alone), median(mixed), median(mixed) - median(alone)))

  -- 2. through the agent loop (local backend): one replay, and the
  -- mixture of two (beta 0.5: each executes about half), the time in the
  -- commands' round trips taken out as tests/bench/agent does
  local repo = tmp .. "/repo"
  os.execute("mkdir -p " .. repo .. " && cd " .. repo .. " && echo x > f && git init -q && git add -A && "
    .. "git -c user.name=b -c user.email=b@b commit -qm base")
  local t = { instance_id = "bench__dagger-1", repo = "bench/dagger", repo_dir = repo,
    base_commit = sh("git -C " .. repo .. " rev-parse HEAD"), problem_statement = "bench", test_patch = "",
    FAIL_TO_PASS = json.array(), PASS_TO_PASS = json.array() }
  local Sandbox = rock.sandbox.Sandbox
  local real_run, in_cmd = Sandbox.run_in_session, 0
  Sandbox.run_in_session = function(...)
    local t0 = hr()
    local res = real_run(...)
    in_cmd = in_cmd + (hr() - t0)
    return res
  end
  local function own_us(policy, what)
    in_cmd = 0
    local _, trajs = rock.agent.run({ t }, { policy = policy, backend = "local", out = tmp .. "/out-" .. what,
      eval = "none", progress = false, step_limit = 0 })
    assert(trajs[1].termination_reason == "finish", trajs[1].exit_status)
    os.execute("rm -rf " .. tmp .. "/out-" .. what)
    return (trajs[1].timings.agent * 1e9 - in_cmd) / 1e3 / (n + 1)
  end
  local one, two = {}, {}
  for r = 1, rounds do
    one[r] = own_us(factory("replay"), "one-" .. r)
    two[r] = own_us(dagger.mixture.new{ student = factory("s"), teacher = factory("t"), beta = 0.5, seed = r, round = 1 },
      "mix-" .. r)
    print(string.format("  round %d: the loop's own per step: one replay %6.1f us, the mixture %6.1f us", r, one[r], two[r]))
  end
  Sandbox.run_in_session = real_run
  print(string.format("  median: the loop's own per step %.1f us (one replay), %.1f us (the mixture): +%.1f us per turn",
    median(one), median(two), median(two) - median(one)))
end

-- rounds per minute on the demo tasks, graded in docker, 4 workers
if not part("rounds") then return end
local ok, up = pcall(function() return require("rock.engine").connect("docker"):ping(2) end)
if not (ok and up) then print("rounds: docker not answering, skipped"); return end
local tasks = rock.agent.tasks.load(demo .. "tasks.jsonl")
local copies = tonumber(os.getenv("COPIES") or "") or 4
local list, replay = {}, {}
for l in io.lines(demo .. "replay-fail.jsonl") do
  local rec = json.decode(l)
  for c = 1, copies do replay[#replay + 1] = json.encode({ instance_id = rec.instance_id .. "-" .. c, actions = rec.actions }) end
end
for c = 1, copies do
  for _, x in ipairs(tasks) do
    local y = {}
    for k, v in pairs(x) do y[k] = v end
    y.instance_id = x.instance_id .. "-" .. c
    -- a mixed trajectory can leave a patch whose tests never end (calc:
    -- the student's first edit alone loops in the tokenizer): graded
    -- `error` after a minute, not SWE-bench's 30
    y.eval_timeout = 60
    list[#list + 1] = y
  end
end
local rf = tmp .. "/replay-fail.jsonl"
local f = assert(io.open(rf, "w"))
f:write(table.concat(replay, "\n"), "\n")
f:close()
local R = 2
print(string.format("rounds: %d rounds of %d demo tasks (failing replay student, oracle teacher, docker, graded), 4 workers", R, #list))
local t0 = hr()
local summaries, interrupted = dagger.run(list, { out = tmp .. "/out-rounds", rounds = R, seed = 1,
  student = rock.agent.policy("replay", { replay = rf }), teacher = rock.agent.policy("oracle"),
  agent = { backend = "docker", workers = 4, progress = false } })
local wall = (hr() - t0) / 1e9
for r, s in ipairs(summaries) do
  local errs = 0
  for _, tr in ipairs(rock.agent.output.read_jsonl(string.format("%s/out-rounds/rounds/%d/trajectories.jsonl", tmp, r))) do
    if type(tr.eval) == "table" and tr.eval.status == "error" then errs = errs + 1 end
  end
  print(string.format("  round %d (beta %.3g): %5.1f s, resolved %d/%d (%d evals timed out), %d turns (teacher %d), records %d added, %d dropped",
    r, s.beta, s.seconds_wall, s.resolved, s.total, errs, s.turns, s.executed_by.teacher, s.records.added, s.records.dropped))
end
if interrupted then print("  interrupted (" .. interrupted .. ")"); return end
print(string.format("  %.1f s wall: %.2f rounds/min (%.1f tasks/min)", wall, R / wall * 60, R * #list / wall * 60))
