-- The DAgger evaluator (issue 20) on the local backend: real git repos,
-- real bash, the real rocklet. Two rounds of a failing replay student and
-- the oracle teacher (beta0 1, exp decay 0.5, a fixed seed) against an
-- independent simulation of the mixture's rule; beta 0 is the student's
-- own run, beta 1 the teacher's; finish-only drops exactly the
-- non-finish; the recipe killed with kill -9, or Ctrl-C, mid-round then --resume
-- (at beta 0, and at a beta that mixes: the same records as a run never
-- killed, the wall time of both runs); a
-- model student and teacher on the fake OpenAI server, the teacher
-- unreachable mid-round; the between-rounds hook, a command and a Lua
-- file; a replay teacher and a Lua schedule (@FILE.lua); model policies in
-- text mode under the linear schedule; the flags that cannot work said in
-- one line; --dry-run's plan; the rounds across three `rock serve` nodes
-- (--nodes). Graded runs of the demo tasks in docker: test_engine_dagger.lua.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local F = dofile(here .. "fake_openai.lua")
local S = dofile(here .. "serve_client.lua")
local json = rock.json
local dagger = rock.agent.dagger
local tools = rock.agent.tools

local root = T.sh("mktemp -d " .. (os.getenv("TMPDIR") or "/tmp") .. "/rock-dagger-test.XXXXXX"):gsub("%s+$", "")
local read, write = T.read, T.write
local rock_exe = T.rock_exe()
local recipe = T.sh("cd " .. here .. "../.. && pwd"):gsub("%s+$", "") .. "/recipes/dagger_eval.lua"

local GOLD = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"

local n_repo = 0
--- A git repo with a buggy calc.py and its gold patch; returns a task.
local function make_task(id)
  n_repo = n_repo + 1
  return T.git_task(string.format("%s/repo%d", root, n_repo), { ["calc.py"] = "def add(a, b):\n    return a - b\n" },
    { instance_id = id, problem_statement = "add() subtracts.", patch = GOLD })
end

local function tasks_of(prefix, n)
  local list = {}
  for i = 1, n do list[i] = make_task(string.format("%s-%d", prefix, i)) end
  return list
end

-- a student that fails: a wrong edit, then submit (some look first)
local function student_actions(t, i)
  local wrong = { tool = "str_replace_editor", command = "str_replace", path = t.repo_dir .. "/calc.py",
    old_str = "return a - b", new_str = "return a * b" }
  if i % 2 == 1 then return { { tool = "bash", command = "grep -n 'a - b' calc.py" }, wrong, { tool = "submit" } } end
  return { wrong, { tool = "submit" } }
end

local function oracle_actions()
  return { { tool = "bash", command = "git apply -v - <<'ROCK_GOLD_PATCH'\n" .. GOLD .. "ROCK_GOLD_PATCH" }, { tool = "submit" } }
end

local function replay_file(tasks, actions_of)
  local path = string.format("%s/replay-%d.jsonl", root, math.random(1 << 30))
  local lines = {}
  for i, t in ipairs(tasks) do lines[i] = json.encode({ instance_id = t.instance_id, actions = actions_of(t, i) }) end
  write(path, table.concat(lines, "\n") .. "\n")
  return path
end

local function tasks_file(tasks)
  local path = string.format("%s/tasks-%d.jsonl", root, math.random(1 << 30))
  local lines = {}
  for i, t in ipairs(tasks) do lines[i] = json.encode(t) end
  write(path, table.concat(lines, "\n") .. "\n")
  return path
end

local function jsonl(path)
  local list = {}
  for l in io.lines(path) do list[#list + 1] = json.decode(l) end
  return list
end

-- a value as text with sorted keys, to compare two decoded JSON values
local function canon(v)
  if type(v) ~= "table" then return json.encode(v) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. canon(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local n_out = 0
local function out_dir()
  n_out = n_out + 1
  return string.format("%s/out%d", root, n_out)
end

local function run(tasks, opts)
  opts.out = opts.out or out_dir()
  opts.agent = opts.agent or {}
  opts.agent.backend, opts.agent.eval, opts.agent.progress = "local", "none", false
  opts.agent.workers = opts.agent.workers or 3
  local summaries = dagger.run(tasks, opts)
  return summaries, opts.out
end

--- The mixture's rule, written again: both lists advance a turn at a
--- time, the k-th draw u picks the teacher when u < beta; an executed
--- list that has run out ends the episode (budget), a submit (finish).
local function simulate(s, t, beta, seed, round, id)
  local draw = dagger.mixture.rng(seed, round, id)
  local turns, i = {}, 1
  while true do
    local u = draw()
    local by = u < beta and "teacher" or "student"
    local a
    if by == "teacher" then a = t[i] else a = s[i] end
    if not a then return turns, "budget" end
    turns[#turns + 1] = { by = by, agree = s[i] ~= nil and t[i] ~= nil and tools.key(s[i]) == tools.key(t[i]) }
    if a.tool == "submit" then return turns, "finish" end
    i = i + 1
  end
end

T.test("the draws: reproducible per (seed, round, task), another round draws otherwise, uniform enough", function()
  local a, b = dagger.mixture.rng(7, 2, "x"), dagger.mixture.rng(7, 2, "x")
  local c = dagger.mixture.rng(7, 3, "x")
  local same, differ, sum = true, false, 0
  for _ = 1, 1000 do
    local u, v, w = a(), b(), c()
    if u ~= v then same = false end
    if u ~= w then differ = true end
    T.ok(u >= 0 and u < 1, "u in [0, 1)")
    sum = sum + u
  end
  T.ok(same, "the same seed, round and task draw the same")
  T.ok(differ, "another round draws otherwise")
  T.ok(math.abs(sum / 1000 - 0.5) < 0.05, "mean near 0.5: " .. sum / 1000)
end)

T.test("beta schedules: exp, linear, const, a function; out of [0, 1] refused", function()
  local s = dagger.schedule
  local e = s.new("exp", { beta0 = 1, decay = 0.5, rounds = 3 })
  T.eq(e(1), 1); T.eq(e(2), 0.5); T.eq(e(3), 0.25)
  local l = s.new("linear", { beta0 = 0.8, rounds = 5 })
  T.eq(l(1), 0.8); T.eq(l(3), 0.4); T.eq(l(5), 0)
  T.eq(s.new("linear", { beta0 = 0.3, rounds = 1 })(1), 0.3)
  T.eq(s.new("const", { beta0 = 0.2 })(9), 0.2)
  T.eq(s.new(function(r) return 1 / r end, {})(4), 0.25)
  local ok, err = pcall(s.new("exp", { beta0 = 2 }), 1)
  T.ok(not ok and err.code == "invalid_argument", "beta 2 refused")
  ok, err = pcall(s.new, "cosine", {})
  T.ok(not ok and err.code == "invalid_argument", "an unknown schedule refused")
end)

T.test("the round's table shows a number that is not whole as it is (a model's usage may give one), never an error", function()
  local s = dagger.records.summary(1, 0.5, {}, { turns = 3, by = { teacher = 1, student = 2 }, agree = 1, added = 3, dropped = 0,
    dropped_trajectories = {} }, nil, 1.25)
  s.policies.student.tokens, s.policies.teacher.calls = 1.5, 2.0
  -- a summary read back from summary.json (--resume) has its counts as floats
  s.by_reason, s.records.dropped_trajectories = { finish = 4.0, budget = 0.5 }, { aborted = 2.0 }
  local t = dagger.records.table(s)
  T.match(t, "ended +budget 0%.5, finish 4\n")
  T.match(t, "%(aborted 2%)")
  T.match(t, "student +0 calls, 1%.5 tokens")
  T.match(t, "teacher +2 calls, 0 tokens")
  T.match(t, "turns +3: teacher 1, student 2")
end)

T.test("budgets: the defaults give 20 per node, memory binding; --dry-run says so and starts nothing", function()
  local p = dagger.budget.plan{ tasks = 100, nodes = 3 }
  T.eq(p.capacity, 20); T.eq(p.binding, "memory"); T.eq(p.per_resource.cpu, 24)
  T.eq(p.at_once, 60); T.eq(p.starts_at_once, 12); T.eq(p.waves, 2)
  local g = dagger.budget.plan{ node_gpu = 8, sandbox_gpu = 1, tasks = 5 }
  T.eq(g.capacity, 8); T.eq(g.binding, "gpu"); T.eq(g.at_once, 5)
  local ok, err = pcall(dagger.budget.plan, { sandbox_memory_gb = 400 })
  T.ok(not ok and err.code == "invalid_argument", "a sandbox larger than a node refused")
  local tasks = tasks_of("dry", 45)
  local out = root .. "/dry-out"
  local log, rc = T.sh(string.format("%s %s --instances %s --out %s --dry-run", rock_exe, recipe, tasks_file(tasks), out))
  T.ok(rc, log)
  T.match(log, "capacity: 20 per node %(memory binds")
  T.match(log, "sandboxes at once: 20; starts at once: 4")
  T.match(log, "waves: 3 per round")
  T.match(log, "beta %(exp%): 1, 0.5, 0.25")
  log = T.sh(string.format("%s %s --instances %s --dry-run --nodes http://127.0.0.1:1,http://127.0.0.1:2,http://127.0.0.1:3",
    rock_exe, recipe, tasks_file(tasks)))
  T.match(log, "nodes: 3 %(fleet")
  T.match(log, "sandboxes at once: 45; starts at once: 12")
  T.ok(io.open(out, "rb") == nil, "nothing made in --out")
end)

T.test("two rounds, failing replay student, oracle teacher, beta0 1 decay 0.5, seed 20: executed-by, agreement, records exact; finish-only", function()
  local tasks = tasks_of("mix", 4)
  local rf = replay_file(tasks, student_actions)
  local seed = 20 -- round 2 draws both kinds of turns, and the teacher's script runs out in two tasks (budget)
  local summaries, out = run(tasks, { rounds = 2, seed = seed,
    schedule = dagger.schedule.new("exp", { beta0 = 1, decay = 0.5 }),
    student = rock.agent.policy("replay", { replay = rf }), teacher = rock.agent.policy("oracle") })
  T.eq(#summaries, 2)
  local agg_expected = 0
  for r = 1, 2 do
    local beta = r == 1 and 1 or 0.5
    local s = json.decode(read(string.format("%s/rounds/%d/summary.json", out, r)))
    T.eq(s.round, r); T.eq(s.beta, beta); T.eq(s.total, 4); T.eq(s.complete, true)
    local trajs = {}
    for _, tr in ipairs(jsonl(string.format("%s/rounds/%d/trajectories.jsonl", out, r))) do trajs[tr.instance_id] = tr end
    local lines = jsonl(string.format("%s/rounds/%d/dataset.jsonl", out, r))
    local want_by, want_agree, want_turns, want_reason, kept_turns = { teacher = 0, student = 0 }, 0, 0, {}, 0
    local li = 0
    for i, t in ipairs(tasks) do
      local sim, reason = simulate(student_actions(t, i), oracle_actions(), beta, seed, r, t.instance_id)
      local tr = trajs[t.instance_id]
      T.eq(tr.termination_reason, reason, t.instance_id .. " round " .. r)
      T.eq(tr.episode_id, t.instance_id .. "@r" .. r)
      T.eq(#tr.dagger.turns, #sim)
      want_reason[reason] = (want_reason[reason] or 0) + 1
      for k, st in ipairs(sim) do
        li = li + 1
        local line = lines[li]
        T.eq(line.task_id, t.instance_id); T.eq(line.round, r); T.eq(line.beta, beta); T.eq(line.turn, k)
        T.eq(line.executed_by, st.by, string.format("%s r%d turn %d", t.instance_id, r, k))
        T.eq(line.agree, st.agree)
        T.eq(line.termination_reason, reason)
        T.eq(line.resolved, false)
        T.eq(line.episode_id, tr.episode_id)
        T.eq(line.messages_ref.path, string.format("rounds/%d/trajectories.jsonl", r))
        T.eq(line.messages_ref.messages, 2 + 2 * (k - 1)) -- system, user, then an assistant and a tool per turn
        local exec = st.by == "teacher" and line.teacher_action or line.student_action
        T.eq(tools.key(exec), tools.key(tr.steps[k].action), "the executed action is the step taken")
        local label = oracle_actions()[k]
        if label then T.eq(tools.key(line.teacher_action), tools.key(label), "the label is the teacher's")
        else T.eq(line.teacher_action, json.null, "the teacher's script has run out: no label") end
        want_by[st.by] = want_by[st.by] + 1
        if st.agree then want_agree = want_agree + 1 end
        want_turns = want_turns + 1
        if reason == "finish" then kept_turns = kept_turns + 1 end
      end
    end
    T.eq(#lines, want_turns)
    T.eq(s.turns, want_turns)
    T.eq(s.executed_by.teacher, want_by.teacher); T.eq(s.executed_by.student, want_by.student)
    T.eq(s.agreed, want_agree)
    T.ok(math.abs(s.intervention_rate - want_by.teacher / want_turns) < 1e-12, "intervention rate")
    T.ok(math.abs(s.teacher_agreement - want_agree / want_turns) < 1e-12, "teacher agreement")
    -- and the numbers themselves, worked out once for seed 20: a change
    -- of the draws or of the rule shows here even if both sides moved
    local literal = ({ { 8, 8, 0, 2, 8, 0 }, { 8, 2, 6, 2, 4, 2 } })[r]
    T.eq(json.encode({ want_turns, want_by.teacher, want_by.student, want_agree, kept_turns, want_reason.budget or 0 }),
      json.encode(literal), "round " .. r .. ": turns, by teacher, by student, agreed, kept, budget")
    T.eq(s.records.added, kept_turns); T.eq(s.records.dropped, want_turns - kept_turns)
    for reason, n in pairs(want_reason) do
      if reason ~= "finish" then T.eq(s.records.dropped_trajectories[reason], n) end
    end
    T.eq(s.policies.student.calls, want_turns + (want_reason.budget or 0)) -- the exhausted call is no turn
    if r == 1 then
      T.eq(want_by.student, 0, "beta 1: the teacher executes every turn")
      T.eq(want_agree, 2, "the two-action students agree on submit")
    end
    agg_expected = agg_expected + kept_turns
  end
  -- round 2 at beta 0.5 mixes: seed 7 gives both kinds of turns
  T.ok(summaries[2].executed_by.student > 0 and summaries[2].executed_by.teacher > 0, json.encode(summaries[2].executed_by))
  -- finish-only: the aggregated dataset holds every turn of exactly the finish trajectories
  local agg = jsonl(out .. "/dataset.jsonl")
  T.eq(#agg, agg_expected)
  local finished, in_agg = {}, {}
  for r = 1, 2 do
    for _, tr in ipairs(jsonl(string.format("%s/rounds/%d/trajectories.jsonl", out, r))) do
      if tr.termination_reason == "finish" then finished[tr.episode_id] = #tr.dagger.turns end
    end
  end
  for _, line in ipairs(agg) do
    T.eq(line.termination_reason, "finish", "finish-only: only finish reaches the dataset")
    in_agg[line.episode_id] = (in_agg[line.episode_id] or 0) + 1
  end
  T.eq(canon(in_agg), canon(finished), "the aggregated dataset: all the finish trajectories' turns, nothing else")
  T.eq(summaries[2].records.dropped_trajectories.budget, 2)
  -- another run with the same seed draws the same
  local again = run(tasks_of("mix", 4), { rounds = 2, seed = seed,
    student = rock.agent.policy("replay", { replay = rf }), teacher = rock.agent.policy("oracle") })
  T.eq(json.encode(again[2].executed_by), json.encode(summaries[2].executed_by))
end)

-- steps and messages of a run as comparable text (the sandbox's paths differ)
local function shape(tr)
  local steps = {}
  for i, st in ipairs(tr.steps) do steps[i] = tools.key(st.action or {}) end
  local msgs = {}
  for i, m in ipairs(tr.messages) do msgs[i] = m.role .. ":" .. json.encode(m.tool_calls or json.null) end
  return table.concat(steps, "|") .. "#" .. table.concat(msgs, "|") .. "#" .. tr.termination_reason .. "#" .. tr.patch
end

T.test("beta 0 is the student's own run, beta 1 the teacher's", function()
  local tasks = tasks_of("b01", 2)
  local rf = replay_file(tasks, student_actions)
  local student, teacher = rock.agent.policy("replay", { replay = rf }), rock.agent.policy("oracle")
  local function solo(policy)
    local dir = out_dir()
    rock.agent.run(tasks, { policy = policy, out = dir, backend = "local", eval = "none", progress = false, workers = 2 })
    local by = {}
    for _, tr in ipairs(jsonl(dir .. "/trajectories.jsonl")) do by[tr.instance_id] = tr end
    return by
  end
  local function mixed(beta)
    local _, out = run(tasks, { rounds = 1, schedule = dagger.schedule.new("const", { beta0 = beta }), student = student, teacher = teacher })
    local by = {}
    for _, tr in ipairs(jsonl(out .. "/rounds/1/trajectories.jsonl")) do by[tr.instance_id] = tr end
    return by
  end
  for beta, policy in pairs({ [0] = student, [1] = teacher }) do
    local a, b = solo(policy), mixed(beta)
    for _, t in ipairs(tasks) do
      T.eq(shape(b[t.instance_id]), shape(a[t.instance_id]), string.format("beta %d, %s", beta, t.instance_id))
      for _, rec in ipairs(b[t.instance_id].dagger.turns) do T.eq(rec.executed_by, beta == 1 and "teacher" or "student") end
    end
  end
  -- a recipe's own schedule: a plain Lua function of the round
  local summaries = run(tasks, { rounds = 2, schedule = function(r) return r == 1 and 0 or 1 end,
    student = student, teacher = teacher })
  T.eq(summaries[1].beta, 0); T.eq(summaries[1].executed_by.teacher, 0)
  T.eq(summaries[2].beta, 1); T.eq(summaries[2].executed_by.student, 0)
  T.eq(summaries[2].resolved_rate, 0) -- --no-eval: nothing graded
end)

T.test("--resume with a schedule that gives a begun round another beta is refused", function()
  local tasks = tasks_of("rb", 1)
  local o = { student = rock.agent.policy("oracle"), teacher = rock.agent.policy("oracle"), rounds = 1,
    schedule = dagger.schedule.new("const", { beta0 = 0.5 }) }
  local _, out = run(tasks, o)
  local again = { out = out, resume = true, student = o.student, teacher = o.teacher, rounds = 1,
    schedule = dagger.schedule.new("const", { beta0 = 0.3 }) }
  local err = T.raises("invalid_argument", run, tasks, again)
  T.match(err.message, "round 1 was run with beta 0.5")
  again.schedule = dagger.schedule.new("const", { beta0 = 0.5 })
  T.eq(run(tasks, again)[1].total, 1, "the same beta resumes")
end)

T.test("a model student and teacher (tool calls); the teacher unreachable mid-round: aborted, dropped, counted", function()
  local tasks = tasks_of("llm", 3)
  local s_script = {}
  for i = 1, 7 do s_script[i] = F.tool_call("bash", { command = "echo student" }) end
  local student_srv = F.start(s_script)
  local teacher_srv = F.start{ F.tool_call("bash", { command = "echo teacher" }), F.tool_call("submit", {}) }
  local function llm(srv, model) return rock.llm.new{ base_url = srv.url, model = model, retries = 0, api_key = "k" } end
  local teacher = rock.agent.policy("model", { llm = llm(teacher_srv, "t") })
  -- the teacher's server goes away once the first trajectory is written
  -- (its requests read first: stop removes its log)
  local treq
  local ok, summaries, out = pcall(run, tasks, { rounds = 2, seed = 1,
    student = function(r) return rock.agent.policy("model", { llm = llm(student_srv, "s-r" .. r) }) end,
    teacher = teacher,
    agent = { workers = 1, on_trajectory = function()
      if not treq then treq = teacher_srv.requests(); teacher_srv.stop() end
    end } })
  local sreq = student_srv.requests()
  student_srv.stop(); teacher_srv.stop()
  if not ok then error(summaries, 0) end
  local s1, s2 = summaries[1], summaries[2]
  -- aborted because the teacher went away: its endpoint is the one unreachable
  for r = 1, 2 do
    for _, tr in ipairs(jsonl(string.format("%s/rounds/%d/trajectories.jsonl", out, r))) do
      if tr.termination_reason == "aborted" then
        T.eq(tr.error.code, "llm_unreachable")
        T.ok(tr.error.message:find(":" .. teacher_srv.port .. "/", 1, true), "the teacher's endpoint: " .. tr.error.message)
      end
    end
  end
  T.eq(s1.by_reason.finish, 1); T.eq(s1.by_reason.aborted, 2)
  T.eq(s2.by_reason.aborted, 3)
  T.eq(s1.turns, 2); T.eq(s1.executed_by.teacher, 2)
  T.eq(s1.records.added, 2); T.eq(s1.records.dropped_trajectories.aborted, 2)
  T.eq(s2.records.added, 0); T.eq(s2.records.dropped_trajectories.aborted, 3)
  -- both policies' calls and tokens counted: the student was asked first each turn
  T.eq(s1.policies.student.calls, 4); T.eq(s1.policies.student.tokens, 60)
  T.eq(s1.policies.teacher.calls, 2); T.eq(s1.policies.teacher.tokens, 30)
  local agg = jsonl(out .. "/dataset.jsonl")
  T.eq(#agg, 2)
  T.eq(agg[1].teacher_action.command, "echo teacher"); T.eq(agg[1].student_action.command, "echo student")
  T.eq(agg[2].teacher_action.tool, "submit"); T.eq(agg[1].agree, false)
  -- the teacher saw the same history as the student, and the round named the student's model
  T.eq(#sreq, 7); T.eq(#treq, 2)
  for k = 1, 2 do
    T.eq(canon(treq[k].body.messages), canon(sreq[k].body.messages), "turn " .. k .. ": the same history")
  end
  T.eq(#treq[2].body.messages, 4) -- system, user, the executed (teacher's) call, its tool answer
  T.eq(treq[2].body.messages[3].tool_calls[1]["function"].arguments, json.encode({ command = "echo teacher" }))
  T.eq(sreq[1].body.model, "s-r1"); T.eq(sreq[7].body.model, "s-r2"); T.eq(treq[1].body.model, "t")
end)

-- the recipe, as a user runs it
local function start_recipe(args, log)
  local pid = T.sh(string.format("cd %s && { %s %s %s >%s 2>&1 & echo $!; }", root, rock_exe, recipe, args, log)):gsub("%s+$", "")
  return tonumber(pid)
end

local function wait_until(pred, seconds)
  for _ = 1, seconds * 10 do
    if pred() then return true end
    rock.sleep(0.1)
  end
  return pred()
end

local function alive(pid) return T.sh("kill -0 " .. pid .. " 2>/dev/null && echo yes"):find("yes") ~= nil end

local function lines_of(path)
  local s = read(path) or ""
  local n = 0
  for _ in s:gmatch("\n") do n = n + 1 end
  return n, s
end

-- The recipe started in the background, its exit status to rc_file once it
-- ends: its pid.
local function start_recipe_rc(args, log, rc_file)
  local pid_file = rc_file .. ".pid"
  T.sh(string.format("cd %s && { sh -c '%s %s %s >%s 2>&1 & echo $! >%s; wait $!; echo $? >%s' >/dev/null 2>&1 & }",
    root, rock_exe, recipe, args:gsub("'", "'\\''"), log, pid_file, rc_file))
  local pid
  wait_until(function() pid = tonumber(read(pid_file) or ""); return pid ~= nil end, 10)
  return pid
end

-- kill -9, or Ctrl-C (SIGINT: the run winds down, stops its sandboxes and
-- exits 130), mid-round 2; then --resume finishes the run.
for _, sig in ipairs({ "9", "INT" }) do
T.test("the recipe killed with kill -" .. sig .. " mid-round, then --resume: no trajectory lost, none repeated; the hook ran once per gap", function()
  local tasks = tasks_of("kill" .. sig, 4)
  local rf = replay_file(tasks, function() return { { tool = "bash", command = "sleep 0.5" }, { tool = "bash", command = "sleep 0.4" }, { tool = "submit" } } end)
  local out = out_dir()
  local hook_log = root .. "/hook" .. sig .. ".log"
  local args = string.format("--instances %s --out %s --student replay --student-replay %s --teacher oracle "
    .. "--rounds 3 --beta-schedule const --beta0 0 --backend local --workers 1 --no-eval "
    .. "--between-rounds 'echo \"$ROCK_DAGGER_ROUND $(wc -l < \"$1\")\" >> %s'", tasks_file(tasks), out, rf, hook_log)
  local log, rc_file = root .. "/kill" .. sig .. ".log", root .. "/kill" .. sig .. ".rc"
  local pid = start_recipe_rc(args, log, rc_file)
  local r2 = out .. "/rounds/2/trajectories.jsonl"
  T.ok(wait_until(function() return lines_of(r2) >= 1 end, 90), "round 2 began: " .. tostring(read(log)))
  T.sh("kill -" .. sig .. " " .. pid)
  T.ok(wait_until(function() return read(rc_file) end, 30), "the run ended")
  T.eq(read(rc_file), sig == "9" and "137\n" or "130\n", "its exit status: " .. tostring(read(log)))
  if sig == "INT" then T.eq(#T.listdir(require("rock.state").sandboxes_dir()), 0, "Ctrl-C stopped its sandboxes") end
  local n_before, before = lines_of(r2)
  T.ok(n_before >= 1 and n_before < 4, "killed mid-round 2: " .. n_before)
  T.ok(json.decode(read(out .. "/rounds/2/wall.json") or "{}").seconds_wall, "round 2's seconds so far kept")
  local r1_before = read(out .. "/rounds/1/trajectories.jsonl")
  local _, ok = T.sh(string.format("cd %s && %s %s %s --resume >>%s 2>&1", root, rock_exe, recipe, args, log))
  T.ok(ok, "the resumed run succeeds: " .. tostring(read(log)))
  T.eq(read(out .. "/rounds/1/trajectories.jsonl"), r1_before, "the complete round is not run again")
  -- a task Ctrl-C cut short was written interrupted=true; --resume drops
  -- that line and runs the task again
  local kept, cut = {}, 0
  for line in before:gmatch("[^\n]+\n") do
    if json.decode(line).interrupted then cut = cut + 1 else kept[#kept + 1] = line end
  end
  T.eq(cut, sig == "9" and 0 or 1, "the task in flight was written interrupted: " .. before .. tostring(read(log)))
  local _, after = lines_of(r2)
  kept = table.concat(kept)
  T.eq(after:sub(1, #kept), kept, "what round 2 had finished is kept as written")
  for r = 1, 3 do
    local seen = {}
    for _, tr in ipairs(jsonl(string.format("%s/rounds/%d/trajectories.jsonl", out, r))) do
      T.ok(not seen[tr.instance_id], "once: " .. tr.instance_id)
      seen[tr.instance_id] = true
      T.eq(tr.termination_reason, "finish", string.format("round %d, %s: %s (log: %s)", r, tr.instance_id,
        json.encode(tr.error or json.null), tostring(read(log))))
    end
    for _, t in ipairs(tasks) do T.ok(seen[t.instance_id], "round " .. r .. " has " .. t.instance_id) end
  end
  local agg, keys = jsonl(out .. "/dataset.jsonl"), {}
  T.eq(#agg, 3 * 4 * 3)
  for _, l in ipairs(agg) do
    local k = l.episode_id .. "#" .. l.turn
    T.ok(not keys[k], "no duplicate record " .. k)
    keys[k] = true
    T.eq(l.executed_by, "student")
  end
  -- the hook: after rounds 1 and 2 (not the last), given the aggregated dataset so far
  T.eq(read(hook_log), string.format("1 12 %s/dataset.jsonl\n2 24 %s/dataset.jsonl\n", out, out))
  T.match(read(log), "round 3 %(beta 0%)")
  T.match(read(log), "dataset: 36 records")
end)
end

T.test("kill -9 mid-round at a beta between 0 and 1, then --resume: the same draws and records as a run never killed; the wall time adds both runs", function()
  local tasks = tasks_of("mixkill", 4)
  local sf = replay_file(tasks, function() return { { tool = "bash", command = "sleep 0.5" }, { tool = "bash", command = "sleep 0.4" }, { tool = "submit" } } end)
  local tf = replay_file(tasks, function() return { { tool = "bash", command = "sleep 0.45" }, { tool = "submit" } } end)
  -- linear from 0.8: beta 0.8, 0.4, 0; seed 6 gives round 2 four turns of each policy, two tasks ending
  -- finish and two budget (the teacher's script run out when drawn), so a draw repeated otherwise shows
  local seed, betas = 6, { 0.8, 0.4, 0 }
  local s_act = { { tool = "bash", command = "sleep 0.5" }, { tool = "bash", command = "sleep 0.4" }, { tool = "submit" } }
  local t_act = { { tool = "bash", command = "sleep 0.45" }, { tool = "submit" } }
  local by, ends = { teacher = 0, student = 0 }, {}
  for _, t in ipairs(tasks) do
    local sim, reason = simulate(s_act, t_act, betas[2], seed, 2, t.instance_id)
    for _, st in ipairs(sim) do by[st.by] = by[st.by] + 1 end
    ends[#ends + 1] = reason
  end
  T.eq(json.encode({ by.teacher, by.student, table.concat(ends, ",") }), json.encode({ 4, 4, "finish,budget,finish,budget" }), "round 2 mixes")
  local out = out_dir()
  local args = string.format("--instances %s --out %s --student replay --student-replay %s --teacher replay --teacher-replay %s "
    .. "--rounds 3 --beta-schedule linear --beta0 0.8 --seed %d --backend local --workers 1 --no-eval", tasks_file(tasks), out, sf, tf, seed)
  local log, rc_file = root .. "/mixkill.log", root .. "/mixkill.rc"
  local pid = start_recipe_rc(args, log, rc_file)
  local r2 = out .. "/rounds/2/trajectories.jsonl"
  T.ok(wait_until(function() return lines_of(r2) >= 1 end, 90), "round 2 began: " .. tostring(read(log)))
  T.sh("kill -9 " .. pid)
  T.ok(wait_until(function() return read(rc_file) end, 30), "the run ended")
  T.eq(read(rc_file), "137\n")
  local n_before = lines_of(r2)
  T.ok(n_before >= 1 and n_before < 4, "killed mid-round 2: " .. n_before)
  local before = json.decode(read(out .. "/rounds/2/wall.json")).seconds_wall
  T.ok(before >= 0.4, "round 2's seconds before the kill kept (a task of a sleep or more): " .. before)
  local _, ok = T.sh(string.format("cd %s && %s %s %s --resume >>%s 2>&1", root, rock_exe, recipe, args, log))
  T.ok(ok, "the resumed run succeeds: " .. tostring(read(log)))
  -- the same rounds never killed (the library, three workers: the order differs, the draws do not)
  local _, ref = run(tasks, { rounds = 3, seed = seed, schedule = dagger.schedule.new("linear", { beta0 = 0.8, rounds = 3 }),
    student = rock.agent.policy("replay", { replay = sf }), teacher = rock.agent.policy("replay", { replay = tf }) })
  for r = 1, 3 do
    local a = jsonl(string.format("%s/rounds/%d/dataset.jsonl", out, r))
    T.ok(#a >= 8, "round " .. r .. " has its records")
    T.eq(canon(a), canon(jsonl(string.format("%s/rounds/%d/dataset.jsonl", ref, r))), "round " .. r .. "'s records, line for line")
  end
  T.eq(canon(jsonl(out .. "/dataset.jsonl")), canon(jsonl(ref .. "/dataset.jsonl")), "the aggregated dataset")
  local s2 = json.decode(read(out .. "/rounds/2/summary.json"))
  T.eq(s2.executed_by.teacher, 4); T.eq(s2.executed_by.student, 4); T.eq(s2.records.dropped_trajectories.budget, 2)
  -- at least one task (a sleep of 0.4 s or more) ran after the resume, beside the part before the kill
  T.ok(s2.seconds_wall >= before + 0.4, string.format("round 2's wall time %.2f adds the %.2f before the kill", s2.seconds_wall, before))
  T.ok(io.open(out .. "/rounds/2/wall.json") == nil, "wall.json gone once the summary holds the total")
end)

T.test("the recipe with model policies: --student-model 'stu-r{round}' names each round's model; the hook between", function()
  local tasks = tasks_of("rmodel", 1)
  local function script()
    return { F.tool_call("bash", { command = "echo hi" }), F.tool_call("submit", {}),
             F.tool_call("bash", { command = "echo hi" }), F.tool_call("submit", {}) }
  end
  local student_srv, teacher_srv = F.start(script()), F.start(script())
  local out = out_dir()
  local hook_log = root .. "/rmodel-hook.log"
  local log, ok = T.sh(string.format("cd %s && %s %s --instances %s --out %s --student model --student-base-url %s "
    .. "--student-model 'stu-r{round}' --teacher model --teacher-base-url %s --teacher-model tea --rounds 2 "
    .. "--beta-schedule const --beta0 0 --backend local --no-eval "
    .. "--between-rounds 'echo \"$ROCK_DAGGER_ROUND $ROCK_DAGGER_OUT\" >> %s' 2>&1",
    root, rock_exe, recipe, tasks_file(tasks), out, student_srv.url, teacher_srv.url, hook_log))
  local sreq, treq = student_srv.requests(), teacher_srv.requests()
  student_srv.stop(); teacher_srv.stop()
  T.ok(ok, log)
  local models = {}
  for i, q in ipairs(sreq) do models[i] = q.body.model end
  T.eq(table.concat(models, ","), "stu-r1,stu-r1,stu-r2,stu-r2")
  T.eq(#treq, 4, "the teacher labels every turn")
  T.eq(treq[1].body.model, "tea")
  T.eq(read(hook_log), string.format("1 %s %s/dataset.jsonl\n", out, out), "the hook ran once, after round 1 (not after the last)")
  local s2 = json.decode(read(out .. "/rounds/2/summary.json"))
  T.eq(s2.executed_by.student, 2); T.eq(s2.policies.student.tokens, 30); T.eq(s2.policies.teacher.tokens, 30)
  T.match(log, "student +2 calls, 30 tokens")
  T.match(log, "dataset: 4 records")
  -- its report (docs/report.md): the rounds from their summaries, the last round's task
  local index = read(out .. "/report/index.html")
  T.ok(index, "report/index.html written")
  T.match(index, '<tr data%-round="1"><td>1</td><td class="n">0</td><td class="n">1</td>')
  T.match(index, '<tr data%-round="2"><td>2</td><td class="n">0</td><td class="n">1</td><td class="n">0 %(0%.0%%%)</td><td class="n">2</td>' ..
    '<td class="n">[%d.]+%%</td><td class="n">0%.0%%</td><td class="n">2</td>')
  T.ok(read(out .. "/report/t/" .. tasks[1].instance_id .. ".html"), "the task's page")
  T.eq(json.decode(read(out .. "/run.json")).recipe, "dagger_eval.lua")
end)

T.test("a hook that fails ends the run (exit 1, said); --resume runs it again, then the rest", function()
  local tasks = tasks_of("hook", 2)
  local out = out_dir()
  local flag = root .. "/hook-ok"
  local args = string.format("--instances %s --out %s --student oracle --teacher oracle --rounds 2 --backend local "
    .. "--no-eval --between-rounds 'test -e %s && echo ran >> %s.log'", tasks_file(tasks), out, flag, flag)
  local log, ok = T.sh(string.format("cd %s && %s %s %s 2>&1", root, rock_exe, recipe, args))
  T.ok(not ok, "the run fails: " .. log)
  T.match(log, "dagger_eval: %-%-between%-rounds after round 1: exit 1")
  T.ok(not log:find("stack traceback", 1, true), "said, not a traceback: " .. log)
  T.ok(io.open(out .. "/rounds/2/trajectories.jsonl") == nil, "round 2 did not start")
  T.write(flag, "")
  log, ok = T.sh(string.format("cd %s && %s %s %s --resume 2>&1", root, rock_exe, recipe, args))
  T.ok(ok, log)
  T.eq(read(flag .. ".log"), "ran " .. out .. "/dataset.jsonl\n", "the hook ran once, given the dataset")
  T.match(log, "dataset: 8 records")
end)

T.test("the recipe's flags that cannot work: one line each, exit 2, nothing started", function()
  local tf = tasks_file(tasks_of("flags", 1))
  local bad2 = root .. "/beta2.lua"
  write(bad2, "return function(r) return r * 2 end\n")
  write(root .. "/notfn.lua", "return 3\n")
  local out = root .. "/flags-out"
  for _, c in ipairs({
    { "--beta-schedule cosine", "dagger_eval: %-%-beta%-schedule: expected exp, linear, const or @FILE%.lua .*got cosine" },
    { "--beta-schedule @" .. root .. "/none.lua", "dagger_eval: %-%-beta%-schedule: cannot open .*none%.lua" },
    { "--beta-schedule @" .. root .. "/notfn.lua", "dagger_eval: %-%-beta%-schedule: .*notfn%.lua returns a number, not a function" },
    { "--beta-schedule @" .. bad2, "dagger_eval: %-%-beta%-schedule @.*beta2%.lua: beta schedule: round 1 gives 2, not a number in %[0, 1%]" },
    { "--beta-schedule const --beta0 1.5", "dagger_eval: %-%-beta%-schedule const: beta schedule: round 1 gives 1%.5" },
    { "--teacher replay", "dagger_eval: %-%-teacher replay needs %-%-teacher%-replay FILE" },
    { "--teacher replay --teacher-replay " .. root .. "/none.jsonl", "dagger_eval: the teacher %(%-%-teacher replay%): replay: cannot open" },
    { "--student bogus", "dagger_eval: the student %(%-%-student bogus%): unknown policy bogus" },
    { "--student oracle --between-rounds @" .. root .. "/none.lua", "dagger_eval: %-%-between%-rounds: cannot open" },
    { "--sandbox-memory-gb 400", "dagger_eval: budget: a sandbox .* does not fit a node" },
  }) do
    local log, ok, code = T.sh(string.format("cd %s && %s %s --instances %s --out %s --backend local %s 2>&1; echo rc=$?",
      root, rock_exe, recipe, tf, out, c[1]))
    T.match(log, "\nrc=2\n$", c[1] .. ": exit 2")
    T.match(log, "^" .. c[2], c[1])
    local n = select(2, log:gsub("\n", ""))
    T.eq(n, 2, c[1] .. ": one line (and the exit status): " .. log)
    T.ok(io.open(out, "rb") == nil, c[1] .. ": nothing made in --out")
  end
end)

T.test("the recipe with a replay teacher, a Lua schedule and a Lua hook (@FILE.lua): the rounds as the function says", function()
  local tasks = tasks_of("lua", 2)
  local sf, tf = replay_file(tasks, student_actions), replay_file(tasks, oracle_actions)
  local sched, hook, hook_log = root .. "/sched.lua", root .. "/hook.lua", root .. "/lua-hook.log"
  -- R is the schedule's second argument: 0 then 1 only when it is 2
  write(sched, "return function(r, R) if R ~= 2 then return 0.5 end return r == 1 and 0 or 1 end\n")
  write(hook, string.format("local log = %q\nreturn function(r, path, summary)\n" ..
    "  local f = assert(io.open(log, 'a'))\n  f:write(r, ' ', path, ' ', summary.round, ' ', summary.total, ' ', summary.executed_by.student, '\\n')\n" ..
    "  f:close()\nend\n", hook_log))
  local out = out_dir()
  local args = string.format("--instances %s --out %s --student replay --student-replay %s --teacher replay --teacher-replay %s "
    .. "--rounds 2 --beta-schedule @%s --between-rounds @%s --backend local --no-eval", tasks_file(tasks), out, sf, tf, sched, hook)
  local log, ok = T.sh(string.format("cd %s && %s %s %s --dry-run 2>&1", root, rock_exe, recipe, args))
  T.ok(ok, log)
  T.match(log, "beta %(@.*sched%.lua%): 0, 1;")
  log, ok = T.sh(string.format("cd %s && %s %s %s 2>&1", root, rock_exe, recipe, args))
  T.ok(ok, log)
  local s1 = json.decode(read(out .. "/rounds/1/summary.json"))
  local s2 = json.decode(read(out .. "/rounds/2/summary.json"))
  T.eq(s1.beta, 0); T.eq(s2.beta, 1)
  T.eq(s1.executed_by.teacher, 0); T.eq(s1.executed_by.student, 5) -- the students' 3 and 2 actions
  T.eq(s2.executed_by.student, 0); T.eq(s2.executed_by.teacher, 4) -- the teacher's 2 each
  T.eq(s2.by_reason.finish, 2)
  -- the replay teacher's labels: its file's actions, in order
  for _, line in ipairs(jsonl(out .. "/rounds/2/dataset.jsonl")) do
    T.eq(tools.key(line.teacher_action), tools.key(oracle_actions()[line.turn]), line.episode_id .. " turn " .. line.turn)
  end
  T.eq(read(hook_log), string.format("1 %s/dataset.jsonl 1 2 5\n", out), "the Lua hook ran once, after round 1, given the path and summary")
  -- a Lua hook that raises ends the run: said in one line, exit 1
  write(hook, "return function(r) error('trainer down after round ' .. r, 0) end\n")
  local out2 = out_dir()
  log, ok = T.sh(string.format("cd %s && %s %s %s 2>&1", root, rock_exe, recipe, args:gsub(out:gsub("%p", "%%%0"), out2)))
  T.ok(not ok, log)
  T.match(log, "\ndagger_eval: trainer down after round 1\n$")
  T.ok(not log:find("stack traceback", 1, true), log)
  T.ok(io.open(out2 .. "/rounds/2/trajectories.jsonl") == nil, "round 2 did not start")
end)

T.test("the recipe with model policies in text mode and the linear schedule: beta 1 then 0, a ```bash block a turn", function()
  local tasks = tasks_of("text", 1)
  local function script(word)
    local act, done = "```bash\necho " .. word .. "\n```", "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"
    return { F.reply(act), F.reply(done), F.reply(act), F.reply(done) }
  end
  local student_srv, teacher_srv = F.start(script("stu")), F.start(script("tea"))
  local out = out_dir()
  local log, ok = T.sh(string.format("cd %s && %s %s --instances %s --out %s --student model --student-base-url %s "
    .. "--student-model s --teacher model --teacher-base-url %s --teacher-model t --mode text --rounds 2 "
    .. "--beta-schedule linear --beta0 1 --backend local --no-eval 2>&1",
    root, rock_exe, recipe, tasks_file(tasks), out, student_srv.url, teacher_srv.url))
  local sreq, treq = student_srv.requests(), teacher_srv.requests()
  student_srv.stop(); teacher_srv.stop()
  T.ok(ok, log)
  T.match(log, "round 1 %(beta 1%)"); T.match(log, "round 2 %(beta 0%)")
  T.eq(#sreq, 4); T.eq(#treq, 4)
  for _, q in ipairs(sreq) do T.eq(q.body.tools, nil, "text mode: no tools offered") end
  -- round 1 ran the teacher's block, round 2 the student's: the history both saw says so
  T.match(sreq[2].body.messages[3].content, "echo tea"); T.eq(sreq[2].body.messages[4].role, "user")
  T.match(treq[4].body.messages[3].content, "echo stu")
  local want = { { "teacher", "echo tea" }, { "teacher", "echo COMPLETE" }, { "student", "echo stu" }, { "student", "echo COMPLETE" } }
  local lines = jsonl(out .. "/dataset.jsonl")
  T.eq(#lines, 4)
  for i, line in ipairs(lines) do
    T.eq(line.executed_by, want[i][1], "record " .. i)
    local exec = line.executed_by == "teacher" and line.teacher_action or line.student_action
    T.eq(exec.tool, "bash"); T.match(exec.command, "^" .. want[i][2])
    T.eq(line.agree, line.turn == 2, "they agree on the submit only")
    T.eq(line.termination_reason, "finish")
  end
end)

T.test("the two rounds across three rock serve nodes (--nodes): spread over them, the same records as one machine", function()
  local home = root .. "/nodes"
  local nodes, urls = {}, {}
  for i = 1, 3 do
    T.sh("mkdir -p " .. home .. "/n" .. i)
    -- each node: 8 CPUs, 32 GB: two sandboxes of 4 / 16
    nodes[i] = S.start{ backend = "local", home = home .. "/n" .. i,
      args = { "--budget-cpu", "8", "--budget-memory-gb", "32", "--max-starting", "4" } }
    urls[i] = nodes[i].url
  end
  local tasks = tasks_of("fleet", 6)
  local rf = replay_file(tasks, student_actions)
  local out = out_dir()
  local log, ok = T.sh(string.format("cd %s && %s %s --instances %s --out %s --student replay --student-replay %s "
    .. "--teacher oracle --rounds 2 --seed 7 --no-eval --nodes %s --node-cpu 8 --node-memory-gb 32 2>&1",
    root, rock_exe, recipe, tasks_file(tasks), out, rf, table.concat(urls, ",")))
  for _, n in ipairs(nodes) do n.kill("TERM"); n.wait() end
  T.ok(ok, log)
  T.match(log, "round 2 %(beta 0.5%)")
  local on, n_on = {}, 0
  for r = 1, 2 do
    local trajs = jsonl(string.format("%s/rounds/%d/trajectories.jsonl", out, r))
    T.eq(#trajs, 6)
    for _, tr in ipairs(trajs) do
      T.eq(tr.sandbox.backend, "fleet", "a fleet sandbox")
      T.ok(tr.sandbox.node, "the node it ran on is recorded")
      if not on[tr.sandbox.node] then on[tr.sandbox.node], n_on = 0, n_on + 1 end
      on[tr.sandbox.node] = on[tr.sandbox.node] + 1
      local t
      for j, x in ipairs(tasks) do if x.instance_id == tr.instance_id then t = j end end
      local sim, reason = simulate(student_actions(tasks[t], t), oracle_actions(), r == 1 and 1 or 0.5, 7, r, tr.instance_id)
      T.eq(tr.termination_reason, reason)
      T.eq(#tr.dagger.turns, #sim)
      for k, st in ipairs(sim) do T.eq(tr.dagger.turns[k].executed_by, st.by) end
    end
  end
  T.eq(n_on, 3, "spread over the three nodes: " .. json.encode(on))
  for _, u in ipairs(urls) do T.ok(on[u], "node " .. u .. " ran some: " .. json.encode(on)) end
  -- the same rounds on this machine (the library, the local backend): the same records, line for line
  local here_out = out_dir()
  run(tasks, { out = here_out, rounds = 2, seed = 7, student = rock.agent.policy("replay", { replay = rf }),
    teacher = rock.agent.policy("oracle") })
  for r = 1, 2 do
    local a = jsonl(string.format("%s/rounds/%d/dataset.jsonl", out, r))
    T.ok(#a > 10, "records written")
    T.eq(canon(a), canon(jsonl(string.format("%s/rounds/%d/dataset.jsonl", here_out, r))), "round " .. r .. "'s records, line for line")
  end
  T.eq(canon(jsonl(out .. "/dataset.jsonl")), canon(jsonl(here_out .. "/dataset.jsonl")), "the aggregated dataset, line for line")
end)

T.test("on a fleet, --concurrency is per node: with 1, no node has two starts in flight, even packed", function()
  -- a rocklet that takes a second to come up: a start is long enough to be seen in flight
  local slow = root .. "/slow-rocklet"
  write(slow, "#!/bin/sh\nsleep 1\nexec '" .. rock.core.rocklet_path() .. "' \"$@\"\n")
  T.sh("chmod +x " .. slow)
  local nodes, urls = {}, {}
  for i = 1, 2 do
    T.sh("mkdir -p " .. root .. "/pn/n" .. i)
    -- two sandboxes of 4 CPU / 16 GB a node; the node itself would start four at once
    nodes[i] = S.start{ backend = "local", home = root .. "/pn/n" .. i, env = "ROCK_ROCKLET=" .. slow,
      args = { "--budget-cpu", "8", "--budget-memory-gb", "32", "--max-starting", "4" } }
    urls[i] = nodes[i].url
  end
  local tasks = tasks_of("pernode", 4)
  local out = out_dir()
  local log, rc_file = root .. "/pernode.log", root .. "/pernode.rc"
  -- pack: the most used node that fits, so the run's two starts at once (2 nodes x 1) would both go to one
  start_recipe_rc(string.format("--instances %s --out %s --student oracle --teacher oracle --rounds 1 --no-eval --nodes %s "
    .. "--node-cpu 8 --node-memory-gb 32 --concurrency 1 --strategy pack", tasks_file(tasks), out, table.concat(urls, ",")), log, rc_file)
  local most, polls = { 0, 0 }, 0
  local ok, err = pcall(function()
    while not read(rc_file) do
      for i, n in ipairs(nodes) do
        local env = n.get("node")
        local r = env.result or {}
        most[i] = math.max(most[i], (r.starting or 0) + (r.waiting_to_start or 0) + (r.queued or 0))
      end
      polls = polls + 1
      rock.sleep(0.05)
    end
  end)
  for _, n in ipairs(nodes) do n.kill("TERM"); n.wait() end
  if not ok then error(err, 0) end
  T.eq(read(rc_file), "0\n", "the run: " .. tostring(read(log)))
  T.ok(polls >= 20, "polled the nodes throughout: " .. polls)
  T.eq(json.encode(most), json.encode({ 1, 1 }), "starts in flight per node, at most")
  local on = {}
  for _, tr in ipairs(jsonl(out .. "/rounds/1/trajectories.jsonl")) do on[tr.sandbox.node] = (on[tr.sandbox.node] or 0) + 1 end
  T.ok(on[urls[1]] and on[urls[2]], "both nodes started some: " .. json.encode(on))
end)

T.sh("rm -rf " .. root)
T.done()
