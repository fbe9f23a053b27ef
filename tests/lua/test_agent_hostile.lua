-- The agent loop under hostile input, on the local backend (issue 8, the
-- hostile round): outputs that are not UTF-8, model answers an API would
-- not take back, an --out dir with a quote, a full disk, interruptions.
-- Each test names the defect it guards against.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local F = dofile(here .. "fake_openai.lua")
local json = rock.json

local tmp = os.getenv("TMPDIR") or "/tmp"
local root = T.sh("mktemp -d " .. tmp .. "/rock-agent-hostile.XXXXXX"):gsub("%s+$", "")

local write = T.write

local read = T.read

local q = T.q

local n_repo = 0
--- A git repo with a buggy calc.py at its base commit; returns a task.
local function make_task(id)
  n_repo = n_repo + 1
  return T.git_task(string.format("%s/repo%d", root, n_repo), { ["calc.py"] = "def add(a, b):\n    return a - b\n" },
    { instance_id = id or ("local__hostile-" .. n_repo), problem_statement = "add() subtracts instead of adding." })
end

local n_file = 0
--- A replay file from a table instance_id -> actions.
local function replay(by_id)
  n_file = n_file + 1
  local path = string.format("%s/replay-%d.jsonl", root, n_file)
  local lines = {}
  for id, actions in pairs(by_id) do lines[#lines + 1] = json.encode({ instance_id = id, actions = actions }) end
  write(path, table.concat(lines, "\n") .. "\n")
  return path
end

local function tasks_file(tasks)
  n_file = n_file + 1
  local path = string.format("%s/tasks-%d.jsonl", root, n_file)
  local lines = {}
  for i, t in ipairs(tasks) do lines[i] = json.encode(t) end
  write(path, table.concat(lines, "\n") .. "\n")
  return path
end

local n_out = 0
local function out_dir(suffix)
  n_out = n_out + 1
  return string.format("%s/out%d%s", root, n_out, suffix or "")
end

local function run(tasks, opts)
  opts.backend = "local"
  opts.out = opts.out or out_dir()
  opts.eval = opts.eval or "none"
  opts.progress = false
  local summary, trajs = rock.agent.run(tasks, opts)
  return summary, trajs, opts.out
end

--- Every line of a JSONL file is UTF-8 and decodes; returns the records.
local function jsonl(path)
  local recs = {}
  for l in io.lines(path) do
    T.ok(utf8.len(l), "line " .. (#recs + 1) .. " of " .. path .. " is UTF-8")
    recs[#recs + 1] = json.decode(l)
  end
  return recs
end

--- messages as an OpenAI-compatible API takes them: every assistant message
--- has content or tool calls, every tool call an id, answered by a tool
--- message before the next assistant or user message.
local function check_openai(messages, what)
  local open = {}
  for i, m in ipairs(messages) do
    local where = string.format("%s: message %d (%s)", what, i, tostring(m.role))
    if m.role == "assistant" or m.role == "user" then
      T.eq(next(open), nil, where .. ": every tool call answered before it")
    end
    if m.role == "assistant" then
      local calls = m.tool_calls
      local n = type(calls) == "table" and #calls or 0
      T.ok(type(m.content) == "string" or n > 0, where .. ": content or tool calls")
      for _, c in ipairs(n > 0 and calls or {}) do
        T.ok(type(c.id) == "string" and c.id ~= "", where .. ": a tool call has an id")
        T.eq(open[c.id], nil, where .. ": tool call ids are unique")
        open[c.id] = true
      end
    elseif m.role == "tool" then
      T.ok(open[m.tool_call_id], where .. ": answers an open tool call")
      open[m.tool_call_id] = nil
      T.eq(type(m.content), "string", where .. ": content")
    end
  end
  T.eq(next(open), nil, what .. ": every tool call answered")
end

T.test("output that is not UTF-8 (bytes, NULs, a character cut by the elision) is kept as UTF-8", function()
  local t = make_task()
  local _, trajs, out = run({ t }, { policy = "replay", replay = replay{ [t.instance_id] = {
    { tool = "bash", command = [[printf 'a\xffb\x00c\xe2\x82']] },
    -- 3-byte characters across the rocklet's head/tail cut
    { tool = "bash", command = [[for i in $(seq 1 8000); do printf '\xe2\x82\xac'; done]] },
    { tool = "bash", command = [[printf 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n\xc3(']] } } } })
  local tr = trajs[1]
  T.eq(tr.termination_reason, "finish")
  T.match(tr.steps[1].observation, "a\u{FFFD}b\0c\u{FFFD}")
  for i, st in ipairs(tr.steps) do T.ok(utf8.len(st.observation), "observation " .. i .. " is UTF-8") end
  T.match(tr.steps[2].observation, "elided")
  T.eq(tr.submission, "\u{FFFD}(")
  local recs = jsonl(out .. "/trajectories.jsonl")
  T.eq(rock.agent.output.observation(recs[1], 1), tr.steps[1].observation)
  T.eq(recs[1].messages[4].content, tr.steps[1].observation) -- what the model would see
end)

T.test("a model answer with no content and no tool calls, tool calls without ids: the messages stay valid", function()
  local t = make_task()
  local noid = F.tool_call("bash", { command = "echo one" })
  noid.body.choices[1].message.tool_calls[1].id = nil
  local two = F.tool_call({ { "bash", { command = "echo a" } }, { "bash", { command = "echo b" } } })
  for _, c in ipairs(two.body.choices[1].message.tool_calls) do c.id = json.null end
  local srv = F.start({ F.reply(json.null), noid, two, F.tool_call("submit", {}) })
  local ok, err = pcall(function()
    local _, trajs = run({ t }, { policy = "model", cost_limit = 0, llm = rock.llm.new{ base_url = srv.url,
      model = "fake-model", retries = 0, prices = { ["fake-model"] = { input = 0, output = 0 } } } })
    local tr = trajs[1]
    T.eq(tr.termination_reason, "finish")
    T.eq(#tr.steps, 4)
    T.eq(tr.steps[1].failure_reason, "format_error")
    T.match(tr.steps[2].observation, "one")
    T.eq(tr.steps[3].failure_reason, "format_error")
    check_openai(tr.messages, "trajectory")
    local reqs = srv.requests()
    T.eq(#reqs, 4)
    for i, r in ipairs(reqs) do check_openai(r.body.messages, "request " .. i) end
  end)
  srv.stop()
  if not ok then error(err, 0) end
end)

T.test("an --out dir with a quote: the eval logs are written, fresh and in place", function()
  for _, how in ipairs({ "fresh", "in_place" }) do
    local t = make_task()
    local out = out_dir("-it's")
    local _, trajs = run({ t }, { policy = "replay", eval = how, out = out, replay = replay{ [t.instance_id] = {
      { tool = "bash", command = "sed -i 's/a - b/a + b/' calc.py" }, { tool = "submit" } } } })
    local ev = trajs[1].eval
    T.eq(ev.log_error, nil, how .. ": log error")
    T.eq(ev.log_path, out .. "/eval/" .. t.instance_id .. ".log", how .. ": log path")
    T.match(read(ev.log_path), "Applied Patch", how .. ": the log")
  end
end)

-- a full disk: a small tmpfs of our own (root only; skipped otherwise)
local function with_tmpfs(kib, fn)
  if not T.with_tmpfs(root .. "/full", kib, fn) then print("skip: cannot mount a tmpfs (not root?)") end
end

local rock_exe = T.rock_exe()
local recipe = T.sh("cd " .. here .. "../.. && pwd"):gsub("%s+$", "") .. "/recipes/swe_agent.lua"

T.test("--out on a full disk: the run fails naming the file, nothing written is spoiled, --resume ends it", function()
  with_tmpfs(48, function(dir)
    local tasks, by_id = {}, {}
    for i = 1, 6 do
      local t = make_task("local__full-" .. i)
      tasks[i] = t
      by_id[t.instance_id] = { { tool = "bash", command = "seq 1 3000" }, { tool = "submit" } }
    end
    local out = dir .. "/out"
    -- --no-report: the report's pages (a writer of their own, whose failures
    -- are logged and never stop the run) would fill the tmpfs first
    local args = string.format("--instances %s --policy replay --replay %s --out %s --backend local --no-eval --no-report",
      tasks_file(tasks), replay(by_id), out)
    local log, ok = T.sh(string.format("%s %s %s 2>&1", rock_exe, recipe, args))
    T.ok(not ok, "the run fails: " .. log)
    T.match(log, "io_error")
    T.match(log, "No space left on device")
    T.match(log, "trajectories.jsonl")
    -- the summary of the tasks written before is whole (not an empty file)
    local s = json.decode(read(out .. "/summary.json"))
    local done = #jsonl(out .. "/preds.jsonl")
    T.eq(s.total, done)
    T.ok(done < 6, "the disk filled before the end: " .. done)
    -- room again: --resume completes the run, each task once
    T.sh("mount -o remount,size=4m " .. dir)
    local log2, ok2 = T.sh(string.format("%s %s %s --resume 2>&1", rock_exe, recipe, args))
    T.ok(ok2, "the resumed run succeeds: " .. log2)
    local ids = {}
    for _, r in ipairs(jsonl(out .. "/trajectories.jsonl")) do ids[r.instance_id] = (ids[r.instance_id] or 0) + 1 end
    for i = 1, 6 do T.eq(ids["local__full-" .. i], 1, "task " .. i .. " once") end
    T.eq(json.decode(read(out .. "/summary.json")).total, 6)
  end)
end)

local function alive(pid) return T.sh("kill -0 " .. pid .. " && echo yes"):find("yes") ~= nil end

local function wait_until(pred, seconds)
  for _ = 1, seconds * 10 do
    if pred() then return true end
    rock.sleep(0.1)
  end
  return pred()
end

T.test("SIGTERM in the turns and in the eval: --resume runs both tasks again, each kept once", function()
  local flag = root .. "/slow"
  write(flag, "")
  local sleep = string.format("sleep 61.%d", math.random(1, 1 << 30)) -- this test's own
  local slow = "test -e " .. flag .. " && " .. sleep .. "; true"
  local a, b = make_task("local__intr-turns"), make_task("local__intr-eval")
  b.test_cmd = slow -- the eval script runs it
  local edit = { tool = "bash", command = "sed -i 's/a - b/a + b/' calc.py" }
  local args = string.format("--instances %s --policy replay --replay %s --out %s --backend local --workers 2",
    tasks_file({ a, b }), replay{ [a.instance_id] = { edit, { tool = "bash", command = slow }, { tool = "submit" } },
      [b.instance_id] = { edit, { tool = "submit" } } }, out_dir())
  local out = args:match("%-%-out (%S+)")
  local pid = tonumber((T.sh(string.format("{ %s %s %s >%s/recipe.log 2>&1 & echo $!; }",
    rock_exe, recipe, args, root)):gsub("%s+$", "")))
  T.ok(wait_until(function()
    return (T.sh("ps -eo args | grep -cx '" .. sleep .. "'"):match("%d+") or "0") == "2"
  end, 60), "one task in its turns, one in its eval: " .. tostring(read(root .. "/recipe.log")))
  T.sh("kill -TERM " .. pid)
  T.ok(wait_until(function() return not alive(pid) end, 60), "the recipe ended")
  local recs = jsonl(out .. "/trajectories.jsonl")
  T.eq(#recs, 2)
  for _, r in ipairs(recs) do T.eq(r.interrupted, true, r.instance_id .. " is marked interrupted") end
  os.remove(flag)
  local log, ok = T.sh(string.format("%s %s %s --resume 2>&1", rock_exe, recipe, args))
  T.ok(ok, "the resumed run succeeds: " .. log)
  local by_id = {}
  for _, r in ipairs(jsonl(out .. "/trajectories.jsonl")) do
    T.eq(by_id[r.instance_id], nil, r.instance_id .. " once")
    by_id[r.instance_id] = r
  end
  for _, id in ipairs({ a.instance_id, b.instance_id }) do
    local r = by_id[id]
    T.ok(r, id .. " kept")
    T.eq(r.termination_reason, "finish", id)
    T.eq(r.interrupted, nil, id)
    T.ok(r.eval.status == "resolved" or r.eval.status == "unresolved", id .. ": graded, not " .. tostring(r.eval.status))
  end
  T.eq(#jsonl(out .. "/preds.jsonl"), 2)
  T.eq((T.sh("ps -eo args | grep -cx '" .. sleep .. "'"):match("%d+")), "0")
end)

-- Python reads every line of a JSONL file: strict UTF-8, no NaN or
-- Infinity, no lone surrogate in a string. Returns the output and ok.
local PY_READ = [[
import json, sys
def const(c): raise ValueError("not JSON: " + c)
n = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8", errors="strict") as f:
        for line in f:
            json.dumps(json.loads(line, parse_constant=const), ensure_ascii=False).encode("utf-8")
            n += 1
print(n)
]]
local function python_reads(...)
  local script = root .. "/py_read.py"
  write(script, PY_READ)
  local args = {}
  for i, p in ipairs({ ... }) do args[i] = q(p) end
  return T.sh("python3 " .. q(script) .. " " .. table.concat(args, " ") .. " 2>&1")
end

-- a chat completion as raw JSON text: message and usage are JSON texts
local function raw_completion(message, usage)
  return F.raw('{"id":"x","object":"chat.completion","created":0,"model":"fake-model","choices":[{"index":0,'
    .. '"message":' .. message .. ',"finish_reason":"tool_calls"}],"usage":' .. usage .. '}')
end
local LS = json.encode(F.tool_call("bash", { command = "ls" }).body.choices[1].message)

--- the model policy against a script, on the local backend, workers 1 (the
--- tasks ask in order); returns summary, trajectories, out dir, requests, client
local function model_run(tasks, script, extra)
  local srv = F.start(script)
  local client = rock.llm.new{ base_url = srv.url, model = "fake-model", retries = 0,
    prices = { ["fake-model"] = { input = 1, output = 2 } } }
  local ok, summary, trajs, out = pcall(function()
    local o = { policy = "model", cost_limit = 0, llm = client }
    for k, v in pairs(extra or {}) do o[k] = v end
    return run(tasks, o)
  end)
  local reqs = srv.requests()
  srv.stop()
  if not ok then error(summary, 0) end
  return summary, trajs, out, reqs, client
end

T.test("issue15-12: usage of 1e400, NaN, -5, 2e9, Infinity is a bad response: that task aborted, the run goes on", function()
  local usages = { '{"prompt_tokens":1e400,"completion_tokens":5}', '{"prompt_tokens":NaN,"completion_tokens":5}',
    '{"prompt_tokens":-5,"completion_tokens":5}', '{"prompt_tokens":10,"completion_tokens":2e9}',
    '{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":Infinity}}',
    '{"prompt_tokens":10,"completion_tokens":5,"total_tokens":-Infinity}' }
  local script, tasks = {}, {}
  for i, u in ipairs(usages) do
    script[i], tasks[i] = raw_completion(LS, u), make_task("local__usage-" .. i)
  end
  -- an object as a tool call's arguments, holding 1e400
  script[#script + 1] = raw_completion('{"role":"assistant","content":null,"tool_calls":[{"id":"c1",'
    .. '"type":"function","function":{"name":"bash","arguments":{"command":"ls","n":1e400}}}]}',
    '{"prompt_tokens":10,"completion_tokens":5}')
  tasks[#tasks + 1] = make_task("local__usage-args")
  script[#script + 1] = F.tool_call("submit", {}) -- and one that is fine
  tasks[#tasks + 1] = make_task("local__usage-fine")
  local summary, trajs, out, _, client = model_run(tasks, script)
  T.eq(#trajs, #tasks, "every task kept")
  for i = 1, #tasks - 1 do
    local tr = trajs[i]
    T.eq(tr.termination_reason, "aborted", tr.instance_id)
    T.eq(tr.exit_status, "llm_bad_response", tr.instance_id)
    T.eq(tr.model_stats.tokens_sent, 0, tr.instance_id .. ": nothing of it counted")
    T.eq(tr.model_stats.instance_cost, 0, tr.instance_id)
  end
  T.match(trajs[1].error.message, "usage.prompt_tokens is inf")
  T.match(trajs[3].error.message, "usage.prompt_tokens is %-5")
  T.match(trajs[4].error.message, "usage.completion_tokens is 2000000000,")
  T.match(trajs[#tasks - 1].error.message, "arguments of a tool call hold a number")
  T.eq(trajs[#tasks].termination_reason, "finish")
  T.eq(trajs[#tasks].model_stats.instance_cost, 20e-6)
  T.eq(client.stats.bad_responses, #tasks - 1)
  T.eq(summary.by_exit_status.llm_bad_response, #tasks - 1)
  local n, ok = python_reads(out .. "/trajectories.jsonl", out .. "/preds.jsonl", out .. "/summary.json")
  T.ok(ok, n)
  T.eq(tonumber(n), 2 * #tasks + 1)
end)

T.test("issue15-12: a trajectory JSON cannot carry (a policy's NaN cost) is kept as aborted; the run goes on", function()
  local a, b = make_task("local__nan-a"), make_task("local__nan-b")
  local factory = { name = "nan", episode = function(_, task)
    local p = require("rock.agent.policies.scripted").new("nan", { { tool = "submit" } })
    if task.instance_id == a.instance_id then
      local act = p.act
      p.act = function(self, ctx)
        local turn = act(self, ctx)
        turn.cost = 0 / 0
        return turn
      end
    end
    return p
  end }
  local summary, trajs, out = run({ a, b }, { policy = factory })
  T.eq(summary.total, 2)
  T.eq(trajs[1].termination_reason, "aborted")
  T.eq(trajs[1].exit_status, "internal")
  T.match(trajs[1].error.message, "cannot be written as JSON")
  T.eq(trajs[2].termination_reason, "finish")
  T.eq(#jsonl(out .. "/trajectories.jsonl"), 2)
end)

T.test("issue15-14: model text that is not UTF-8 (\\xff, \\xc3\\x28, \\ud800 escapes) is cleaned: valid requests, files Python reads", function()
  local t = make_task()
  -- content with bad bytes, lone surrogates and a good pair; a command
  -- (in the arguments' own JSON) with a bad byte and a lone surrogate
  local msg = '{"role":"assistant","content":"look \255 here \195\40 and \\ud800 lone \\udc00 x \\ud83d\\ude00 ok",'
    .. '"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash",'
    .. '"arguments":"{\\"command\\": \\"echo caf\233 \\\\ud800 end\\"}"}}]}'
  local summary, trajs, out, reqs = model_run({ t }, { raw_completion(msg, '{"prompt_tokens":1,"completion_tokens":1}'),
    F.tool_call("submit", {}) })
  local tr = trajs[1]
  T.eq(tr.termination_reason, "finish", tostring(tr.error and tr.error.message))
  T.eq(tr.messages[3].content, "look \u{FFFD} here \u{FFFD}( and \u{FFFD} lone \u{FFFD} x \u{1F600} ok")
  T.eq(tr.steps[1].action.command, "echo caf\u{FFFD} \u{FFFD} end")
  T.match(tr.steps[1].observation, "caf\u{FFFD} \u{FFFD} end")
  T.eq(#reqs, 2)
  T.eq(reqs[2].utf8, true, "the next request is UTF-8")
  T.eq(reqs[2].body.messages[3].content, tr.messages[3].content, "and JSON that says what was kept")
  local n, ok = python_reads(out .. "/trajectories.jsonl", out .. "/preds.jsonl")
  T.ok(ok, n)
  T.eq(summary.by_reason.finish, 1)
  -- text mode, bytes only: the block runs, the next request and the file are clean
  local t2 = make_task()
  local _, trajs2, out2, reqs2 = model_run({ t2 }, { F.raw('{"choices":[{"message":{"role":"assistant","content":'
    .. '"run \255\n```bash\necho A\255B\n```"}}]}'), F.reply("```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```") },
    { mode = "text" })
  T.eq(trajs2[1].termination_reason, "finish")
  T.eq(trajs2[1].messages[3].content, "run \u{FFFD}\n```bash\necho A\u{FFFD}B\n```")
  T.match(trajs2[1].steps[1].observation, "A\u{FFFD}B")
  T.eq(reqs2[2].utf8, true, "text mode: the next request is UTF-8")
  local n2, ok2 = python_reads(out2 .. "/trajectories.jsonl")
  T.ok(ok2, n2)
end)

T.test("issue15-14: text that is not UTF-8 from a task or a replay: requests and files stay valid", function()
  local t = make_task()
  t.problem_statement = "latin-1 caf\233 in the issue"
  local _, trajs, out, reqs = model_run({ t }, { F.tool_call("submit", {}) })
  T.eq(trajs[1].termination_reason, "finish")
  T.eq(reqs[1].utf8, true, "the request is UTF-8")
  T.match(reqs[1].body.messages[2].content, "caf\u{FFFD} in the issue")
  local n, ok = python_reads(out .. "/trajectories.jsonl")
  T.ok(ok, n)
  local t2 = make_task()
  local _, _, out2 = run({ t2 }, { policy = "replay", replay = replay{ [t2.instance_id] = {
    { tool = "bash", command = "echo caf\233" }, { tool = "submit" } } } })
  local n2, ok2 = python_reads(out2 .. "/trajectories.jsonl")
  T.ok(ok2, n2)
end)

T.test("issue15-15: an editor answer of 400 KB is capped (head, tail, elided); each observation is written once", function()
  local t = make_task()
  -- a directory view lists every path two levels deep: 3000 long names
  -- with a 2-byte character make some 400 KB
  local names = "seq -f 'big/caf\u{E9}-%05g-" .. string.rep("x", 100) .. "' 1 3000"
  local _, trajs, out = run({ t }, { policy = "replay", replay = replay{ [t.instance_id] = {
    { tool = "bash", command = "mkdir big && " .. names .. " | xargs touch && ls big | wc -l" },
    { tool = "str_replace_editor", command = "view", path = t.repo_dir .. "/big" },
    { tool = "str_replace_editor", command = "view", path = t.repo_dir .. "/calc.py" },
    { tool = "bash", command = "rm -r big" },
    { tool = "submit" } } } })
  local tr = trajs[1]
  T.eq(tr.termination_reason, "finish")
  T.match(tr.steps[1].observation, "3000")
  local obs = tr.steps[2].observation
  T.ok(#obs <= 101000, "capped near SWE-agent's 100000: " .. #obs .. " bytes")
  T.ok(utf8.len(obs), "whole characters on both sides of the cut")
  T.match(obs, "^<warning>")
  T.match(obs, "<output_head>\nHere's the files and directories up to 2 levels deep in " .. t.repo_dir:gsub("%p", "%%%0") .. "/big")
  T.match(obs, "%-%d%d%d%d%d%-x+\n+</output_tail>$") -- readdir order: some name last
  local elided = tonumber(obs:match("<elided_chars>\n(%d+) characters elided"))
  local listed = 3000 * utf8.len(t.repo_dir .. "/big/caf\u{E9}-00001-" .. string.rep("x", 100) .. "\n")
  T.ok(elided and elided > listed - 100000 and elided < listed, "elided: " .. tostring(elided) .. " of " .. listed)
  T.eq(tr.steps[3].observation:sub(1, 9), "Here's th", "a short answer is as the editor gave it")
  -- the file: the observation once, in the message; the step points to it
  local line = read(out .. "/trajectories.jsonl")
  local _, copies = line:gsub("files and directories up to 2 levels deep", "")
  T.eq(copies, 1, "the observation is written once")
  local rec = json.decode(line)
  T.eq(rec.steps[2].observation, nil)
  T.eq(rec.messages[rec.steps[2].observation_message + 1].content, obs)
  for i = 1, 5 do T.eq(rock.agent.output.observation(rec, i), tr.steps[i].observation, "step " .. i) end
  T.eq(#rec.messages, #tr.messages)
end)

os.execute("rm -rf " .. q(root))
T.done()
