-- The SWE agent on the demo tasks in docker (issue 8): the recipe as a user
-- runs it, graded as SWE-bench grades (pytest in a fresh sandbox from the
-- task's image). The oracle resolves every task; swe_eval.lua on its
-- preds.jsonl says the same; the solving replays resolve, the failing ones
-- do not; grading in place agrees; podman runs the oracle too.
-- Needs the engines fixture and the demo images (recipes/demo/build-image).
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local F = dofile(here .. "fake_openai.lua")
local json = rock.json

local demo = here .. "../../recipes/demo/"
local rock_exe = T.rock_exe()
local root = T.sh("mktemp -d " .. (os.getenv("TMPDIR") or "/tmp") .. "/rock-agent-engine.XXXXXX"):gsub("%s+$", "")

local read = T.read

local tasks = rock.agent.tasks.load(demo .. "tasks.jsonl")
local ids = {}
for i, t in ipairs(tasks) do ids[i] = t.instance_id end
table.sort(ids)
T.ok(#ids >= 3, "at least three demo tasks")

local function recipe(name, args, env)
  local out, ok = T.sh(string.format("%s %s %s%s %s", env or "", rock_exe, here .. "../../recipes/", name, args))
  return out, ok
end

local function trajectories(dir)
  local list = {}
  for l in io.lines(dir .. "/trajectories.jsonl") do list[#list + 1] = json.decode(l) end
  table.sort(list, function(a, b) return a.instance_id < b.instance_id end)
  return list
end

T.test("the oracle resolves every demo task; swe_eval agrees on its preds", function()
  local out = root .. "/oracle"
  local log, ok = recipe("swe_agent.lua", string.format(
    "--instances %stasks.jsonl --policy oracle --out %s --backend docker --workers 3", demo, out))
  T.ok(ok, "swe_agent ran: " .. log)
  T.match(log, "resolved%s+" .. #ids)
  local s = json.decode(read(out .. "/summary.json"))
  T.eq(s.total, #ids)
  T.eq(#s.resolved_ids, #ids)
  for i, id in ipairs(ids) do T.eq(s.resolved_ids[i], id) end
  for _, tr in ipairs(trajectories(out)) do
    T.eq(tr.termination_reason, "finish")
    T.eq(tr.eval.status, "resolved")
    T.eq(tr.sandbox.backend, "docker")
    T.match(tr.sandbox.image, "^rock%-demo/")
    -- the eval log, as SWE-bench's parser reads it
    local elog = read(out .. "/eval/" .. tr.instance_id .. ".log")
    T.ok(elog, "eval log of " .. tr.instance_id)
    T.match(elog, "%+ : '>>>>> Start Test Output'")
    T.match(elog, "%+ : '>>>>> End Test Output'")
    T.match(elog, "PASSED")
    for _, name in ipairs(tr.eval.report.FAIL_TO_PASS.success) do T.eq(tr.eval.tests[name], "PASSED") end
  end
  -- the same preds, graded by swe_eval.lua
  local eout = root .. "/eval"
  local elog, eok = recipe("swe_eval.lua", string.format(
    "--instances %stasks.jsonl --predictions %s/preds.jsonl --out %s --backend docker --workers 3", demo, out, eout))
  T.ok(eok, "swe_eval ran: " .. elog)
  local rep = json.decode(read(eout .. "/report.json"))
  T.eq(#rep.resolved_ids, #ids)
  table.sort(rep.resolved_ids)
  for i, id in ipairs(ids) do T.eq(rep.resolved_ids[i], id) end
  T.eq(#rep.error_ids, 0)
end)

T.test("replays: the solving one resolves, the failing one does not; --finish-only", function()
  local out = root .. "/solve"
  local log, ok = recipe("swe_agent.lua", string.format(
    "--instances %stasks.jsonl --policy replay --replay %sreplay-solve.jsonl --out %s --backend docker --workers 3 --finish-only",
    demo, demo, out))
  T.ok(ok, log)
  local s = json.decode(read(out .. "/summary.json"))
  T.eq(#s.resolved_ids, #ids)
  T.match(log, "finish%-only: " .. #ids .. " kept")
  for _, tr in ipairs(trajectories(out)) do
    T.ok(#tr.steps >= 2, "steps")
    T.eq(tr.messages[#tr.messages].role, "tool")
  end
  local out2 = root .. "/fail"
  log, ok = recipe("swe_agent.lua", string.format(
    "--instances %stasks.jsonl --policy replay --replay %sreplay-fail.jsonl --out %s --backend docker --workers 3",
    demo, demo, out2))
  T.ok(ok, log)
  s = json.decode(read(out2 .. "/summary.json"))
  T.eq(#s.resolved_ids, 0)
  T.eq(#s.unresolved_ids + #s.empty_patch_ids, #ids)
  for _, tr in ipairs(trajectories(out2)) do
    T.eq(tr.termination_reason, "finish") -- it submitted: a clean finish, a wrong answer
    T.eq(tr.eval.resolved, false)
  end
end)

T.test("grading in place agrees with grading in a fresh sandbox", function()
  local t = tasks[1]
  local summary, trajs = rock.agent.run({ t }, { policy = "oracle", backend = "docker", out = root .. "/inplace",
    eval = "in_place", progress = false })
  T.eq(summary.resolved, 1)
  T.eq(trajs[1].eval.status, "resolved")
  T.ok(read(root .. "/inplace/eval/" .. t.instance_id .. ".log"), "log kept")
end)

T.test("podman: the oracle resolves a demo task", function()
  local t = tasks[1]
  local summary = rock.agent.run({ t }, { policy = "oracle", backend = "podman", out = root .. "/podman",
    progress = false })
  T.eq(summary.resolved, 1)
end)

T.test("a model (fake endpoint, tool calls) solves a demo task: resolved", function()
  local t = tasks[1]
  local by_id = require("rock.agent.policies.replay").load(demo .. "replay-solve.jsonl")
  local script = {}
  for i, a in ipairs(by_id[t.instance_id]) do
    local args = {}
    for k, v in pairs(a) do if k ~= "tool" then args[k] = v end end
    script[i] = F.tool_call(a.tool, args)
  end
  local srv = F.start(script)
  local ok, summary, trajs = pcall(rock.agent.run, { t }, { policy = "model", backend = "docker",
    out = root .. "/model", progress = false, cost_limit = 0,
    llm = rock.llm.new{ base_url = srv.url, model = "fake-model", api_key = "k", retries = 0 } })
  local reqs = srv.requests()
  srv.stop()
  T.ok(ok, tostring(summary))
  T.eq(trajs[1].termination_reason, "finish")
  T.eq(summary.resolved, 1)
  T.eq(#reqs, #script)
  -- the last request holds the whole conversation, each call answered
  local msgs = reqs[#reqs].body.messages
  T.eq(#msgs, 2 + 2 * (#script - 1))
  T.eq(msgs[#msgs].role, "tool")
end)

T.test("the sandbox killed mid-run (its init, from the host): aborted, not graded", function()
  local t = tasks[1]
  local sleep = string.format("sleep 37.%d", math.random(1, 1 << 30))
  local rf = root .. "/kill-replay.jsonl"
  local f = assert(io.open(rf, "w"))
  f:write(json.encode({ instance_id = t.instance_id, actions = {
    { tool = "bash", command = "echo started" }, { tool = "bash", command = sleep }, { tool = "submit" } } }), "\n")
  f:close()
  local killer = rock.spawn(function()
    for _ = 1, 600 do
      local pid = T.sh("pgrep -fx '" .. sleep .. "'"):match("%d+")
      if pid then
        -- the command's bash, then the rocklet: the container's init
        local bash = T.sh("ps -o ppid= -p " .. pid):match("%d+")
        local init = T.sh("ps -o ppid= -p " .. bash):match("%d+")
        T.sh("kill -9 " .. init)
        return init
      end
      rock.sleep(0.05)
    end
  end)
  local summary, trajs = rock.agent.run({ t }, { policy = "replay", replay = rf, backend = "docker",
    out = root .. "/killed", progress = false })
  T.ok(rock.wait(killer), "the rocklet was found and killed")
  T.eq(trajs[1].termination_reason, "aborted")
  T.eq(trajs[1].exit_status, "sandbox_not_alive")
  T.eq(trajs[1].eval, nil)
  T.eq(summary.error_ids[1], t.instance_id)
  T.eq(#summary.unresolved_ids, 0)
end)

os.execute("rm -rf '" .. root .. "'")
T.done()
