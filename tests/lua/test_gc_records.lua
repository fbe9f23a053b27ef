-- test_gc_records.lua: issue 7 item 9. A record that cannot be written (a
-- full disk: a real tmpfs filled up) fails the start cleanly and leaves
-- nothing; gc removes a sandbox dir only when it can prove it abandoned, so
-- an empty or garbled record is never a reason to remove a dir.
-- Needs root (mount).
local rock = require "rock"
local state = require "rock.state"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local uv = rock.uv

local home = os.getenv("ROCK_HOME")

--- A sandbox dir made by hand, with record text rec (nil: none) and an
--- owner mark for owner (nil: none), its mtime an hour ago.
local function fake_dir(id, rec, owner)
  local dir = state.sandboxes_dir() .. "/" .. id
  state.mkdir_p(dir)
  if rec then
    local f = assert(io.open(dir .. "/sandbox.json", "w"))
    f:write(rec)
    f:close()
  end
  if owner then assert(io.open(dir .. "/owner=" .. owner, "w")):close() end
  local old = os.time() - 3600
  uv.fs_utime(dir, old, old)
  return dir
end

T.test("issue7-9: a full disk fails the start cleanly, nothing left", function()
  local mnt = home .. "/full"
  local ok, err = pcall(T.with_tmpfs, mnt, 256, function()
    state.mkdir_p(mnt .. "/sandboxes")
    T.sh("dd if=/dev/zero of=" .. mnt .. "/fill bs=4k 2>/dev/null")
    T.ok(not select(2, T.sh("echo x >> " .. mnt .. "/fill")), "the disk is full")
    uv.os_setenv("ROCK_HOME", mnt)
    local started, sb = pcall(rock.sandbox.start, { backend = "local" })
    uv.os_setenv("ROCK_HOME", home)
    if started then sb:stop() end
    T.ok(not started, "the start failed")
    T.ok(rock.errors.is(sb, "io_error"), "io_error: " .. tostring(sb))
    T.match(sb.message, "sandbox record")
    T.eq(sb.phases.container_start.status, "failed")
    local left = T.sh("ls -A " .. mnt .. "/sandboxes")
    T.eq(left, "", "sandbox dirs left on the full disk")
  end)
  uv.os_setenv("ROCK_HOME", home)
  uv.fs_rmdir(mnt)
  if not ok then error(err, 0) end
  T.ok(err, "tmpfs mounted (needs root)")
end)

T.test("issue7-9: gc leaves dirs whose record is empty, garbled or missing", function()
  local me = state.owner_label(state.me())
  local dirs = {
    fake_dir("rk-empty", ""),
    fake_dir("rk-garbled", '{"id": "rk-garb'),
    fake_dir("rk-none", nil),
    fake_dir("rk-empty-live", "", me),
  }
  local report = rock.gc.run()
  for _, d in ipairs(dirs) do T.ok(uv.fs_stat(d), d .. " left") end
  T.eq(#report.removed, 0, "removed")
  T.eq(#report.left, 3, "reported as not provably abandoned")
  for _, d in ipairs(dirs) do require("rock.core").rmtree(d) end
end)

T.test("issue7-9: gc removes a dir with a garbled record when its owner mark names a dead owner", function()
  local me = state.me()
  local dead = state.owner_label{ host = me.host, pid = me.pid, start = me.start + 1 }
  local dir = fake_dir("rk-garbled-dead", "{", dead)
  local report = rock.gc.run()
  T.ok(not uv.fs_stat(dir), "removed")
  T.eq(report.removed[1] and report.removed[1].id, "rk-garbled-dead")
end)

T.test("issue7-9: a live sandbox survives a gc while its record is unreadable", function()
  local sb = rock.sandbox.start{ backend = "local" }
  local f = assert(io.open(sb.dir .. "/sandbox.json", "w")) -- as a full disk leaves it
  f:close()
  local old = os.time() - 3600
  uv.fs_utime(sb.dir, old, old)
  rock.gc.run()
  T.ok(uv.fs_stat(sb.dir), "dir kept")
  T.ok(sb:is_alive(), "still alive")
  sb:stop()
  T.ok(not uv.fs_stat(sb.dir), "stop removed it")
end)

-- dockerd 20.10 can deadlock under container churn (moby/moby#46661): its
-- /_ping answers, a container call never does. A host's automatic gc pass
-- is cut after ROCK_GC_ONCE_TIMEOUT, so the host still starts a sandbox
-- and exits (it held both until the engine's own 60 s timeouts before).
T.test("a hung engine (ping answers, nothing else does) holds a host's gc pass only its deadline", function()
  local sock = home .. "/hung-docker.sock"
  local held, asked = {}, 0
  local server = uv.new_pipe(false)
  assert(server:bind(sock))
  server:listen(16, function()
    local c = uv.new_pipe(false)
    server:accept(c)
    held[#held + 1] = c
    c:read_start(function(_, data)
      if data and data:find("^GET [^ ]*/_ping ") then
        c:write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nOK")
      elseif data then
        asked = asked + 1 -- never answered, as the deadlocked daemon does
      end
    end)
  end)
  local script = home .. "/hung.lua"
  T.write(script, [[
local rock = require "rock"
local sb = rock.sandbox.start{ backend = "local" }
print(sb:execute{ command = { "echo", "ran" } }.stdout)
sb:stop()
]])
  local t0 = uv.hrtime()
  local out, code = T.run({ "/usr/bin/env", "DOCKER_HOST=unix://" .. sock,
    "ROCK_PODMAN_SOCKET=" .. home .. "/no-podman.sock", "ROCK_GC_ONCE_TIMEOUT=1", T.rock_exe(), script })
  local took = (uv.hrtime() - t0) / 1e9
  T.eq(code, 0, "the host exits 0")
  T.match(out, "ran", "its sandbox ran a command")
  T.ok(asked >= 1, "the pass did ask the hung engine for its containers")
  T.ok(took < 30, string.format("the host was held %.1f s, not the engine's timeouts", took))
  for _, c in ipairs(held) do c:close() end
  server:close()
  os.remove(sock)
end)

T.done()
