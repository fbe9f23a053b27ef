-- test_agent_hostile2.lua: the agent loop under a hostile round after
-- issues 15/16, on the local backend with the fake OpenAI server. A tool
-- call's arguments text holding NaN or Infinity (not JSON; a lenient
-- decoder takes them) is a bad response (llm_bad_response), counted, never
-- a crash or a non-finite number flowing into the agent. Task limits past
-- 2^63 (pids_limit 1e30, a huge memory) are refused with a clear error,
-- not dropped (1e30 has no integer: the limit became none). A huge
-- response body from the endpoint is bounded (llm.MAX_RESPONSE): a bad
-- response, not retried, never read whole. An --out dir whose .lock file
-- is deleted while a run holds it still refuses a second run.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local F = dofile(here .. "fake_openai.lua")
local json = rock.json

local root = T.sh("mktemp -d /tmp/rock-agent-hostile2.XXXXXX"):gsub("%s+$", "")
local q = T.q

local n_repo = 0
local function make_task(id)
  n_repo = n_repo + 1
  return T.git_task(string.format("%s/repo%d", root, n_repo), { ["calc.py"] = "def add(a, b):\n    return a - b\n" },
    { instance_id = id, problem_statement = "add() subtracts instead of adding." })
end

-- a chat completion whose one tool call has this arguments text
local function call_with(name, args_text)
  local message = json.encode({ role = "assistant", content = json.null, tool_calls = { {
    id = "c1", type = "function", ["function"] = { name = name, arguments = args_text } } } })
  return F.raw('{"id":"x","object":"chat.completion","created":0,"model":"fake-model","choices":[{"index":0,'
    .. '"message":' .. message .. ',"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}')
end

local function model_run(tasks, script)
  local srv = F.start(script)
  local client = rock.llm.new{ base_url = srv.url, model = "fake-model", retries = 0,
    prices = { ["fake-model"] = { input = 1, output = 2 } } }
  local out = root .. "/out-" .. n_repo
  local ok, summary, trajs = pcall(rock.agent.run, tasks, { backend = "local", out = out, eval = "none",
    progress = false, policy = "model", cost_limit = 0, llm = client })
  srv.stop()
  if not ok then error(summary, 0) end
  return summary, trajs, out, client
end

T.test("tool-call arguments holding NaN or Infinity are a bad response, not a crash", function()
  local bad = {
    { "bash", '{"command":"ls","n":NaN}' },
    { "bash", '{"command":"ls","n":Infinity}' },
    { "bash", '{"command":"ls","n":-Infinity}' },
    { "bash", '{"command":"ls","n":nan}' },
    { "bash", '{"command":"ls","n":1e400}' },
    { "bash", '{"command":"ls","n":1' .. string.rep("0", 400) .. '}' },
    { "str_replace_editor", '{"command":"view","path":"calc.py","view_range":[1,NaN]}' },
    { "str_replace_editor", '{"command":"insert","path":"calc.py","insert_line":Infinity,"new_str":"x"}' },
    { "str_replace_editor", '{"command":"view","path":"calc.py","view_range":[1,{"deep":[[-inf]]}]}' },
  }
  local script, tasks = {}, {}
  for i, b in ipairs(bad) do
    script[i], tasks[i] = call_with(b[1], b[2]), make_task("local__nan-args-" .. i)
  end
  script[#script + 1] = call_with("bash", '{"command":"echo 1e308 -0.5"}') -- and one that is fine
  script[#script + 1] = F.tool_call("submit", {})
  tasks[#tasks + 1] = make_task("local__nan-args-fine")
  local summary, trajs, out, client = model_run(tasks, script)
  T.eq(#trajs, #tasks, "every task kept")
  for i = 1, #bad do
    local tr = trajs[i]
    T.eq(tr.termination_reason, "aborted", tr.instance_id)
    T.eq(tr.exit_status, "llm_bad_response", tr.instance_id .. ": " .. tostring(tr.error and tr.error.message))
    T.match(tr.error.message, "arguments of a tool call hold a number JSON cannot carry")
    T.eq(#(tr.steps or {}), 0, tr.instance_id .. ": no step ran")
  end
  T.eq(trajs[#tasks].termination_reason, "finish")
  T.eq(client.stats.bad_responses, #bad)
  T.eq(summary.by_exit_status.llm_bad_response, #bad)
  -- everything written is JSON Python reads (no NaN, no Infinity)
  local py = T.sh("python3 -c " .. q("import json,sys\nfor p in sys.argv[1:]:\n" ..
    "    for l in open(p, encoding='utf-8'):\n        json.loads(l, parse_constant=lambda c: 1/0)\nprint('ok')") ..
    " " .. q(out .. "/trajectories.jsonl") .. " " .. q(out .. "/preds.jsonl") .. " 2>&1")
  T.eq(py, "ok\n")
end)

T.test("task limits past range are refused, never dropped or wrapped", function()
  local tasks = require "rock.agent.tasks"
  local function norm(extra)
    local row = json.decode('{"instance_id":"a","repo":"x/y","base_commit":"abc","problem_statement":"p",' ..
      '"test_patch":"","FAIL_TO_PASS":[],"PASS_TO_PASS":[]' .. extra .. '}')
    return tasks.normalize(row)
  end
  for _, c in ipairs({
    { ',"pids_limit":1e30', "'pids_limit' must be a whole number from 1 to 2147483648, got 1e%+30" },
    { ',"pids_limit":9223372036854775807', "'pids_limit' must be a whole number" },
    { ',"pids_limit":18446744073709551617', "'pids_limit' must be a whole number" },
    { ',"pids_limit":4294967297', "'pids_limit' must be a whole number" },
    { ',"pids_limit":-1', "'pids_limit' must be a whole number" },
    { ',"pids_limit":2.5', "'pids_limit' must be a whole number" },
    { ',"memory":1e30', "'memory' must be a size %(\"8g\"%) or a number of bytes from 1 to 2%^62, got 1e%+30" },
    { ',"memory":9223372036854775808', "'memory' must be a size" },
    { ',"disk":1e300', "'disk' must be a size" },
    { ',"memory":"99999999999999t"', "'memory': bad size '99999999999999t'" },
    { ',"disk":"1e30"', "'disk': bad size '1e30'" },
  }) do
    local t, err = norm(c[1])
    T.eq(t, nil, c[1] .. " refused")
    T.match(err, c[2], c[1])
  end
  -- in range: whole numbers (JSON gives floats) become integers
  local t = assert(norm(',"pids_limit":4096,"memory":8589934592,"disk":"10g"'))
  T.eq(math.type(t.pids_limit), "integer"); T.eq(t.pids_limit, 4096)
  T.eq(math.type(t.memory), "integer"); T.eq(t.memory, 8589934592)
  T.eq(t.disk, "10g")
  -- sandbox.start: cpus past range never reaches the engine
  for _, cpus in ipairs({ 1e30, -1, 0 / 0, "2" }) do
    local e = T.raises("invalid_argument", rock.sandbox.start, { backend = "local", cpus = cpus })
    T.match(e.message, "'cpus' must be a number from 0 %(none%) to 65536")
  end
  T.raises("invalid_argument", rock.sandbox.start, { backend = "local", pids_limit = 1e30 })
  T.raises("invalid_argument", rock.sandbox.start, { backend = "local", memory = 1e30 })
end)

T.test("a response body past llm.MAX_RESPONSE is a bad response, read no further", function()
  local llm = require "rock.llm"
  local saved = llm.MAX_RESPONSE
  llm.MAX_RESPONSE = 1024 * 1024
  local big = '{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",' ..
    '"content":"' .. string.rep("a", 8 * 1024 * 1024) .. '"},"finish_reason":"stop"}],' ..
    '"usage":{"prompt_tokens":1,"completion_tokens":1}}'
  local srv = F.start({ F.raw(big), F.reply("small and fine") })
  local ok, err = pcall(function()
    local client = llm.new{ base_url = srv.url, model = "fake-model", retries = 3, backoff = 0.01 }
    local e = T.raises("llm_bad_response", client.chat, client, { messages = { { role = "user", content = "hi" } } })
    T.match(e.message, "larger than 1048576 bytes")
    T.eq(client.stats.bad_responses, 1)
    T.eq(client.stats.retries, 0, "not retried")
    T.eq(#srv.requests(), 1)
    local r = client:chat{ messages = { { role = "user", content = "hi" } } }
    T.eq(r.message.content, "small and fine", "the next answer is read")
    -- the transport's own bound: rock.http.request{max_body=}
    local e2 = T.raises("http_error", rock.http.request, { url = srv.url .. "/nothing", max_body = 10 })
    T.eq(e2.too_large, 10)
  end)
  llm.MAX_RESPONSE = saved
  srv.stop()
  if not ok then error(err, 0) end
end)

T.test("--out: deleting .lock while a run holds it lets no second run in", function()
  local output = require "rock.agent.output"
  local dir = root .. "/locked-out"
  T.sh("mkdir -p " .. q(dir))
  -- in this process: a second lock after the file is gone
  local l = output.lock(dir)
  T.ok(T.read(dir .. "/.lock"), "the pid file")
  os.remove(dir .. "/.lock")
  local e = T.raises("conflict", output.lock, dir)
  T.match(e.message, "is in use by another run")
  l:release()
  output.lock(dir):release() -- released: free again
  -- another process holds the dir; its .lock is deleted; a real second run
  local code = "local l = require('rock.agent.output').lock(" .. string.format("%q", dir) ..
    "); io.open(" .. string.format("%q", dir .. "/held") .. ", 'w'):close(); require('rock').sleep(60)"
  local started = T.sh(string.format("{ %s -e %s >/dev/null 2>&1 & echo $!; }", q(T.rock_exe()), q(code)))
  local holder = tonumber(started:match("%d+"))
  local ok, err = pcall(function()
    T.wait_until("the holder has the lock", function() return T.read(dir .. "/held") ~= nil end, 20)
    os.remove(dir .. "/.lock")
    local t = make_task("local__lock-deleted")
    local tf = root .. "/lock-tasks.jsonl"
    T.write(tf, json.encode(t) .. "\n")
    local recipe = T.sh("cd " .. here .. "../.. && pwd"):gsub("%s+$", "") .. "/recipes/swe_agent.lua"
    local log, rok = T.sh(string.format("%s %s --instances %s --out %s --backend local --no-eval 2>&1",
      q(T.rock_exe()), q(recipe), q(tf), q(dir)))
    T.ok(not rok, "the second run fails: " .. log)
    T.match(log, "is in use by another run")
    T.eq(T.read(dir .. "/trajectories.jsonl"), nil, "and wrote nothing")
  end)
  T.sh("kill -9 " .. holder)
  T.wait_until("the holder is gone", function() return T.sh("kill -0 " .. holder .. " 2>/dev/null && echo y") == "" end, 20)
  if not ok then error(err, 0) end
end)

T.sh("rm -rf " .. q(root))
T.done()
