-- test_core.lua: rock.core's boundary (c/core/lua_core.c and each folder's
-- lua_*.c) and the rocklet client on top of it: one error convention
-- (issue 7, item 2), the peer check (item 13), hundreds of concurrent calls
-- on one sandbox (item 11), the log sink, and _meta/core.lua listing every
-- function.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local core = require "rock.core"
local errors = rock.errors
local rocklet = require "rock.rocklet"
local uv = rock.uv

local function raises_string(fn, ...)
  local ok, e = pcall(fn, ...)
  T.ok(not ok, "raised")
  T.eq(type(e), "string", "misuse raises a string (luaL_argerror)")
  return e
end

T.test("issue 7 item 2: synchronous failures raise rock errors", function()
  local e = T.raises("io_error", core.rmtree, "/etc/passwd/x")
  T.eq(e.op, "rmtree")
  T.eq(e.errno, "ENOTDIR")
  e = T.raises("invalid_argument", core.base64_decode, "!!")
  T.eq(tostring(e), "invalid_argument: not base64")
  T.raises("invalid_argument", core.images_tar_path, "/tmp", string.rep("x", 5000))
  T.raises("invalid_argument", core.engine_request, { socket = "/nowhere", op = "no_such_op" },
    function() end)
  T.eq(core.proc_start_time(2 ^ 22 + 1), nil, "no such process: nil, an answer")
end)

T.test("proc_start_time: a process that ended but is not reaped yet (a zombie) is gone", function()
  -- a parent that never reaps its child (SIGCHLD back to default: an
  -- ignored one, as ctest may pass down, would reap it at once)
  local p = io.popen("python3 -c 'import os, signal, sys, time\n" ..
    "signal.signal(signal.SIGCHLD, signal.SIG_DFL)\npid = os.fork()\nif pid == 0: os._exit(0)\n" ..
    "print(pid, os.getpid(), flush=True)\ntime.sleep(5)'")
  local zombie, parent = p:read("n", "n")
  T.ok(core.proc_start_time(parent) ~= nil, "the parent lives")
  local st
  for _ = 1, 200 do -- until the child has exited
    local f = io.open("/proc/" .. zombie .. "/stat")
    st = f and f:read("a"):match("%) (%a)")
    if f then f:close() end
    if st == "Z" then break end
    rock.sleep(0.01)
  end
  T.eq(st, "Z", "the child is a zombie")
  T.eq(core.proc_start_time(zombie), nil, "a zombie owns nothing: nil")
  os.execute("kill " .. parent)
  p:close()
end)

T.test("issue 7 item 2: misuse raises through luaL_argerror", function()
  T.match(raises_string(core.http_request, "x", print), "bad argument #1")
  T.match(raises_string(core.http_request, { url = "http://x/", timeout = "soon" }, print),
    "'timeout' must be a number")
  T.match(raises_string(core.http_request, { url = "http://x/", peer_pid = 7 }, print),
    "needs 'unix_socket'")
  local params = {}
  for i = 1, 20 do params["p" .. i] = i end
  T.match(raises_string(core.engine_request, { socket = "/s", op = "ping", params = params },
    print), "more than 16 params")
  T.match(raises_string(core.log, "loud", "a", "b"), "invalid option")
end)

T.test("issue 7 item 2: asynchronous failures are cb(nil, err) with a rock error", function()
  local res, err = rock.await(function(done)
    local id = core.http_request({ url = "http://x/", unix_socket = "/nonexistent/rock.sock" }, done)
    return function() core.http_cancel(id) end
  end)
  T.eq(res, nil)
  T.ok(errors.is(err, "connection_failed"), tostring(err))
  T.eq(err.op, "http_request")
  T.eq(err.errno, "ENOENT")
end)

T.test("issue 7 item 2: the error metatable is C's, there before rock.errors loads", function()
  local mt = debug.getregistry()["rock.error"]
  T.eq(errors.mt, mt, "rock.errors uses C's metatable")
  T.eq(mt.__name, "rock.error")
  local build = core.rocklet_path():match("^(.*)/rocklet$")
  -- an ASan build's core.so needs the ASan runtime loaded first into lua5.4
  local env = ""
  if io.open("/proc/self/maps"):read("a"):find("libasan") then
    env = "ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD=$(cc -print-file-name=libasan.so) "
  end
  local out, ok = T.sh(env .. "LUA_CPATH='" .. build .. "/lua/?.so;;' lua5.4 -e '" ..
    "local core = require \"rock.core\"; local ok, e = pcall(core.base64_decode, \"!!\"); " ..
    "io.write(tostring(e), \" \", getmetatable(e).__name)'")
  T.ok(ok, out)
  T.eq(out, "invalid_argument: not base64 rock.error")
end)

T.test("http_cancel: the callback never runs; a second cancel finds nothing", function()
  local dir = os.tmpname()
  os.remove(dir)
  uv.fs_mkdir(dir, 448)
  local path = dir .. "/silent.sock"
  local server = uv.new_pipe(false)
  assert(server:bind(path))
  local conns = {}
  server:listen(8, function()
    local c = uv.new_pipe(false)
    server:accept(c)
    conns[#conns + 1] = c
    c:read_start(function() end) -- never answers
  end)
  local called = false
  local id = core.http_request({ url = "http://x/", unix_socket = path, timeout = 30 },
    function() called = true end)
  rock.sleep(0.05)
  T.eq(core.http_cancel(id), true)
  T.eq(core.http_cancel(id), false)
  rock.sleep(0.05)
  T.eq(called, false)
  for _, c in ipairs(conns) do c:close() end
  server:close()
  os.remove(path)
  uv.fs_rmdir(dir)
end)

--- A unix socket served by this process: answers every request with body.
local function imposter(path, body)
  local server = uv.new_pipe(false)
  assert(server:bind(path))
  local conns = {}
  server:listen(64, function()
    local c = uv.new_pipe(false)
    server:accept(c)
    conns[#conns + 1] = c
    local buf = ""
    c:read_start(function(_, data)
      if not data then return c:close() end
      buf = buf .. data
      if buf:find("\r\n\r\n") then
        buf = ""
        c:write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " ..
          #body .. "\r\n\r\n" .. body)
      end
    end)
  end)
  return function()
    for _, c in ipairs(conns) do if not c:is_closing() then c:close() end end
    server:close()
    os.remove(path)
  end
end

T.test("issue 7 item 13: a socket swapped for another server fails the peer check", function()
  local sb = rock.sandbox.start{ backend = "local" }
  local ok, err = pcall(function()
    T.ok(sb.pid, "local sandboxes know their rocklet's pid")
    local fake = sb.dir .. "/imposter.sock"
    local stop = imposter(fake, '{"imposter":true}')
    -- a path the sandbox controls, made to lead elsewhere (connections the
    -- host already holds to the real rocklet were checked when made)
    local swapped = sb.dir .. "/swapped.sock"
    assert(uv.fs_symlink(fake, swapped))
    local e = T.raises("sandbox_not_alive", rocklet.call, swapped, "/is_alive", {}, 5, sb.pid)
    T.match(e.message, "is not the sandbox's rocklet %(peer pid " .. core.getpid() ..
      ", expected " .. sb.pid .. "%)")
    T.eq(e.op, "is_alive")
    T.raises("timeout", rocklet.wait_ready, swapped, 0.2, function() end, sb.pid)
    stop()
    T.eq(rocklet.call(sb.socket, "/is_alive", {}, 5, sb.pid).is_alive, true,
      "the real rocklet passes the check")
  end)
  sb:stop()
  if not ok then error(err, 0) end
end)

T.test("issue 7 item 2: rocklet.call turns a misuse string into a rock error", function()
  local e = T.raises("invalid_argument", rocklet.call, "/nonexistent/rock.sock", "/is_alive", {},
    "soon")
  T.match(e.message, "timeout")
  T.eq(e.op, "is_alive")
end)

T.test("issue 7 item 11: 300 concurrent calls on one sandbox all succeed", function()
  local sb = rock.sandbox.start{ backend = "local" }
  local tasks, failures = {}, {}
  for i = 1, 300 do
    tasks[i] = rock.spawn(function()
      local ok, r = pcall(sb.execute, sb, { command = { "echo", tostring(i) }, timeout = 60 })
      if not ok then failures[#failures + 1] = tostring(r)
      elseif r.output ~= i .. "\n" then failures[#failures + 1] = "wrong output " .. r.output end
    end)
  end
  rock.wait(tasks)
  sb:stop()
  T.eq(#failures, 0, "failures (first: " .. tostring(failures[1]) .. ")")
end)

T.test("a dead rocklet is still sandbox_not_alive at once", function()
  local sb = rock.sandbox.start{ backend = "local" }
  local sock = sb.socket
  sb:stop()
  T.raises("sandbox_not_alive", rocklet.call, sock, "/is_alive", {}, 5)
end)

T.test("one log sink: core.log and rock.log obey ROCK_LOG with C's line format", function()
  local exe = T.rock_exe()
  local code = "'local rock = require \"rock\"; rock.log(\"info\", \"n=%d\", 7); " ..
    "rock.log.warn(\"sandbox\", \"msg=%q\", \"x\"); rock.core.log(\"error\", \"gc\", \"boom\")'"
  local out = T.sh("ROCK_NO_GC=1 ROCK_LOG=info " .. exe .. " -e " .. code)
  T.match(out, "rock info lua: n=7\n")
  T.match(out, 'rock warn sandbox: msg="x"\n')
  T.match(out, "rock error gc: boom\n")
  out = T.sh("ROCK_NO_GC=1 ROCK_LOG=error " .. exe .. " -e " .. code)
  T.ok(not out:find("n=7") and not out:find("msg="), out)
  T.match(out, "rock error gc: boom")
end)

T.test("json_wrap: text quoted (invalid UTF-8 replaced) or bytes base64'd into one JSON answer", function()
  local json = rock.json
  local all = {}
  for i = 0, 255 do all[#all + 1] = string.char(i) end
  all = table.concat(all)
  local text = 'a "quoted" \\ back\nslash\r\t\0\1\31 \127 caf\xc3\xa9 \xe2\x82\xac end'
  for _, s in ipairs({ "", "x", text, all, ("\xff"):rep(5), text:rep(1000) }) do
    local t = json.decode(core.json_wrap('{"a":1,"c":', s, "}"))
    T.eq(t.a, 1)
    T.eq(t.c, core.utf8_clean(s), "text of " .. #s .. " bytes")
    local b = json.decode(core.json_wrap("[", s, "]", "base64"))
    T.eq(b[1], core.base64_encode(s))
    T.ok(core.base64_decode(b[1]) == s, "base64 exact")
  end
  T.eq(core.json_wrap("", "", ""), '""')
  T.eq(core.json_wrap("<", "a/b", ">"), '<"a/b">', "nothing escaped that need not be")
  local ok, e = pcall(core.json_wrap, "", "x", "", "hex")
  T.ok(not ok, "a mode that is not base64 is misuse")
  T.match(tostring(e), "'base64' or nothing")
end)

T.test("_meta/core.lua declares every rock.core function and nothing else", function()
  local meta = arg[0]:match("(.*/)") .. "../../lua/rock/_meta/core.lua"
  local declared = {}
  for name in io.open(meta):read("a"):gmatch("\nfunction core%.([%w_]+)%(") do declared[name] = true end
  for name, v in pairs(core) do
    if type(v) == "function" then T.ok(declared[name], "core." .. name .. " is declared") end
  end
  for name in pairs(declared) do T.ok(core[name], "core." .. name .. " exists") end
end)

T.done()
