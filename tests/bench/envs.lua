-- envs.lua: GuessTheNumber steps per second, in one run (tests/bench/envs)
--   rock envs.lua SECONDS   -> a report on stdout
--   floor:  the same JSON line's round trip to `rocklet gem` over its
--           pipes, from this runtime (luv), no rocklet in between
--   in-process: rock.envs on a local sandbox (the rocklet's /env/call)
--   serve 1 / serve 64: POST /apis/v1/envs/gem/step over HTTP keep-alive
--           from 1 and 64 tasks at once, one environment each
--   make: POST make then reset, to the first observation (p50, p95)
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local S = dofile(here .. "../lua/serve_client.lua")
local json = rock.json
local secs = tonumber(arg[1]) or 3
local rocklet_exe = arg[2]
local hr = rock.uv.hrtime
local ACTION = "\\boxed{25}"

local function report(name, steps, wall_s)
  print(string.format("%-52s %10.0f steps/s  (%.1f us each)", name, steps / wall_s, wall_s / steps * 1e6 * 1))
end

-- steps from n tasks for secs seconds; step(i) does one
local function drive(n, step)
  local total, tasks = 0, {}
  local t0 = hr()
  local stop_at = t0 + secs * 1e9
  for i = 1, n do
    tasks[i] = rock.spawn(function()
      while hr() < stop_at do
        step(i)
        total = total + 1
      end
    end)
  end
  local _, errs = rock.wait(tasks)
  for i = 1, n do if errs[i] then error(errs[i]) end end
  return total, (hr() - t0) / 1e9
end

-- the floor: write a line, wait for the answer's line, on luv pipes
do
  local uv, task = rock.uv, require "rock.task"
  local stdin, stdout = uv.new_pipe(), uv.new_pipe()
  local proc = uv.spawn(rocklet_exe, { args = { "gem", "game:GuessTheNumber-v0-hard" }, stdio = { stdin, stdout, 2 } },
    function() end)
  local buf, waiting = "", nil
  stdout:read_start(function(_, data)
    buf = buf .. (data or "")
    if waiting and buf:find("\n", 1, true) then local w = waiting; waiting = nil; w() end
  end)
  local function call(line)
    stdin:write(line .. "\n")
    task.await(function(done)
      if buf:find("\n", 1, true) then done() else waiting = done end
    end)
    buf = buf:sub(buf:find("\n", 1, true) + 1)
  end
  call('{"op":"reset","seed":1}')
  local line = rock.json.encode({ op = "step", action = ACTION })
  report("floor: the JSON line's round trip to rocklet gem", drive(1, function() call(line) end))
  call('{"op":"close"}')
  stdin:close(); stdout:close()
  proc:close()
end

-- in-process
local sb = rock.sandbox.start{ backend = "local" }
local e = rock.envs.make("game:GuessTheNumber-v0-hard", { sandbox = sb })
e:reset(1)
report("in-process rock.envs, 1 environment", drive(1, function() e:step(ACTION) end))
e:close()
sb:stop()

-- a small node's budget (serve_client's default is boundless): the 64
-- environments fit in it as they ask (0.05 CPU, 64 MB each)
local srv = S.start{ backend = "local", args = { "--budget-cpu", "4", "--budget-memory-gb", "8" } }
local function post(name, body)
  local res = srv.raw{ method = "POST", path = "/apis/v1/envs/gem/" .. name, body = json.encode(body),
    headers = { ["Content-Type"] = "application/json" } }
  if res.status ~= 200 then error(name .. ": " .. res.status .. " " .. res.body) end
  return json.decode(res.body)
end

local make_ms, ids = {}, {}
for i = 1, 64 do
  local t = hr()
  ids[i] = post("make", { env_id = "game:GuessTheNumber-v0-hard" }).sandbox_id
  post("reset", { sandbox_id = ids[i], seed = i })
  make_ms[i] = (hr() - t) / 1e6
end
for _, n in ipairs({ 1, 64 }) do
  report("rock serve /step, " .. n .. " environment(s) at once", drive(n, function(i)
    post("step", { sandbox_id = ids[i], action = ACTION })
  end))
end
table.sort(make_ms)
print(string.format("%-52s p50 %8.1f ms  p95 %8.1f ms  (64, one at a time)", "rock serve make -> first observation",
  make_ms[32], make_ms[61]))
for i = 1, 64 do post("close", { sandbox_id = ids[i] }) end
srv.stop()
