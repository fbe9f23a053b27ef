-- test_policy.lua: the sandbox policy of issue 7 on the local backend:
-- owner-only files whatever the umask (item 12), sandbox ids that cannot
-- leave the state dir, get_status after the rocklet died, durations and
-- output caps refused clearly (item 18).
local rock = require "rock"
local state = require "rock.state"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local uv = rock.uv

local rock_exe = uv.exepath()

T.test("issue7-12: under umask 000 sandbox dirs and records are owner-only", function()
  local home = os.getenv("ROCK_HOME") .. "/u" -- made by the child, under its umask
  local p = io.popen("umask 000; ROCK_HOME=" .. home .. " " .. rock_exe .. [[ -e '
    local rock = require "rock"
    local sb = rock.sandbox.start{ backend = "local" }
    local mark
    for name in io.popen("ls " .. sb.dir):lines() do
      if name:match("^owner=") then mark = sb.dir .. "/" .. name end
    end
    local uv = rock.uv
    local function mode(p)
      local st = uv.fs_lstat(p)
      return st and string.format("%o", st.mode & tonumber("777", 8)) or "missing"
    end
    print(mode(os.getenv("ROCK_HOME")), mode(os.getenv("ROCK_HOME") .. "/sandboxes"), mode(sb.dir),
      mode(sb.dir .. "/sandbox.json"), mode(sb.dir .. "/work"), mode(sb.dir .. "/rocklet.log"),
      mode(mark or "?"))' 2>&1]])
  local line = p:read("a")
  p:close()
  local m = {}
  for w in line:gmatch("%S+") do m[#m + 1] = w end
  T.eq(#m, 7, "modes printed: " .. line)
  T.eq(m[1], "700", "ROCK_HOME made by rock")
  T.eq(m[2], "700", "sandboxes/")
  T.eq(m[3], "700", "sandbox dir")
  T.eq(m[4], "600", "record")
  T.eq(m[5], "700", "work dir")
  T.eq(m[6], "600", "rocklet.log")
  T.eq(m[7], "600", "owner mark")
  require("rock.core").rmtree(home)
end)

T.test("issue7-18: sandbox ids that could leave the state dir are refused", function()
  local outside = os.getenv("ROCK_HOME") .. "/x"
  for _, id in ipairs({ "../../x", "../x", "..", ".", "a/b", "", "-a", string.rep("a", 65), "a b", 7 }) do
    T.raises("invalid_argument", rock.sandbox.start, { backend = "local", sandbox_id = id })
  end
  T.ok(not uv.fs_stat(outside), "nothing made outside sandboxes/")
  T.ok(state.valid_id(string.rep("z", 64)), "64 characters are fine")
  local sb = rock.sandbox.start{ backend = "local", sandbox_id = "My.sandbox_1-x" }
  T.eq(sb.id, "My.sandbox_1-x")
  T.raises("invalid_argument", rock.sandbox.start, { backend = "local", sandbox_id = sb.id })
  T.ok(sb:is_alive(), "a duplicate id leaves the first sandbox alone")
  sb:stop()
end)

T.test("issue7-18: get_status says stopped after the rocklet died, and why", function()
  local sb = rock.sandbox.start{ backend = "local" }
  uv.kill(sb.pid, "sigkill")
  for _ = 1, 100 do
    if sb.exited then break end
    rock.sleep(0.01)
  end
  local st = sb:get_status()
  T.eq(st.is_alive, false)
  T.eq(st.state, "stopped")
  T.match(st.stop_reason, "rocklet exited")
  T.eq(st.state_history[#st.state_history].event, "rocklet_gone")
  local err = T.raises("sandbox_not_alive", sb.execute, sb, { command = "true" })
  T.match(err.message, "rocklet exited")
  T.ok(uv.fs_stat(sb.dir), "dir still there until stop")
  sb:stop() -- still cleans up
  T.ok(not uv.fs_stat(sb.dir), "stop removed the dir")
  T.eq(sb:get_status().state, "stopped")
end)

T.test("issue7-18: durations and output caps out of range are refused clearly", function()
  local sb = rock.sandbox.start{ backend = "local" }
  sb:create_session{ session = "s" }
  local bad = { 0 / 0, -1, math.huge, 1.8e16, 1e300 }
  for _, v in ipairs(bad) do
    T.raises("invalid_argument", sb.run_in_session, sb, { session = "s", command = "true", timeout = v })
    T.raises("invalid_argument", sb.execute, sb, { command = "true", timeout = v })
    T.raises("invalid_argument", sb.create_session, sb, { session = "t", startup_timeout = v })
    T.raises("invalid_argument", rock.sandbox.start, { backend = "local", startup_timeout = v })
    T.raises("invalid_argument", rock.sandbox.start, { backend = "local", auto_clear_seconds = v })
  end
  for _, v in ipairs({ 1e30, 0 / 0, math.huge, -5, 63, 100.5, "1k" }) do
    T.raises("invalid_argument", sb.run_in_session, sb, { session = "s", command = "true", max_output = v })
    T.raises("invalid_argument", sb.execute, sb, { command = "true", max_output = v })
  end
  -- what is in range works
  T.eq(sb:run_in_session{ session = "s", command = "echo hi", timeout = 30, max_output = 64.0 }.output, "hi\n")
  T.eq(sb:execute{ command = "echo hi", timeout = 1e6, max_output = 1 << 28 }.stdout, "hi\n")
  sb:stop()
  T.eq(#state.list(), 0, "no sandbox left by the refused starts")
end)

T.test("issue7-18: one startup_timeout default per concept", function()
  T.eq(rock.sandbox.DEFAULT_STARTUP_TIMEOUT, 60)
  T.eq(rock.sandbox.DEFAULT_SESSION_STARTUP_TIMEOUT, 60)
end)

T.done()
