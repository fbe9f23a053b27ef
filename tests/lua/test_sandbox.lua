-- test_sandbox.lua: the local backend's lifecycle: status and phases,
-- stop, errors after stop, idle expiry, owner death, failed starts.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local uv = rock.uv

-- alive and not a zombie (an orphan's zombie may wait long for init)
local function alive(pid)
  local f = io.open("/proc/" .. pid .. "/stat")
  if not f then return false end
  local state = f:read("a"):match("%) (%a)")
  f:close()
  return state ~= "Z"
end

local rock_exe = uv.exepath()

T.test("status, phases and stop", function()
  local sb = rock.sandbox.start{ backend = "local" }
  local st = sb:get_status()
  T.eq(st.state, "running")
  T.eq(st.is_alive, true)
  for _, name in ipairs({ "image_pull", "container_create", "container_start", "rocklet_ready" }) do
    T.eq(st.status[name].status, "success", name)
    T.ok(st.status[name].completed_at, name .. " completed_at")
  end
  T.ok(uv.fs_stat(sb.dir), "sandbox dir exists")
  sb:create_session{ session = "s" }
  sb:run_in_session{ session = "s", command = "sleep 300 & disown" }
  local pid = sb.pid
  sb:stop()
  T.eq(sb:get_status().state, "stopped")
  T.eq(sb:is_alive(), false)
  T.ok(not alive(pid), "rocklet gone")
  T.ok(not uv.fs_stat(sb.dir), "dir removed")
  sb:stop() -- twice is fine
  T.raises("sandbox_not_alive", sb.run_in_session, sb, { session = "s", command = "true" })
end)

T.test("each sandbox has its own rocklet", function()
  local a = rock.sandbox.start{ backend = "local" }
  local b = rock.sandbox.start{ backend = "local" }
  T.ok(a.socket ~= b.socket and a.pid ~= b.pid, "separate servers")
  a:create_session{ session = "s" }
  T.raises("session_not_found", b.run_in_session, b, { session = "s", command = "true" })
  a:stop()
  T.ok(b:is_alive(), "stopping a leaves b")
  b:stop()
end)

T.test("bad start options fail clearly", function()
  T.raises("invalid_argument", rock.sandbox.start, { backend = "nope" })
  T.raises("invalid_argument", rock.sandbox.start, { backend = "local", startup_timeout = "x" })
end)

T.test("a rocklet that cannot start is reported with its reason", function()
  local old = os.getenv("ROCK_ROCKLET")
  -- run a child host with a rocklet path that is not a program
  local p = io.popen("ROCK_ROCKLET=/bin/false " .. rock_exe ..
    " -e 'local ok, e = pcall(require(\"rock\").sandbox.start, {backend=\"local\"}) print(e.code) print(e.message)' 2>&1")
  local out = p:read("a")
  p:close()
  T.match(out, "sandbox_start_failed")
  T.match(out, "exited at once")
  T.eq(old, os.getenv("ROCK_ROCKLET"))
end)

T.test("a start cancelled while it waits for its rocklet ends with the cancel: not retried, nothing left", function()
  local task = require "rock.task"
  local why = rock.errors.new("aborted", "cancelled by the test")
  local sandbox_dir, pid
  local starter = rock.spawn(function()
    return rock.sandbox.start{ backend = "local", start_retry_times = 2,
      on_phase = function(sb, name, status)
        -- the cancel falls at the start's next wait: its poll of the rocklet
        if name == "rocklet_ready" and status == "running" and not pid then
          sandbox_dir, pid = sb.dir, sb.pid
          task.cancel(task.current(), why)
        end
      end }
  end)
  local ok, err = pcall(rock.wait, starter)
  T.ok(not ok, "the start did not go on")
  T.ok(rawequal(err, why), "the cancel's own error: " .. tostring(err))
  T.ok(pid, "the rocklet was spawned before the cancel")
  T.wait_until("the rocklet is stopped", function() return not alive(pid) end, 10)
  T.ok(not uv.fs_stat(sandbox_dir), "its dir is removed")
  T.eq(#T.listdir(require("rock.state").sandboxes_dir()), 0, "no sandbox left")
end)

T.test("idle expiry: the rocklet ends the sandbox by itself", function()
  local sb = rock.sandbox.start{ backend = "local", auto_clear_seconds = 1 }
  sb:create_session{ session = "s" }
  sb:run_in_session{ session = "s", command = "sleep 200 & disown" }
  local pid = sb.pid
  rock.sleep(0.6)
  T.ok(sb:is_alive(), "a call renews the lease")
  rock.sleep(0.6)
  T.ok(alive(pid), "still within the renewed lease")
  rock.sleep(1.5)
  T.ok(not alive(pid), "rocklet ended after 1 s idle")
  T.raises("sandbox_not_alive", sb.execute, sb, { command = "true" })
  sb:stop() -- removes what is left: its directory
end)

T.test("owner death (kill -9 of the host) takes the sandbox down", function()
  -- a sleep of its own (this test's pid in it): other runs on the machine have theirs
  local sleeper = string.format("sleep 400.%d", uv.os_getpid())
  local p = io.popen(rock_exe .. [[ -e '
    local rock = require "rock"
    local sb = rock.sandbox.start{ backend = "local" }
    sb:create_session{ session = "s" }
    sb:run_in_session{ session = "s", command = "]] .. sleeper .. [[ & disown" }
    print(sb.pid) io.stdout:flush()
    rock.sleep(60)' & echo $!]])
  local host = tonumber(p:read("l"))
  local rocklet = tonumber(p:read("l"))
  T.ok(host and rocklet and alive(rocklet), "child host started a sandbox")
  local count = function() return io.popen("ps -eo args= | grep -c '^" .. sleeper .. "$'"):read("a") end
  T.eq(count(), "1\n", sleeper .. " runs in the sandbox")
  uv.kill(host, "sigkill")
  p:close()
  local gone = false
  for _ = 1, 100 do
    if not alive(rocklet) then gone = true break end
    rock.sleep(0.02)
  end
  T.ok(gone, "rocklet died with its owner")
  local n
  for _ = 1, 100 do -- the rocklet ends its tree as it goes: let the kernel reap it
    n = count()
    if n == "0\n" then break end
    rock.sleep(0.02)
  end
  T.eq(n, "0\n", "no " .. sleeper .. " left")
  -- its directory stays for `rock gc`; this test removes it itself
  require("rock.core").rmtree(os.getenv("ROCK_HOME") .. "/sandboxes")
end)

T.test("sandboxes left running are stopped when the recipe ends", function()
  local out = io.popen(rock_exe .. [[ -e '
    local sb = require("rock").sandbox.start{ backend = "local" }
    print(sb.pid, sb.dir)' ]]):read("a")
  local pid, dir = out:match("(%d+)%s+(%S+)")
  T.ok(pid, "child printed its sandbox")
  T.ok(not alive(tonumber(pid)), "rocklet stopped at exit")
  T.ok(not uv.fs_stat(dir), "dir removed at exit")
end)

T.done()
