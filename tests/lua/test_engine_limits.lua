-- test_engine_limits.lua: issue 15 item 18. An agent's sandbox ran with no
-- pids, memory or disk limit, so a fork bomb or a disk fill by the agent
-- reached the host. Now an agent's sandbox has default limits
-- (episode.SANDBOX_LIMITS); a fork bomb stays at the pids limit and the
-- session recovers, memory past the limit is OOM-killed inside, a file
-- stops at the disk limit and a sandbox filling its disk is stopped with
-- that reason; tasks and swe_agent.lua's flags set them.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local json = rock.json
local episode = require "rock.agent.episode"
local container = require "rock.backends.container"

local IMAGE = "rock-test/debian:12"
local GiB, MiB = 1024 ^ 3, 1024 ^ 2

-- processes on the host (every pid in /proc)
local function host_pids()
  local n = 0
  for name in io.popen("ls /proc"):lines() do if name:match("^%d+$") then n = n + 1 end end
  return n
end

local function pids_in(sb)
  local st = sb.engine:container_stats(sb.container)
  return math.tointeger(st.pids_stats and st.pids_stats.current) or -1
end

T.test("issue15-18: sandbox.start refuses limits that are not sizes or counts", function()
  for _, bad in ipairs({ { memory = "lots" }, { memory = -1 }, { disk = "1x" }, { disk = 0 / 0 },
                         { pids_limit = -1 }, { pids_limit = 1.5 }, { pids_limit = "9" }, { memory = math.huge } }) do
    local k, v = next(bad)
    local err = T.raises("invalid_argument", rock.sandbox.start, { backend = "docker", image = IMAGE, [k] = v })
    T.match(err.message, k, "the message names " .. k)
  end
  T.eq(#require("rock.state").list(), 0, "nothing started")
end)

T.test("issue15-18: an agent's sandbox has the default limits; a fork bomb stays inside, the session recovers", function()
  local limits = episode.sandbox_limits({}, {})
  T.eq(limits.memory, "8g")
  T.eq(limits.pids_limit, 1024)
  T.eq(limits.disk, "10g")
  local start = { backend = "docker", image = IMAGE }
  for k, v in pairs(limits) do start[k] = v end
  local sb = rock.sandbox.start(start)
  local ok, err = pcall(function()
    local info = sb.engine:container_inspect(sb.container)
    T.eq(math.tointeger(info.HostConfig.Memory), 8 * 1024 ^ 3, "memory")
    T.eq(math.tointeger(info.HostConfig.MemorySwap), 8 * 1024 ^ 3, "no swap on top")
    T.eq(math.tointeger(info.HostConfig.PidsLimit), 1024, "pids limit") -- checked before the bomb runs
    T.eq(sb:execute{ command = { "sh", "-c", "ulimit -f" } }.stdout, math.tointeger(10 * GiB // 512) .. "\n",
      "the largest file, in 512-byte blocks")
    local before = host_pids()
    sb:create_session{ session = "agent" }
    local r = sb:run_in_session{ session = "agent", command = ":(){ :|:& };:", timeout = 10 }
    T.eq(r.exit_code, 0) -- the bomb goes on in the background
    local most, hit = 0, false
    for _ = 1, 100 do
      local n = pids_in(sb)
      most = math.max(most, n)
      T.ok(n <= 1024, "pids in the sandbox: " .. n)
      if n >= 1000 then hit = true; break end
      rock.sleep(0.1)
    end
    T.ok(hit, "the bomb reached the limit (most " .. most .. " pids)")
    T.ok(host_pids() <= before + 1024 + 200, "host pids " .. host_pids() .. ", before " .. before)
    T.ok(select(2, T.sh("true")), "the host still forks")
    -- its session goes, and everything the bomb made with it
    sb:close_session{ session = "agent" }
    for _ = 1, 100 do
      if pids_in(sb) <= 2 then break end
      rock.sleep(0.1)
    end
    T.ok(pids_in(sb) <= 2, "pids after close_session: " .. pids_in(sb))
    sb:create_session{ session = "agent2" }
    T.eq(sb:run_in_session{ session = "agent2", command = "echo alive" }.output, "alive\n")
  end)
  local t0 = rock.uv.hrtime()
  sb:stop()
  print(string.format("  stop after the bomb: %.0f ms", (rock.uv.hrtime() - t0) / 1e6))
  if not ok then error(err, 0) end
end)

for _, kind in ipairs({ "docker", "podman" }) do
  T.test("issue15-18: " .. kind .. ": memory past the limit is OOM-killed inside; the sandbox goes on", function()
    local sb = rock.sandbox.start{ backend = kind, image = IMAGE, memory = "256m" }
    local ok, err = pcall(function()
      sb:create_session{}
      local r = sb:run_in_session{ timeout = 60,
        command = "python3 -c 'x = bytearray(600 * 1024 * 1024); print(len(x))'; echo exit=$?" }
      T.match(r.output, "exit=137", "killed by SIGKILL")
      T.ok(not r.output:find("629145600", 1, true), "the allocation did not succeed: " .. r.output)
      T.eq(sb:run_in_session{ command = "echo still here" }.output, "still here\n")
      T.eq(sb:is_alive(), true)
    end)
    sb:stop()
    if not ok then error(err, 0) end
  end)

  T.test("issue15-18: " .. kind .. ": a file stops at the disk limit; a sandbox filling its disk is stopped, saying why", function()
    local limit = 200 * MiB
    -- the reason a sandbox was stopped for its disk, and how much it held then
    local function stopped(sb)
      for _ = 1, 100 do
        if sb:get_status().state == "stopped" then break end
        rock.sleep(0.1)
      end
      local st = sb:get_status()
      T.eq(st.state, "stopped")
      T.match(st.stop_reason, "^disk limit exceeded: the sandbox wrote [%d.]+ MiB")
      return tonumber(st.stop_reason:match("wrote ([%d.]+) MiB")) * MiB
    end
    -- one file: it stops at the limit exactly (the write fails)
    local sb = rock.sandbox.start{ backend = kind, image = IMAGE, disk = "200m" }
    local ok, err = pcall(function()
      T.eq(sb.disk_by, "watch", "this engine has no quota (overlay on ext4)")
      local okr, r = pcall(sb.execute, sb, { timeout = 60,
        command = "dd if=/dev/zero of=/big bs=1M count=400 2>/dev/null; echo exit=$?; stat -c %s /big" })
      if okr then -- else the watch was faster than the stat: the layer is past the limit by what else it holds
        T.match(r.stdout, "exit=153", "SIGXFSZ") -- 128 + 25
        T.match(r.stdout, "\n" .. math.tointeger(limit) .. "\n$", "the file stopped at the limit")
      end
      local held = tonumber(sb.engine:container_inspect_size(sb.container).SizeRw)
      T.ok(held >= limit and held < limit + MiB, "one file: the layer holds " .. held)
    end)
    sb:stop()
    if not ok then error(err, 0) end
    -- many files, each under the limit: the watch of the writable layer stops it
    sb = rock.sandbox.start{ backend = kind, image = IMAGE, disk = "200m" }
    ok, err = pcall(function()
      local t0 = rock.uv.hrtime()
      sb:create_session{}
      local okw, res = pcall(sb.run_in_session, sb, { timeout = 120,
        command = "i=0; while [ $i -lt 100 ]; do head -c 20000000 /dev/zero > /f$i || break; i=$((i+1)); done; echo wrote $i" })
      local secs = (rock.uv.hrtime() - t0) / 1e9
      if okw then error("the sandbox was not stopped: " .. json.encode(res)) end
      T.eq(res.code, "sandbox_not_alive")
      T.match(res.message, "disk limit exceeded")
      local held = stopped(sb)
      print(string.format("  %s: many files: stopped after %.1f s, the layer at %.0f MiB (limit 200 MiB, %.0f MiB past it)",
        kind, secs, held / MiB, (held - limit) / MiB))
      T.ok(held > limit and held < limit + container.DISK_RATE * container.DISK_POLL[1] + 512 * MiB,
        "stopped soon past the limit")
    end)
    sb:stop()
    T.raises("not_found", sb.engine.container_inspect, sb.engine, container.container_name(sb.id))
    if not ok then error(err, 0) end
  end)
end

T.test("issue15-18: local: a file stops at the disk limit (memory and pids are not bounded there)", function()
  local sb = rock.sandbox.start{ backend = "local", disk = "1m", memory = "1g", pids_limit = 10 }
  local ok, err = pcall(function()
    local r = sb:execute{ command = "head -c 3000000 /dev/zero > big; echo exit=$?; stat -c %s big" }
    T.match(r.stdout, "exit=153")
    T.match(r.stdout, "\n1048576\n$")
    local n = sb:execute{ command = "for i in $(seq 1 20); do sleep 1 & done; wait; echo done" }
    T.eq(n.stdout .. n.stderr, "done\n", "20 processes: pids_limit is not applied on the local backend")
  end)
  sb:stop()
  if not ok then error(err, 0) end
end)

T.test("issue15-18: the limits come from the defaults, then the run's flags, then the task", function()
  local l = episode.sandbox_limits({ memory = "16g" }, { sandbox = { memory = "2g", pids_limit = 0, disk = "5g" } })
  T.eq(l.memory, "16g", "the task's own field wins")
  T.eq(l.pids_limit, 0, "a flag's 0 is none")
  T.eq(l.disk, "5g")
  -- swe_agent.lua's flags reach the sandbox, and the trajectory says what it ran with
  local demo = here .. "../../recipes/demo/"
  local tasks = rock.agent.tasks.load(demo .. "tasks.jsonl")
  local task = tasks[1]
  task.disk = "3g"
  local dir = os.getenv("ROCK_HOME") .. "/agent"
  os.execute("mkdir -p " .. dir)
  T.write(dir .. "/tasks.jsonl", json.encode(task) .. "\n")
  local out, ran = T.sh(string.format("%s %s --instances %s/tasks.jsonl --policy oracle --out %s/out --backend docker " ..
    "--no-eval --memory 2g --pids-limit 512", T.rock_exe(), here .. "../../recipes/swe_agent.lua", dir, dir))
  T.ok(ran, out)
  local tr = json.decode(T.read(dir .. "/out/trajectories.jsonl"):match("[^\n]+"))
  T.eq(tr.sandbox.limits.memory, "2g")
  T.eq(tr.sandbox.limits.pids_limit, 512)
  T.eq(tr.sandbox.limits.disk, "3g")
end)

T.done()
