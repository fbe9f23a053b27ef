-- The agent loop on the local backend (issue 8): every termination reason
-- through the real API (real rocklet, real bash, real git), the model
-- policy against a fake OpenAI-compatible server on 127.0.0.1, the output
-- files, --resume after SIGKILL, SIGTERM mid-run, finish-only.
-- Grading against pytest runs in containers: test_engine_agent.lua.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local F = dofile(here .. "fake_openai.lua")
local json = rock.json

local tmp = os.getenv("TMPDIR") or "/tmp"
local root = T.sh("mktemp -d " .. tmp .. "/rock-agent-test.XXXXXX"):gsub("%s+$", "")

local write = T.write

local read = T.read

local n_repo = 0
--- A git repo with a buggy calc.py at its base commit; returns a task.
local function make_task(id)
  n_repo = n_repo + 1
  return T.git_task(string.format("%s/repo%d", root, n_repo), { ["calc.py"] = "def add(a, b):\n    return a - b\n", README = "calc\n" },
    { instance_id = id or ("local__calc-" .. n_repo), problem_statement = "add() subtracts instead of adding." })
end

local FIX = { tool = "str_replace_editor", command = "str_replace", path = nil,
              old_str = "return a - b", new_str = "return a + b" }

local function fix_for(t)
  local a = {}
  for k, v in pairs(FIX) do a[k] = v end
  a.path = t.repo_dir .. "/calc.py"
  return a
end

--- A replay policy from a table instance_id -> actions.
local function replay(by_id)
  local path = string.format("%s/replay-%d.jsonl", root, math.random(1 << 30))
  local lines = {}
  for id, actions in pairs(by_id) do lines[#lines + 1] = json.encode({ instance_id = id, actions = actions }) end
  write(path, table.concat(lines, "\n") .. "\n")
  return path
end

local n_out = 0
local function out_dir()
  n_out = n_out + 1
  return string.format("%s/out%d", root, n_out)
end

local function run(tasks, opts)
  opts.backend = "local"
  opts.out = opts.out or out_dir()
  opts.eval = opts.eval or "none"
  opts.progress = false
  local summary, trajs = rock.agent.run(tasks, opts)
  return summary, trajs, opts.out
end

T.test("a replay that edits and submits: finish, the patch, the files", function()
  local t = make_task()
  local summary, trajs, out = run({ t }, { policy = "replay", replay = replay{ [t.instance_id] = {
    { tool = "bash", command = "grep -n 'a - b' calc.py" },
    fix_for(t),
    { tool = "bash", command = "printf 'new\\xff\\x00file' > data.bin && python3 -c 'print(1)'" },
    { tool = "submit" } } } })
  T.eq(summary.total, 1)
  local tr = trajs[1]
  T.eq(tr.termination_reason, "finish")
  T.eq(tr.exit_status, "Submitted")
  T.eq(#tr.steps, 4)
  T.match(tr.steps[1].observation, "<returncode>0</returncode>")
  T.match(tr.steps[1].observation, "2:    return a %- b")
  T.match(tr.steps[2].observation, "has been edited")
  T.match(tr.patch, "%+    return a %+ b")
  T.match(tr.patch, "data.bin") -- a new binary file is in the patch
  T.match(tr.patch, "GIT binary patch")
  -- the repo itself is the sandbox's (local backend): the edit landed
  T.match(read(t.repo_dir .. "/calc.py"), "a %+ b")
  -- messages: system, user, then assistant tool calls answered by tool messages
  T.eq(tr.messages[1].role, "system")
  T.eq(tr.messages[2].role, "user")
  T.match(tr.messages[2].content, "add%(%) subtracts")
  T.eq(tr.messages[3].role, "assistant")
  T.eq(tr.messages[3].tool_calls[1]["function"].name, "bash")
  T.eq(tr.messages[4].role, "tool")
  T.eq(tr.messages[4].tool_call_id, tr.messages[3].tool_calls[1].id)
  T.eq(#tr.messages, 2 + 2 * 4)
  T.eq(tr.sandbox.backend, "local")
  T.ok(tr.timings.total >= tr.timings.setup, "timings")
  T.ok(tr.teardown.stopped, "the sandbox was stopped")
  -- the files
  local lines = {}
  for l in io.lines(out .. "/trajectories.jsonl") do lines[#lines + 1] = json.decode(l) end
  T.eq(#lines, 1)
  T.eq(lines[1].instance_id, t.instance_id)
  local pred = json.decode(read(out .. "/preds.jsonl"))
  T.eq(pred.instance_id, t.instance_id)
  T.eq(pred.model_patch, tr.patch)
  T.eq(pred.model_name_or_path, "replay")
  local s = json.decode(read(out .. "/summary.json"))
  T.eq(s.total, 1)
  T.eq(s.by_reason.finish, 1)
  T.ok(read(out .. "/summary.json"):find('"error_ids":[]', 1, true), "empty lists stay lists")
end)

T.test("an edit that leaves a latin-1 file: the patch is still UTF-8 (binary hunks) and applies", function()
  local t = make_task()
  local _, trajs = run({ t }, { policy = "replay", replay = replay{ [t.instance_id] = {
    { tool = "bash", command = "printf 'caf\\xe9 = 1\\n' >> calc.py" }, { tool = "submit" } } } })
  local patch = trajs[1].patch
  T.ok(utf8.len(patch), "valid UTF-8")
  T.match(patch, "GIT binary patch")
  local copy = root .. "/latin1-copy"
  local pf = root .. "/latin1.patch"
  write(pf, patch)
  local out, ok = T.sh(string.format("git clone -q %s %s && cd %s && git checkout -q %s && git apply %s && tail -c 9 calc.py | od -An -c",
    t.repo_dir, copy, copy, t.base_commit, pf))
  T.ok(ok, out)
  T.match(out, "351") -- the byte 0xe9 came through
end)

T.test("mini-swe-agent's submission: COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", function()
  local t = make_task()
  local _, trajs = run({ t }, { policy = "replay", replay = replay{ [t.instance_id] = {
    { tool = "bash", command = "echo not yet; echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" },
    { tool = "bash", command = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; false" },
    { tool = "bash", command = "  echo '  COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT'; echo my answer" },
    { tool = "bash", command = "echo never" } } } })
  T.eq(trajs[1].termination_reason, "finish")
  T.eq(#trajs[1].steps, 3) -- neither a marker on line 2 nor a failed command submits
  T.eq(trajs[1].submission, "my answer\n")
  T.eq(trajs[1].patch, "")
end)

T.test("the same action three times in a row: loop", function()
  local t = make_task()
  local ls = { tool = "bash", command = "ls" }
  local _, trajs = run({ t }, { policy = "replay", replay = replay{ [t.instance_id] = {
    ls, { tool = "bash", command = "pwd" }, ls, ls, ls, { tool = "submit" } } } })
  T.eq(trajs[1].termination_reason, "loop")
  T.eq(trajs[1].exit_status, "RepeatedAction")
  T.eq(#trajs[1].steps, 5)
  T.eq(trajs[1].steps[5].failure_reason, "repeated_action")
  T.eq(trajs[1].steps[5].observation, nil) -- the third one did not run
end)

T.test("the step limit: budget, the patch so far kept", function()
  local t = make_task()
  local _, trajs = run({ t }, { policy = "replay", step_limit = 2, replay = replay{ [t.instance_id] = {
    fix_for(t), { tool = "bash", command = "ls" }, { tool = "submit" } } } })
  T.eq(trajs[1].termination_reason, "budget")
  T.eq(trajs[1].exit_status, "LimitsExceeded")
  T.eq(#trajs[1].steps, 2)
  T.match(trajs[1].patch, "a %+ b")
end)

T.test("wall time: budget, TimeExceeded, the command interrupted", function()
  local t = make_task()
  local _, trajs = run({ t }, { policy = "replay", wall_limit = 1, replay = replay{ [t.instance_id] = {
    { tool = "bash", command = "sleep 30" }, { tool = "submit" } } } })
  T.eq(trajs[1].termination_reason, "budget")
  T.eq(trajs[1].exit_status, "TimeExceeded")
  T.ok(trajs[1].timings.agent < 20, "the sleep was cut short")
end)

T.test("a command timeout: return code -1, the session goes on", function()
  local t = make_task()
  local _, trajs = run({ t }, { policy = "replay", command_timeout = 1, replay = replay{ [t.instance_id] = {
    { tool = "bash", command = "export KEEP=kept; sleep 30" }, { tool = "bash", command = "echo $KEEP" },
    { tool = "submit" } } } })
  local st = trajs[1].steps
  T.eq(st[1].exit_code, -1)
  T.eq(st[1].failure_reason, "timeout")
  T.match(st[1].observation, "timed out and has been killed")
  T.match(st[2].observation, "kept")
  T.eq(trajs[1].termination_reason, "finish")
end)

T.test("a long output: head, tail, the elided count and the full output's path", function()
  local t = make_task()
  local _, trajs = run({ t }, { policy = "replay", replay = replay{ [t.instance_id] = {
    { tool = "bash", command = "seq 1 100000" }, { tool = "submit" } } } })
  local obs = trajs[1].steps[1].observation
  T.match(obs, "<warning>")
  T.match(obs, "<output_head>\n1\n2\n3\n")
  T.match(obs, "99999\n100000\n\n</output_tail>")
  local elided = tonumber(obs:match("<elided_chars>\n(%d+) characters elided"))
  T.ok(elided and elided > 500000, "elided count")
  T.match(obs, "full output is kept in the sandbox at /")
  T.ok(#obs < 12000, "the observation is cut")
end)

T.test("the editor's errors are observations, not failures", function()
  local t = make_task()
  local _, trajs = run({ t }, { policy = "replay", replay = replay{ [t.instance_id] = {
    { tool = "str_replace_editor", command = "view", path = "calc.py" },
    { tool = "str_replace_editor", command = "str_replace", path = t.repo_dir .. "/calc.py", old_str = "nope" },
    { tool = "str_replace_editor", command = "view", path = t.repo_dir .. "/calc.py", view_range = "x" },
    { tool = "submit" } } } })
  local st = trajs[1].steps
  T.match(st[1].observation, "is not an absolute path")
  T.match(st[1].observation, "Maybe you meant " .. t.repo_dir:gsub("%p", "%%%0") .. "/calc.py")
  T.match(st[2].observation, "did not appear verbatim")
  T.ok(st[3].exit_code ~= 0, "a bad view_range is an error")
  T.eq(trajs[1].termination_reason, "finish")
end)

T.test("the sandbox killed mid-run: aborted, never the model's failure", function()
  local t = make_task()
  local summary, trajs = run({ t }, { policy = "replay", replay = replay{ [t.instance_id] = {
    { tool = "bash", command = "echo hi" }, { tool = "bash", command = "kill -9 $PPID; sleep 5" },
    { tool = "submit" } } } })
  T.eq(trajs[1].termination_reason, "aborted")
  T.ok(trajs[1].exit_status == "sandbox_not_alive" or trajs[1].exit_status == "connection_failed",
    "exit status names the failure: " .. tostring(trajs[1].exit_status))
  T.eq(summary.error_ids[1], t.instance_id)
  T.eq(rock.sandbox.live_count(), 0)
end)

T.test("a replay file without the instance, a missing gold patch: aborted with why", function()
  local t = make_task()
  local _, trajs = run({ t }, { policy = "replay", replay = replay{ other = { { tool = "submit" } } } })
  T.eq(trajs[1].termination_reason, "aborted")
  T.match(trajs[1].error.message, "no actions for " .. t.instance_id:gsub("%p", "%%%0"))
  local _, trajs2 = run({ t }, { policy = "oracle" })
  T.eq(trajs2[1].termination_reason, "aborted")
  T.match(trajs2[1].error.message, "no gold patch")
  T.raises("invalid_argument", rock.agent.run, { t }, { policy = "replay", replay = root .. "/nope.jsonl", out = out_dir() })
end)

T.test("issue15-17: a replay line whose actions is not a list is an error naming the line", function()
  local t = make_task()
  local path = root .. "/replay-bad-actions.jsonl"
  for _, bad in ipairs({ '{"tool": "submit"}', '"submit"', 'null', '{"1": {"tool": "submit"}}' }) do
    write(path, json.encode({ instance_id = "other", actions = { { tool = "submit" } } }) .. "\n"
      .. '{"instance_id": "' .. t.instance_id .. '", "actions": ' .. bad .. '}\n')
    local err = T.raises("invalid_argument", rock.agent.run, { t }, { policy = "replay", replay = path,
      backend = "local", out = out_dir(), eval = "none", progress = false })
    T.match(err.message, "line 2: 'actions' must be a list", bad)
  end
  write(path, '{"instance_id": "x", "actions": [{"tool": "bash"}]}\n')
  T.match(T.raises("invalid_argument", rock.agent.policy, "replay", { replay = path }).message,
    "line 1: action 1 %(bash%) has no string 'command'")
  -- an empty list is a replay of nothing
  write(path, '{"instance_id": "' .. t.instance_id .. '", "actions": []}\n')
  local _, trajs = run({ t }, { policy = "replay", replay = path })
  T.eq(trajs[1].termination_reason, "budget")
end)

T.test("the oracle applies the gold patch and submits", function()
  local t = make_task()
  t.patch = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
  local _, trajs = run({ t }, { policy = "oracle" })
  T.eq(trajs[1].termination_reason, "finish")
  T.match(trajs[1].patch, "\n%-    return a %- b\n%+    return a %+ b\n$")
end)

-- the model policy, through rock.llm, against a scripted endpoint
local function model_run(t, script, extra)
  local srv = F.start(script)
  local ok, summary, trajs = pcall(function()
    local o = { policy = "model", cost_limit = 0, llm = rock.llm.new{ base_url = srv.url, model = "fake-model", api_key = "k",
      retries = 1, backoff = 0.01, prices = { ["fake-model"] = { input = 1e6, output = 2e6 } } } }
    for k, v in pairs(extra or {}) do o[k] = v end
    return run({ t }, o)
  end)
  local reqs = srv.requests()
  srv.stop()
  if not ok then error(summary, 0) end
  return trajs[1], reqs, summary
end

T.test("model, tools mode: a scripted conversation fixes the bug", function()
  local t = make_task()
  local tr, reqs = model_run(t, {
    F.tool_call("str_replace_editor", { command = "view", path = t.repo_dir .. "/calc.py" }),
    F.tool_call("str_replace_editor", { command = "str_replace", path = t.repo_dir .. "/calc.py",
      old_str = "return a - b", new_str = "return a + b" }),
    F.tool_call("bash", { command = "python3 -c 'import calc; print(calc.add(2, 3))'" }),
    F.tool_call("submit", {}),
  })
  T.eq(tr.termination_reason, "finish")
  T.eq(tr.model, "fake-model")
  T.match(tr.steps[3].observation, "<output>\n5\n")
  T.match(tr.patch, "return a %+ b")
  T.eq(tr.model_stats.api_calls, 4)
  T.eq(tr.model_stats.tokens_sent, 40)
  T.eq(tr.model_stats.tokens_received, 20)
  -- 10 tokens at $1/token in, 5 at $2/token out, four times
  T.eq(tr.model_stats.instance_cost, 80)
  T.eq(tr.steps[1].cost, 20)
  T.eq(tr.steps[1].tokens, 15)
  -- what the model saw: tools offered, each observation answering its call
  T.eq(#reqs, 4)
  local last = reqs[4].body
  T.eq(last.model, "fake-model")
  T.eq(#last.tools, 3)
  T.eq(last.messages[1].role, "system")
  T.eq(last.messages[#last.messages].role, "tool")
  T.match(last.messages[#last.messages].content, "5")
  T.eq(#last.messages, 2 + 2 * 3)
  T.eq(#tr.messages, 2 + 2 * 4)
end)

T.test("model, text mode: format errors three times in a row end as loop", function()
  local t = make_task()
  local tr, reqs = model_run(t, {
    F.reply("no block here"),
    F.reply("```bash\nls\n```\n```bash\npwd\n```"),
    F.reply("```python\nprint(1)\n```"),
  }, { mode = "text" })
  T.eq(tr.termination_reason, "loop")
  T.eq(tr.exit_status, "RepeatedFormatError")
  T.eq(#reqs, 3)
  T.match(reqs[3].body.messages[#reqs[3].body.messages].content, "EXACTLY ONE bash code block")
  T.eq(reqs[3].body.tools, nil)
end)

T.test("model, text mode: a bash block runs, the marker submits", function()
  local t = make_task()
  local tr = model_run(t, {
    F.reply("Let me fix it.\n```bash\nsed -i 's/a - b/a + b/' calc.py\n```"),
    F.reply("Done.\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"),
  }, { mode = "text" })
  T.eq(tr.termination_reason, "finish")
  T.eq(tr.messages[4].role, "user")
  T.match(tr.messages[4].content, "<returncode>0</returncode>")
  T.match(tr.patch, "a %+ b")
end)

T.test("model: a context-length error ends as context_overflow", function()
  local t = make_task()
  local tr = model_run(t, {
    F.tool_call("bash", { command = "ls" }),
    { status = 400, body = { error = { message = "This model's maximum context length is 8192 tokens.",
      type = "invalid_request_error", code = "context_length_exceeded" } } },
  })
  T.eq(tr.termination_reason, "context_overflow")
  T.eq(tr.exit_status, "context_overflow")
  T.eq(#tr.steps, 1)
end)

T.test("model: unreachable after retries is aborted; the cost limit is budget", function()
  local t = make_task()
  local tr = model_run(t, { { drop = true }, { drop = true }, { drop = true } })
  T.eq(tr.termination_reason, "aborted")
  T.eq(tr.exit_status, "llm_unreachable")
  local t2 = make_task()
  local tr2 = model_run(t2, { F.tool_call("bash", { command = "ls" }), F.tool_call("bash", { command = "pwd" }) },
    { cost_limit = 30 })
  T.eq(tr2.termination_reason, "budget")
  T.eq(tr2.exit_status, "LimitsExceeded")
  T.eq(#tr2.steps, 2) -- 20 after one call, 40 after two: no third call
end)

T.test("workers: several tasks at once, each its own sandbox and trajectory", function()
  local tasks, by_id = {}, {}
  for i = 1, 6 do
    local t = make_task()
    tasks[i] = t
    by_id[t.instance_id] = { { tool = "bash", command = "sleep 0.2; echo " .. i }, fix_for(t), { tool = "submit" } }
  end
  local summary, trajs, out = run(tasks, { policy = "replay", replay = replay(by_id), workers = 3 })
  T.eq(summary.total, 6)
  T.eq(summary.by_reason.finish, 6)
  local seen = {}
  for _, tr in ipairs(trajs) do seen[tr.sandbox.id] = true end
  local n = 0
  for _ in pairs(seen) do n = n + 1 end
  T.eq(n, 6)
  local k = 0
  for _ in io.lines(out .. "/preds.jsonl") do k = k + 1 end
  T.eq(k, 6)
end)

T.test("finish_only keeps finished trajectories and counts the rest", function()
  local kept, dropped = rock.filters.finish_only({
    { termination_reason = "finish" }, { termination_reason = "loop" }, { termination_reason = "finish" },
    { termination_reason = "aborted" }, { termination_reason = "budget" }, { termination_reason = "loop" } })
  T.eq(#kept, 2)
  T.eq(dropped.loop, 2)
  T.eq(dropped.aborted, 1)
  T.eq(dropped.budget, 1)
  T.eq(dropped.finish, nil)
end)

-- the recipe, as a user runs it: SIGKILL then --resume, SIGTERM, --finish-only
local rock_exe = T.rock_exe()
local recipe = T.sh("cd " .. here .. "../.. && pwd"):gsub("%s+$", "") .. "/recipes/swe_agent.lua"

local function tasks_file(tasks)
  local path = string.format("%s/tasks-%d.jsonl", root, math.random(1 << 30))
  local lines = {}
  for i, t in ipairs(tasks) do lines[i] = json.encode(t) end
  write(path, table.concat(lines, "\n") .. "\n")
  return path
end

local function count_lines(path)
  local n, ids = 0, {}
  for l in io.lines(path) do
    n = n + 1
    local r = json.decode(l)
    ids[r.instance_id] = (ids[r.instance_id] or 0) + 1
  end
  return n, ids
end

--- Start the recipe in the background; returns its pid.
local function start_recipe(args)
  local pid = T.sh(string.format("cd %s && { %s %s %s >%s/recipe.log 2>&1 & echo $!; }",
    root, rock_exe, recipe, args, root)):gsub("%s+$", "")
  return tonumber(pid)
end

local function wait_until(pred, seconds)
  for _ = 1, seconds * 10 do
    if pred() then return true end
    rock.sleep(0.1)
  end
  return pred()
end

local function alive(pid) return T.sh("kill -0 " .. pid .. " && echo yes"):find("yes") ~= nil end

T.test("--resume after SIGKILL redoes no finished task and loses none", function()
  local tasks, by_id = {}, {}
  for i = 1, 4 do
    local t = make_task("local__resume-" .. i)
    tasks[i] = t
    -- the first finishes at once, the others take a while
    by_id[t.instance_id] = { { tool = "bash", command = i == 1 and "true" or "sleep 3" }, fix_for(t), { tool = "submit" } }
  end
  local tf, rf, out = tasks_file(tasks), replay(by_id), out_dir()
  local args = string.format("--instances %s --policy replay --replay %s --out %s --backend local --workers 4 --no-eval",
    tf, rf, out)
  local pid = start_recipe(args)
  T.ok(wait_until(function()
    local s = read(out .. "/trajectories.jsonl")
    return s and s:find("\n")
  end, 60), "the first task was written: " .. tostring(read(root .. "/recipe.log")))
  T.sh("kill -9 " .. pid)
  wait_until(function() return not alive(pid) end, 10)
  local n1 = count_lines(out .. "/trajectories.jsonl")
  T.ok(n1 >= 1 and n1 < 4, "killed mid-run: " .. n1 .. " written")
  -- a torn line, as a crash mid-write leaves
  local f = assert(io.open(out .. "/trajectories.jsonl", "ab"))
  f:write('{"instance_id": "local__resume-4", "stu')
  f:close()
  local _, ok = T.sh(string.format("cd %s && %s %s %s --resume", root, rock_exe, recipe, args))
  T.ok(ok, "the resumed run succeeds")
  local n, ids = count_lines(out .. "/trajectories.jsonl")
  T.eq(n, 4)
  for i = 1, 4 do T.eq(ids["local__resume-" .. i], 1, "task " .. i .. " once") end
  local np = count_lines(out .. "/preds.jsonl")
  T.eq(np, 4)
  T.eq(json.decode(read(out .. "/summary.json")).total, 4)
  rock.gc.run() -- what the killed host left, if the resumed run could not reap it (gc.once ran already)
end)

T.test("SIGTERM ends running tasks as aborted, writes them, stops their sandboxes", function()
  local tasks, by_id = {}, {}
  local sleep = string.format("sleep 61.%d", math.random(1, 1 << 30)) -- this test's own
  for i = 1, 3 do
    local t = make_task("local__term-" .. i)
    tasks[i] = t
    by_id[t.instance_id] = { { tool = "bash", command = sleep }, { tool = "submit" } }
  end
  local out = out_dir()
  local pid = start_recipe(string.format(
    "--instances %s --policy replay --replay %s --out %s --backend local --workers 2 --no-eval --finish-only",
    tasks_file(tasks), replay(by_id), out))
  T.ok(wait_until(function()
    return (T.sh("ps -eo args | grep -cx '" .. sleep .. "'"):match("%d+") or "0") == "2"
  end, 60), "two tasks are running: " .. tostring(read(root .. "/recipe.log")))
  T.sh("kill -TERM " .. pid)
  T.ok(wait_until(function() return not alive(pid) end, 60), "the recipe ended")
  local n, ids = count_lines(out .. "/trajectories.jsonl")
  T.eq(n, 2) -- the running two; the third never started
  for l in io.lines(out .. "/trajectories.jsonl") do
    local r = json.decode(l)
    T.eq(r.termination_reason, "aborted")
    T.eq(r.exit_status, "aborted")
    T.ok(r.teardown and r.teardown.stopped, "its sandbox was stopped")
  end
  T.eq(ids["local__term-3"], nil)
  T.eq((T.sh("ps -eo args | grep -cx '" .. sleep .. "'"):match("%d+")), "0")
  T.match(read(root .. "/recipe.log"), "winding down")
end)

T.test("issue15-8: a second run on an --out in use is refused at once (--resume too); the first keeps every trajectory; kill -9 frees it", function()
  local tasks, by_id = {}, {}
  for i = 1, 3 do
    local t = make_task("local__lock-" .. i)
    tasks[i] = t
    by_id[t.instance_id] = { { tool = "bash", command = "sleep 1" }, fix_for(t), { tool = "submit" } }
  end
  local out = out_dir()
  local args = string.format("--instances %s --policy replay --replay %s --out %s --backend local --workers 1 --no-eval",
    tasks_file(tasks), replay(by_id), out)
  local log_a = root .. "/lock-a.log"
  local pid = tonumber((T.sh(string.format("cd %s && { %s %s %s >%s 2>&1 & echo $!; }", root, rock_exe, recipe, args,
    log_a)):gsub("%s+$", "")))
  T.ok(wait_until(function() return read(out .. "/trajectories.jsonl") ~= nil end, 60),
    "the first run started: " .. tostring(read(log_a)))
  for _, extra in ipairs({ "", " --resume" }) do
    local t0 = rock.uv.hrtime()
    local log, ok = T.sh(string.format("cd %s && %s %s %s%s 2>&1", root, rock_exe, recipe, args, extra))
    T.ok(not ok, "the second run" .. extra .. " fails: " .. log)
    T.match(log, "conflict: " .. out:gsub("%p", "%%%0") .. " is in use by another run %(pid " .. pid .. "%)")
    T.ok((rock.uv.hrtime() - t0) / 1e9 < 10, "at once")
    T.ok(alive(pid), "the first run goes on")
  end
  T.ok(wait_until(function() return not alive(pid) end, 60), "the first run ended")
  T.match(read(log_a), "ended: finish%s+3")
  local n, ids = count_lines(out .. "/trajectories.jsonl")
  T.eq(n, 3, "the first run's trajectories are all there")
  for i = 1, 3 do T.eq(ids["local__lock-" .. i], 1) end
  T.eq(count_lines(out .. "/preds.jsonl"), 3)
  T.eq(json.decode(read(out .. "/summary.json")).total, 3)
  -- a run killed with SIGKILL holds nothing: the next one takes the dir
  local out2 = out_dir()
  local args2 = args:gsub("%-%-out %S+", "--out " .. out2)
  local pid2 = tonumber((T.sh(string.format("cd %s && { %s %s %s >%s 2>&1 & echo $!; }", root, rock_exe, recipe, args2,
    log_a)):gsub("%s+$", "")))
  T.ok(wait_until(function() return read(out2 .. "/trajectories.jsonl") ~= nil end, 60), "started: " .. tostring(read(log_a)))
  T.sh("kill -9 " .. pid2)
  T.ok(wait_until(function() return not alive(pid2) end, 10), "killed")
  local log3, ok3 = T.sh(string.format("cd %s && %s %s %s --resume 2>&1", root, rock_exe, recipe, args2))
  T.ok(ok3, "a run after the killed one succeeds: " .. log3)
  T.eq(count_lines(out2 .. "/trajectories.jsonl"), 3)
  rock.gc.run() -- what the killed host left, if the run after it could not reap it (gc.once ran already)
end)

os.execute("rm -rf '" .. root .. "'")
T.test("progress: a sandbox in a cluster's queue counts as queued, not running", function()
  local buf = {}
  local out = { write = function(_, ...) for _, x in ipairs({ ... }) do buf[#buf + 1] = x end end, flush = function() end }
  local p = rock.agent.progress.new(3, { out = out, tty = true })
  local t, sb = { instance_id = "a" }, {}
  p:started(); p:started()
  p:phase(t, sb, "container_create", "running", "sbatch")
  T.match(p:line(), " 2 running · 0 failed ", "no queue seen: no queued count")
  p:phase(t, sb, "queued", "running", "job 7 PENDING (Resources)")
  p:phase(t, sb, "queued", "running", "job 7 PENDING (Priority)") -- the same wait
  T.match(p:line(), " 1 running · 1 queued ")
  T.match(table.concat(buf), "1 queued")
  p:phase(t, sb, "queued", "success", "job 7 running on n1")
  T.match(p:line(), " 2 running · 0 queued ")
  p:phase(t, sb, "queued", "failed", "again") -- ended already: no change
  T.eq(p.queued, 0)
  -- in a log (no terminal): one line when a task's sandbox is queued
  buf = {}
  local lp = rock.agent.progress.new(3, { out = out, tty = false })
  lp:started()
  lp:phase(t, sb, "queued", "running", "job 8 PENDING (Resources)")
  T.eq(table.concat(buf), "[0/3] a: queued (job 8 PENDING (Resources))\n")
end)

T.done()
