-- test_bytes_routes.lua: a file's bytes through every route above the
-- rocklet (issue 18; test_bytes.lua is the rocklet itself): the Lua API
-- on this run's backend, `rock serve` over HTTP (rock's GET/PUT .../file,
-- ROCK's read_file), and the remote backend (a sandbox on base_url).
-- Bytes that are not UTF-8 (all 256 values), a 0-byte and a 1-byte file,
-- 100 MB up and down byte-exact (past read_file's and the server's 32 MiB
-- bounds), a 1 GB file streamed down, each with the peak memory (VmHWM)
-- of this process and of the server growing under 16 MB; a missing file
-- (a clear error, no host file made), a download cancelled midway (no
-- partial file on the host, none in the server's $TMPDIR, the sandbox
-- usable). Through rock serve's GET .../file: ranges inside, at and past
-- the end (206, 416 with Content-Range), HEAD, a client that stops
-- reading (the sandbox is read no further meanwhile: the server relays,
-- it does not store), a client gone mid-stream (the sandbox's file is
-- let go at once, no temp file, the session usable after). Through its
-- PUT .../file (relayed as the client sends it): chunked bodies, 1 GB
-- from a client that pauses (the sandbox has what was sent, the server
-- no temp file and its peak memory flat), a sandbox that takes nothing
-- holding the client, a client that stops then hangs up (no file, no
-- part left), a sandbox that dies mid-upload (an error answer, the
-- server goes on) or while the client pauses (answered at once: the
-- sandbox is watched), the watch ending with the upload, a PUT to a
-- directory (400), 4 uploads at once. On the local
-- backend by default; ROCK_TEST_BACKEND and ROCK_TEST_IMAGE run it in
-- docker, podman and runc (tests/CMakeLists.txt).
local rock = require "rock"
local task = require "rock.task"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local S = dofile(here .. "serve_client.lua")
local json, core, uv = rock.json, rock.core, rock.uv

local backend = os.getenv("ROCK_TEST_BACKEND") or "local"
local image = os.getenv("ROCK_TEST_IMAGE") or "local"
local home = os.getenv("ROCK_HOME")
local stmp = home .. "/serve-tmp" -- the server's $TMPDIR: what it leaves there is seen
local hostdir = home .. "/host"   -- the host side's files
T.sh("mkdir -p " .. stmp .. " " .. hostdir)
local srv = S.start{ backend = backend, env = "TMPDIR=" .. stmp }
local PREFIX = "/apis/envs/sandbox/v1/"
T.match(T.sh("readlink /proc/" .. srv.pid .. "/exe"), "rock", "srv.pid is the server itself")

local ALL = {}
for i = 0, 255 do ALL[#ALL + 1] = string.char(i) end
ALL = table.concat(ALL):rep(64) .. "\xff\xfe\xc3" -- 16 KiB and a cut UTF-8 sequence at the end
local BIG = 100 << 20 -- past read_file's 32 MiB and the server's max_body (32 MiB)
local PEAK = 16 * 1024 -- KiB a process's peak memory may grow by while bytes stream through it

local function host(name) return hostdir .. "/" .. name end
local function read_host(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end
local function md5_host(path) return T.sh("md5sum < '" .. path .. "'"):match("%x+") end

-- A process's memory (/proc/PID/status, KiB), pid "self" for this one.
local function status_kib(pid, key)
  for line in io.lines("/proc/" .. pid .. "/status") do
    local kb = line:match("^" .. key .. ":%s+(%d+)")
    if kb then return tonumber(kb) end
  end
end
-- Run fn and return how far the peak resident memory (VmHWM) of this
-- process and of the server rose above where each stood before, in KiB:
-- a buffer held even for a moment counts, not only what is left after.
-- Writing 5 to clear_refs resets the peak to the present (Linux >= 4.0).
local function peak_growth(fn)
  collectgarbage()
  local base = {}
  for _, pid in ipairs({ "self", srv.pid }) do
    local f = assert(io.open("/proc/" .. pid .. "/clear_refs", "w"))
    f:write("5")
    f:close()
    base[pid] = status_kib(pid, "VmRSS")
  end
  local res = fn()
  return status_kib("self", "VmHWM") - base.self, status_kib(srv.pid, "VmHWM") - base[srv.pid], res
end
local function peaks_under(mine, server, what)
  print(string.format("     %s: peak memory grew %d KiB here, %d KiB in the server", what, mine, server))
  T.rss_under(mine, PEAK, what .. ": this process's peak memory grew " .. mine .. " KiB")
  T.rss_under(server, PEAK, what .. ": the server's peak memory grew " .. server .. " KiB")
end

-- Where in the file called name (a unique name) the processes that hold
-- it open stand ({pos, ...}, from /proc/PID/fdinfo): the rocklet reading
-- it for an answer, in or out of a container. Empty once nobody holds it.
local function readers(name)
  local out = T.sh("for f in $(find /proc/[0-9]*/fd -lname '*/" .. name .. "' 2>/dev/null); do " ..
    "sed -n 's/^pos:[[:space:]]*//p' \"$(echo $f | sed 's,/fd/,/fdinfo/,')\" 2>/dev/null; done")
  local pos = {}
  for n in out:gmatch("%d+") do pos[#pos + 1] = tonumber(n) end
  return pos
end
local function leftovers(dir, pat)
  local n = {}
  for _, name in ipairs(T.listdir(dir)) do if name:find(pat) then n[#n + 1] = name end end
  return n
end

-- the two ways a recipe reaches a sandbox: the Lua API here, and the same
-- calls through base_url
local function lua_api()
  local so = T.sandbox_opts()
  if backend == "local" then so.image = nil end
  return rock.sandbox.start(so)
end
local function remote() return rock.sandbox.start{ base_url = srv.url, image = image } end

-- The scratch dirs the tests make in sandboxes: on the local backend (and
-- rock serve's over it) a sandbox's /tmp is the host's, so they are
-- removed at the end (elsewhere they went with their containers).
local scratch_dirs = {}
local function scratch_dir(id)
  local d = "/tmp/rock-br-" .. id
  scratch_dirs[#scratch_dirs + 1] = d
  return d
end

-- a scratch directory in the sandbox, by a command (a remote sandbox's dir is not ours)
local function scratch(sb)
  local d = scratch_dir(sb.id)
  sb:execute{ command = { "mkdir", "-p", d } }
  return d
end

for _, route in ipairs({ { "the Lua API", lua_api }, { "the remote backend", remote } }) do
  local name, start = route[1], route[2]

  T.test(name .. ": bytes that are not UTF-8, 0 bytes, 1 byte: upload, read_file, download exact", function()
    local sb = start()
    local d = scratch(sb)
    for i, bytes in ipairs({ ALL, "", "\0" }) do
      local src, dst = host("src" .. i), host("dst" .. i)
      T.write(src, bytes)
      sb:upload{ path = d .. "/f" .. i, file = src }
      local got = sb:read_file{ path = d .. "/f" .. i, binary = true }.content
      T.ok(got == bytes, "read_file binary: the exact bytes (" .. #bytes .. ")")
      T.eq(sb:read_file{ path = d .. "/f" .. i }.content, core.output_clean(bytes), "read_file text: scrubbed")
      local r = sb:download{ path = d .. "/f" .. i, file = dst }
      T.eq(r.success, true)
      T.eq(r.size, #bytes)
      T.ok(read_host(dst) == bytes, "download: the exact bytes (" .. #bytes .. ")")
      os.remove(src)
      os.remove(dst)
    end
    -- write_file of bytes that are not UTF-8, read back exact
    sb:write_file{ path = d .. "/w", content = ALL }
    T.ok(sb:read_file{ path = d .. "/w", binary = true }.content == ALL, "write_file then read_file")
    if name == "the remote backend" then -- as a raw body (PUT .../file), not base64 in ROCK's JSON
      T.wait_until("the server logs the PUT", function()
        return srv.log():find("PUT " .. PREFIX .. "file " .. sb.id .. " 200", 1, true) ~= nil end, 5)
      T.ok(not srv.log():find(PREFIX .. "write_file " .. sb.id, 1, true), "no JSON write_file")
    end
    sb:execute{ command = { "rm", "-rf", d } }
    sb:stop()
  end)

  T.test(name .. ": a 100 MB file goes up and down byte-exact, streamed; read_file refuses it, pointing at download", function()
    local sb = start()
    local d = scratch(sb)
    local src, dst = host("big"), host("big.out")
    local _, made = T.sh(string.format("head -c %d /dev/urandom > '%s'", BIG, src))
    T.ok(made, "the file is made")
    local want = md5_host(src)
    local mine, server = peak_growth(function() sb:upload{ path = d .. "/big", file = src } end)
    T.eq(sb:execute{ command = { "sh", "-c", "md5sum < " .. d .. "/big" } }.stdout:match("%x+"), want, "uploaded")
    peaks_under(mine, server, "the upload was streamed")
    local size
    mine, server, size = peak_growth(function() return sb:download{ path = d .. "/big", file = dst }.size end)
    T.eq(size, BIG)
    T.eq(md5_host(dst), want, "downloaded")
    peaks_under(mine, server, "the download was streamed")
    local e = T.raises("invalid_argument", sb.read_file, sb, { path = d .. "/big", binary = true })
    T.match(e.message, "larger than 32 MiB: download it")
    os.remove(src)
    os.remove(dst)
    sb:execute{ command = { "rm", "-rf", d } }
    sb:stop()
  end)

  T.test(name .. ": a 1 GB file streams down whole, the peak memory here and in the server growing under 16 MB", function()
    local sb = start()
    local d = scratch(sb)
    sb:execute{ command = { "truncate", "-s", "1G", d .. "/giga" } }
    local dst = host("giga")
    local mine, server, size = peak_growth(function()
      return sb:download{ path = d .. "/giga", file = dst, timeout = 300 }.size
    end)
    T.eq(size, 1 << 30)
    T.eq(T.file_size(dst), 1 << 30, "the whole file on the host")
    peaks_under(mine, server, "1 GB streamed")
    os.remove(dst)
    T.eq(#leftovers(stmp, "^rock"), 0, "nothing in the server's $TMPDIR")
    sb:execute{ command = { "rm", "-rf", d } }
    sb:stop()
  end)

  T.test(name .. ": a missing file is not_found, naming it; no host file is made", function()
    local sb = start()
    local d = scratch(sb)
    local e = T.raises("not_found", sb.read_file, sb, { path = d .. "/nope" })
    T.match(e.message, "nope")
    e = T.raises("not_found", sb.download, sb, { path = d .. "/nope", file = host("nope") })
    T.match(e.message, "nope")
    T.eq(#leftovers(hostdir, "nope"), 0, "no host file, no part file")
    e = T.raises("invalid_argument", sb.upload, sb, { path = d .. "/x", file = host("not-there") })
    T.match(e.message, "not%-there")
    sb:execute{ command = { "rm", "-rf", d } }
    sb:stop()
  end)

  T.test(name .. ": a download cancelled midway leaves no partial file; the sandbox goes on", function()
    local sb = start()
    local d = scratch(sb)
    sb:execute{ command = { "truncate", "-s", "256M", d .. "/huge" } }
    local dst = host("huge")
    local t = rock.spawn(function() return sb:download{ path = d .. "/huge", file = dst } end)
    T.wait_until("bytes arrive on the host", function()
      for _, n in ipairs(leftovers(hostdir, "^huge%.rock%-part")) do
        if (T.file_size(hostdir .. "/" .. n) or 0) > 0 then return true end
      end
    end, 60)
    task.cancel(t, rock.errors.new("cancelled", "the test cancels it"))
    local ok, err = pcall(rock.wait, t)
    T.ok(not ok and rock.errors.is(err, "cancelled"), "the download was cancelled: " .. tostring(err))
    T.eq(#leftovers(hostdir, "^huge"), 0, "no file, no part file on the host")
    T.wait_until("nothing left in the server's $TMPDIR", function() return #leftovers(stmp, "^rock") == 0 end, 30)
    T.eq(sb:execute{ command = { "echo", "usable" } }.stdout, "usable\n")
    T.eq(sb:download{ path = d .. "/huge", file = dst, timeout = 120 }.size, 256 << 20, "a whole download after it")
    os.remove(dst)
    sb:execute{ command = { "rm", "-rf", d } }
    sb:stop()
  end)
end

T.test("bulk output: the same text in-process, through ROCK's JSON and through the remote backend", function()
  local mine, theirs = lua_api(), remote()
  local cmds = {
    { "seq", "1000000" }, -- 6.9 MB whole
    { "sh", "-c", [[printf 'a\377\r\n\033[1mb\0 "q" \\ \342\202'; printf 'e\377\r\n' >&2; exit 3]] },
    { "sh", "-c", "seq 100000; seq 5000 >&2" }, -- past max_output: the drop notes
    { "true" },
  }
  for i, c in ipairs(cmds) do
    local mo = i == 3 and 1000 or 16 << 20
    local a = mine:execute{ command = c, max_output = mo }
    local b = theirs:execute{ command = c, max_output = mo }
    local env = srv.post("execute", { sandbox_id = theirs.id, command = c, max_output = mo })
    T.eq(env.status, "Success")
    for _, k in ipairs({ "stdout", "stderr", "exit_code", "failure_reason" }) do
      T.ok(a[k] == b[k], "execute " .. i .. " " .. k .. ": remote as in-process")
      T.ok(env.result[k] == a[k], "execute " .. i .. " " .. k .. ": ROCK's JSON as in-process")
    end
  end
  -- the remote backend's way: the text as the body, the fields in a header
  local r = srv.raw{ method = "POST", path = PREFIX .. "execute", body = json.encode{ sandbox_id = theirs.id,
    command = { "sh", "-c", "seq 3; echo err >&2; exit 2" } },
    headers = { ["Content-Type"] = "application/json", Accept = "application/octet-stream" } }
  T.eq(r.status, 200)
  T.eq(r.headers["content-type"], "text/plain; charset=utf-8")
  T.eq(r.body, "1\n2\n3\nerr\n")
  T.eq(r.headers["x-stdout-length"], "6")
  local f = json.decode((r.headers["x-rock-result"]:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)))
  T.eq(f.exit_code, 2)
  T.eq(f.stdout, nil)
  mine:create_session{ session = "o" }
  theirs:create_session{ session = "o" }
  for i, c in ipairs({ "seq 1000000", [[printf 'a\377\r\n\033[1mb\0'; false]], "seq 100000", "sleep 5" }) do
    local mo, to = i == 3 and 1000 or 16 << 20, i == 4 and 0.3 or nil
    local a = mine:run_in_session{ session = "o", command = c, max_output = mo, timeout = to }
    local b = theirs:run_in_session{ session = "o", command = c, max_output = mo, timeout = to }
    for _, k in ipairs({ "output", "exit_code", "failure_reason", "truncated", "dropped_bytes" }) do
      local x, y = a[k], b[k]
      if k == "output" and a.output_file then -- the spill's name differs: the sandbox's own
        x, y = x:gsub("full output: %S+", ""), y:gsub("full output: %S+", "")
      end
      T.ok(x == y, "run_in_session " .. i .. " " .. k .. ": remote as in-process (" .. tostring(x):sub(1, 80) ..
        " / " .. tostring(y):sub(1, 80) .. ")")
    end
    if i == 3 then T.ok(b.output_file and b.output_file ~= "", "the spill is named") end
  end
  local env = srv.post("run_in_session", { sandbox_id = theirs.id, session = "o", command = "seq 1000000",
    max_output = 16 << 20 })
  T.eq(env.status, "Success")
  T.eq(#env.result.output, 6888896)
  T.eq(env.result.exit_code, 0)
  mine:stop()
  theirs:stop()
end)

-- rock serve's own routes, as a client that is not rock speaks them
local function file_url(id, path)
  return PREFIX .. "file?sandbox_id=" .. id .. "&path=" .. path:gsub("[^%w%-._~/]", function(c)
    return string.format("%%%02X", c:byte())
  end)
end

T.test("rock serve GET/PUT .../file: raw bodies both ways, exact; errors are statuses with the envelope", function()
  local id = S.start_sandbox(srv, { image = image })
  local d = scratch_dir(id)
  for i, bytes in ipairs({ ALL, "", "\0" }) do
    local put = srv.raw{ method = "PUT", path = file_url(id, d .. "/f" .. i), body = bytes,
      headers = { ["Content-Type"] = "application/octet-stream" } }
    T.eq(put.status, 200, put.body)
    T.eq(json.decode(put.body).status, "Success")
    local get = srv.raw{ path = file_url(id, d .. "/f" .. i) }
    T.eq(get.status, 200)
    T.eq(get.headers["content-type"], "application/octet-stream")
    T.ok(get.body == bytes, "GET: the exact bytes (" .. #bytes .. ")")
  end
  -- a body past the server's max_body (32 MiB) goes in: it is relayed as it comes
  local big = string.rep("\0\255\1", BIG // 3)
  local put = srv.raw{ method = "PUT", path = file_url(id, d .. "/big"), body = big }
  T.eq(put.status, 200, put.body)
  local get = srv.raw{ path = file_url(id, d .. "/big") }
  T.ok(get.body == big, "40 MB back exact")
  big, get = nil, nil
  -- ROCK's read_file: text scrubbed as command output is; base64 exact
  local env = srv.post("read_file", { sandbox_id = id, path = d .. "/f1" })
  T.eq(env.status, "Success")
  T.eq(env.result.content, core.output_clean(ALL))
  env = srv.post("read_file", { sandbox_id = id, path = d .. "/f1", encoding = "base64" })
  T.eq(core.base64_decode(env.result.content), ALL)
  T.eq(srv.post("read_file", { sandbox_id = id, path = d .. "/f2" }).result.content, "", "0 bytes")
  -- errors: a status, the Failed envelope as body
  local r = srv.raw{ path = file_url(id, d .. "/nope") }
  T.eq(r.status, 404)
  local e = json.decode(r.body)
  T.eq(e.status, "Failed")
  T.eq(e.result.rock_code, "not_found")
  T.match(e.error, "nope")
  r = srv.raw{ path = PREFIX .. "file?sandbox_id=" .. id }
  T.eq(r.status, 400)
  T.eq(json.decode(r.body).message, "invalid parameter")
  r = srv.raw{ path = file_url("rk-no-such", d .. "/f1") }
  T.eq(r.status, 404)
  T.eq(json.decode(r.body).result.rock_code, "sandbox_not_found")
  T.eq(srv.raw{ method = "DELETE", path = file_url(id, d .. "/f1") }.status, 405)
  -- a PUT to a directory is bad input: 400 invalid_argument (the rocklet's
  -- answer before any byte goes in). Relayed (past 1 MiB), that early
  -- answer may be lost when the rocklet closes on the body still coming:
  -- then a 500 http_error (docs/http-api.md)
  r = srv.raw{ method = "PUT", path = file_url(id, d), body = "small" }
  T.eq(r.status, 400, r.body)
  e = json.decode(r.body)
  T.eq(e.result.rock_code, "invalid_argument", e.error)
  T.match(e.error, "is a directory")
  local w = srv.post("write_file", { sandbox_id = id, path = d, content = "small" })
  T.eq(w.status, "Failed")
  T.eq(w.result.rock_code, "invalid_argument", "ROCK's write_file to a directory too")
  for i = 1, 3 do
    r = srv.raw{ method = "PUT", path = file_url(id, d), body = string.rep("x", 3 << 20) }
    e = json.decode(r.body)
    print("     relayed PUT to a directory " .. i .. ": " .. r.status .. " " .. e.result.rock_code .. ": " .. e.error)
    T.ok(r.status == 400 and e.result.rock_code == "invalid_argument" or
      r.status == 500 and e.result.rock_code == "http_error", r.body)
  end
  T.eq(srv.post("execute", { sandbox_id = id, command = { "ls", "-A", d } }).result.stdout,
    "big\nf1\nf2\nf3\n", "nothing made in the directory")
  T.eq(#leftovers(stmp, "^rock"), 0, "no temp file left in the server's $TMPDIR")
  srv.post("execute", { sandbox_id = id, command = { "rm", "-rf", d } })
  srv.post("stop", { sandbox_id = id })
end)

-- GET path from the server over a TCP connection of our own, reading the
-- body as it comes. opts: stop_after (hang up once that many body bytes
-- came; at_stop() runs first), pause_at + pause (seconds: stop reading
-- there that long; during() runs at a third of the pause and at its end,
-- its results kept), headers (extra lines). Returns {head=, status=,
-- got= body bytes, why= "whole" | "stopped" | "eof" | an error, ...}.
local function stream_get(path, opts)
  opts = opts or {}
  local res = { got = 0, samples = {} }
  return rock.await(function(done)
    local tcp = uv.new_tcp()
    local buf, finished, paused, length = "", false, false, nil
    local timers = {}
    local function fin(why)
      if finished then return end
      finished = true
      res.why = why
      for _, t in ipairs(timers) do if not t:is_closing() then t:close() end end
      if not tcp:is_closing() then tcp:close() end
      done(res)
    end
    local function after(ms, fn)
      local t = uv.new_timer()
      timers[#timers + 1] = t
      t:start(ms, 0, fn)
    end
    local on_read
    function on_read(e, chunk)
      if finished then return end
      if e or not chunk then return fin(e or "eof") end
      if not res.head then
        buf = buf .. chunk
        local i = buf:find("\r\n\r\n", 1, true)
        if not i then return end
        res.head, chunk, buf = buf:sub(1, i + 3), buf:sub(i + 4), nil
        res.status = tonumber(res.head:match("^HTTP/1%.1 (%d+)"))
        length = tonumber(res.head:lower():match("\ncontent%-length: *(%d+)"))
      end
      res.got = res.got + #chunk
      if length and res.got >= length then return fin("whole") end
      if opts.stop_after and res.got >= opts.stop_after then
        if opts.at_stop then res.at_stop = opts.at_stop() end
        return fin("stopped")
      end
      if opts.pause_at and not paused and res.got >= opts.pause_at then
        paused = true
        tcp:read_stop()
        local ms = math.floor(opts.pause * 1000)
        after(ms // 3, function() res.samples[1] = opts.during() end)
        after(ms, function()
          res.samples[2] = opts.during()
          tcp:read_start(on_read)
        end)
      end
    end
    tcp:connect("127.0.0.1", srv.port, function(err)
      if err then return fin(err) end
      tcp:write("GET " .. path .. " HTTP/1.1\r\nHost: 127.0.0.1:" .. srv.port .. "\r\n" ..
        (opts.headers or "") .. "\r\n")
      tcp:read_start(on_read)
    end)
    return function() fin("cancelled") end
  end)
end

-- a sandbox through rock serve with a scratch dir in it
local function serve_sandbox()
  local id = S.start_sandbox(srv, { image = image })
  local d = scratch_dir(id)
  T.eq(srv.post("execute", { sandbox_id = id, command = { "mkdir", "-p", d } }).status, "Success")
  return id, d
end
local function serve_done(id, d)
  srv.post("execute", { sandbox_id = id, command = { "rm", "-rf", d } })
  srv.post("stop", { sandbox_id = id })
end

T.test("rock serve .../file: 100 MB up and down byte-exact (curl), the server's peak memory growing under 16 MB", function()
  local id, d = serve_sandbox()
  local src, dst = host("h100"), host("h100.out")
  T.sh(string.format("head -c %d /dev/urandom > '%s'", BIG, src))
  local want = md5_host(src)
  local url = srv.url .. file_url(id, d .. "/h100")
  local _, server, code = peak_growth(function()
    return T.run{ "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-T", src, url }
  end)
  T.eq(code, "200", "PUT")
  T.rss_under(server, PEAK, "PUT: the server's peak memory grew " .. server .. " KiB")
  _, server, code = peak_growth(function()
    return T.run{ "curl", "-sS", "-o", dst, "-w", "%{http_code}", url }
  end)
  T.eq(code, "200", "GET")
  T.eq(md5_host(dst), want, "100 MB back byte-exact")
  T.rss_under(server, PEAK, "GET: the server's peak memory grew " .. server .. " KiB")
  T.eq(#leftovers(stmp, "^rock"), 0, "no temp file left in the server's $TMPDIR")
  os.remove(src)
  os.remove(dst)
  serve_done(id, d)
end)

T.test("rock serve GET .../file: ranges inside, at and past the end (206, 416 with Content-Range); HEAD", function()
  local id, d = serve_sandbox()
  local f = d .. "/r"
  local bytes = ALL:sub(1, 1000)
  T.eq(srv.raw{ method = "PUT", path = file_url(id, f), body = bytes }.status, 200)
  T.eq(srv.raw{ method = "PUT", path = file_url(id, d .. "/empty"), body = "" }.status, 200)
  local function get(range, path, method)
    return srv.raw{ method = method, path = file_url(id, path or f), headers = { Range = range } }
  end
  local r = srv.raw{ path = file_url(id, f) }
  T.eq(r.status, 200)
  T.eq(r.headers["accept-ranges"], "bytes")
  T.ok(r.body == bytes, "no range: the whole file")
  for _, c in ipairs({
    { "bytes=0-99", 1, 100 }, { "bytes=990-", 991, 1000 }, { "bytes=-10", 991, 1000 },
    { "bytes=995-5000", 996, 1000 }, { "bytes=999-999", 1000, 1000 }, { "bytes=-5000", 1, 1000 },
  }) do
    r = get(c[1])
    T.eq(r.status, 206, c[1])
    T.eq(r.headers["content-range"], string.format("bytes %d-%d/1000", c[2] - 1, c[3] - 1), c[1])
    T.eq(r.headers["content-type"], "application/octet-stream", c[1])
    T.ok(r.body == bytes:sub(c[2], c[3]), c[1] .. ": those bytes")
  end
  for _, range in ipairs({ "bytes=1000-", "bytes=1000-1000", "bytes=5000-6000" }) do -- at, past the end
    r = get(range)
    T.eq(r.status, 416, range)
    T.eq(r.headers["content-range"], "bytes */1000", range)
    local e = json.decode(r.body)
    T.eq(e.status, "Failed", range)
    T.eq(e.result.rock_code, "invalid_argument", range)
  end
  r = get("bytes=0-", d .. "/empty")
  T.eq(r.status, 416, "a range of a 0-byte file")
  T.eq(r.headers["content-range"], "bytes */0")
  T.eq(get(nil, d .. "/empty").body, "", "a 0-byte file whole")
  r = srv.raw{ method = "HEAD", path = file_url(id, f) }
  T.eq(r.status, 200, "HEAD")
  T.eq(r.headers["content-length"], "1000", "HEAD")
  T.eq(r.body, "", "HEAD")
  T.eq(srv.raw{ method = "HEAD", path = file_url(id, d .. "/nope") }.status, 404, "HEAD of a missing file")
  serve_done(id, d)
end)

T.test("rock serve GET .../file: a client that stops reading stops the reads from the sandbox; every byte comes after", function()
  local id, d = serve_sandbox()
  local name = "slow-" .. id
  srv.post("execute", { sandbox_id = id, command = { "truncate", "-s", "256M", d .. "/" .. name } })
  local _, server, res = peak_growth(function()
    return stream_get(file_url(id, d .. "/" .. name), { pause_at = 4 << 20, pause = 1.5,
      during = function() return readers(name)[1] end })
  end)
  T.eq(res.status, 200)
  T.eq(res.why, "whole")
  T.eq(res.got, 256 << 20, "every byte")
  local a, b = res.samples[1], res.samples[2]
  T.ok(a and b, "the sandbox's file was open during the pause")
  print(string.format("     paused at 4 MiB: the sandbox had read %.1f MiB, then %.1f MiB a second later",
    a / 2 ^ 20, b / 2 ^ 20))
  T.ok(a < (64 << 20), "the server read ahead no more than its buffers (" .. a .. " bytes)")
  T.ok(b - a < (1 << 20), "no read from the sandbox while the client read nothing (" .. (b - a) .. " bytes)")
  T.rss_under(server, PEAK, "the server's peak memory grew " .. server .. " KiB")
  serve_done(id, d)
end)

T.test("rock serve GET .../file: a client gone mid-stream ends the transfer from the sandbox; no temp file; the session goes on", function()
  local id, d = serve_sandbox()
  T.eq(srv.post("create_session", { sandbox_id = id, session = "s" }).status, "Success")
  local name = "gone-" .. id
  srv.post("execute", { sandbox_id = id, command = { "truncate", "-s", "8G", d .. "/" .. name } })
  local res = stream_get(file_url(id, d .. "/" .. name), { stop_after = 8 << 20,
    at_stop = function() return #readers(name) end })
  T.eq(res.status, 200)
  T.eq(res.why, "stopped")
  T.ok(res.at_stop > 0, "the server was still reading the sandbox's file when the client went")
  T.wait_until("the sandbox's file is let go", function() return #readers(name) == 0 end, 2)
  T.wait_until("the server logs the cut answer as 499", function()
    return srv.log():find(PREFIX .. "file " .. id .. " 499 Failed", 1, true) ~= nil
  end, 5)
  T.eq(#leftovers(stmp, "^rock"), 0, "no temp file in the server's $TMPDIR")
  local env = srv.post("run_in_session", { sandbox_id = id, session = "s", command = "echo still here" })
  T.eq(env.status, "Success")
  T.eq(env.result.output, "still here\n")
  local r = srv.raw{ path = file_url(id, d .. "/" .. name), headers = { Range = "bytes=-16" } }
  T.eq(r.status, 206, "the same file again")
  T.ok(r.body == string.rep("\0", 16), "its last 16 bytes")
  serve_done(id, d)
end)

-- PUT path to the server over a TCP connection of our own: the body
-- (opts.size bytes of PIECE over and over, with a Content-Length) written
-- as the server takes it (at most 4 MiB queued here), its answer read as
-- it comes. opts: pause_at + pause (seconds: stop sending there that
-- long; during() runs at a third of the pause and at its end, its results
-- kept), stop_after + hold (stop sending there, run at_stop() hold seconds
-- later, then hang up), answer_ends (an answer read ends it at once,
-- however much is left to send: why "answered", res.answered_at its
-- uv.hrtime()), res (the table filled: another task may watch
-- res.sent). Returns res: {status=, body=, sent= body bytes the kernel
-- took, why= "answered" (all sent, the answer read) | "stopped" | "eof" |
-- an error, samples=}.
local PIECE = {}
for i = 0, (1 << 20) - 1, 4 do PIECE[#PIECE + 1] = string.pack("<I4", (i * 2654435761) & 0xffffffff) end
PIECE = table.concat(PIECE) -- 1 MiB, every 4 bytes different
local function stream_put(path, opts)
  local res = opts.res or {}
  res.sent, res.samples = 0, {}
  return rock.await(function(done)
    local tcp = uv.new_tcp()
    local finished, timers, queued, pos, held, paused_once = false, {}, 0, 0, false, false
    local buf, length = "", nil
    local function fin(why)
      if finished then return end
      finished = true
      res.why = why
      for _, t in ipairs(timers) do if not t:is_closing() then t:close() end end
      if not tcp:is_closing() then tcp:close() end
      done(res)
    end
    local function after(ms, fn)
      local t = uv.new_timer()
      timers[#timers + 1] = t
      t:start(ms, 0, fn)
    end
    local pump
    function pump()
      while not finished and not held and queued < (4 << 20) and pos < opts.size do
        if opts.pause_at and not paused_once and pos >= opts.pause_at then
          paused_once, held = true, true
          local ms = math.floor(opts.pause * 1000)
          after(ms // 3, function() res.samples[1] = opts.during() end)
          after(ms, function()
            res.samples[2] = opts.during()
            held = false
            pump()
          end)
          return
        end
        if opts.stop_after and pos >= opts.stop_after then
          held = true
          after(math.floor(opts.hold * 1000), function()
            if opts.at_stop then res.at_stop = opts.at_stop() end
            fin("stopped")
          end)
          return
        end
        local n = math.min(#PIECE, opts.size - pos)
        pos, queued = pos + n, queued + n
        tcp:write(n == #PIECE and PIECE or PIECE:sub(1, n), function(err)
          if finished then return end
          if err then return fin(err) end
          queued, res.sent = queued - n, res.sent + n
          pump()
        end)
      end
      if pos >= opts.size and queued == 0 and res.body then fin("answered") end
    end
    local function on_read(err, chunk)
      if finished then return end
      if err or not chunk then return fin(err or "eof") end
      buf = buf .. chunk
      if not res.status then
        local i = buf:find("\r\n\r\n", 1, true)
        if not i then return end
        res.head, buf = buf:sub(1, i + 3), buf:sub(i + 4)
        res.status = tonumber(res.head:match("^HTTP/1%.1 (%d+)"))
        length = tonumber(res.head:lower():match("\ncontent%-length: *(%d+)")) or 0
      end
      if not res.body and #buf >= length then
        res.body, res.answered_at = buf:sub(1, length), uv.hrtime()
        if opts.answer_ends or (pos >= opts.size and queued == 0) then fin("answered") end
      end
    end
    tcp:connect("127.0.0.1", srv.port, function(err)
      if err then return fin(err) end
      tcp:read_start(on_read)
      tcp:write("PUT " .. path .. " HTTP/1.1\r\nHost: 127.0.0.1:" .. srv.port .. "\r\nContent-Length: " ..
        opts.size .. "\r\n\r\n")
      pump()
    end)
    return function() fin("cancelled") end
  end)
end

-- The processes writing the sandbox's temp file of the upload to name (the
-- rocklet's name.rock-tmp.*: c/rocklet/replace.c), in or out of a
-- container: {{pid=, pos= bytes written}, ...}. Empty once none is.
local function writers(name)
  local out = T.sh("for f in $(find /proc/[0-9]*/fd -lname '*/" .. name .. ".rock-tmp.*' 2>/dev/null); do " ..
    "p=${f#/proc/}; echo ${p%%/*} $(sed -n 's/^pos:[[:space:]]*//p' \"$(echo $f | sed 's,/fd/,/fdinfo/,')\" " ..
    "2>/dev/null); done")
  local w = {}
  for pid, pos in out:gmatch("(%d+) (%d+)") do w[#w + 1] = { pid = tonumber(pid), pos = tonumber(pos) } end
  return w
end
-- the md5 of n MiB of PIECE, and of a sandbox's file
local function md5_pieces(n)
  local f = host("piece")
  T.write(f, PIECE)
  local sum = T.sh("for i in $(seq " .. n .. "); do cat '" .. f .. "'; done | md5sum"):match("%x+")
  os.remove(f)
  return sum
end
local function md5_in(id, path)
  local env = srv.post("execute", { sandbox_id = id, command = { "sh", "-c", "md5sum < " .. path } })
  return env.result.stdout:match("%x+")
end
local function ls_in(id, d)
  return srv.post("execute", { sandbox_id = id, command = { "ls", "-A", d } }).result.stdout
end

T.test("rock serve PUT .../file: chunked bodies (curl -T -) of every byte value, 0 bytes, 1 byte are relayed exact", function()
  local id, d = serve_sandbox()
  for i, bytes in ipairs({ ALL, "", "\0" }) do
    local src = host("chunked" .. i)
    T.write(src, bytes)
    local code = T.sh("curl -sS -o /dev/null -w '%{http_code}' -T - '" .. srv.url .. file_url(id, d .. "/c" .. i) ..
      "' < '" .. src .. "'")
    T.eq(code, "200", "PUT chunked " .. #bytes)
    T.ok(srv.raw{ path = file_url(id, d .. "/c" .. i) }.body == bytes, "the exact bytes (" .. #bytes .. ")")
    os.remove(src)
  end
  T.eq(ls_in(id, d), "c1\nc2\nc3\n", "the files, no part left")
  T.eq(#leftovers(stmp, "^rock"), 0, "no temp file in the server's $TMPDIR")
  serve_done(id, d)
end)

T.test("rock serve PUT .../file: 1 GB relayed as it comes from a client that pauses midway, byte-exact; " ..
    "nothing stored in the server (peak memory under 16 MB, no temp file while it streams)", function()
  local id, d = serve_sandbox()
  local name = "giga-" .. id
  local _, server, res = peak_growth(function()
    return stream_put(file_url(id, d .. "/" .. name), { size = 1 << 30, pause_at = 512 << 20, pause = 1,
      during = function()
        local w = writers(name)
        return { tmp = #leftovers(stmp, "^rock"), pos = w[1] and w[1].pos,
          whole = w[1] and os.execute("test -e /proc/" .. w[1].pid .. "/root" .. d .. "/" .. name) }
      end })
  end)
  T.eq(res.why, "answered")
  T.eq(res.status, 200, res.body)
  T.eq(json.decode(res.body).status, "Success")
  local a, b = res.samples[1], res.samples[2]
  print(string.format("     paused at 512 MiB: the sandbox's temp file held %.1f MiB, then %.1f MiB",
    (a.pos or 0) / 2 ^ 20, (b.pos or 0) / 2 ^ 20))
  T.eq(a.tmp, 0, "nothing in the server's $TMPDIR while it streams")
  T.ok(a.pos and a.pos > (480 << 20), "the sandbox has what the client sent: relayed, not stored")
  T.ok(not a.whole, "no file at the path until the whole body is in")
  T.rss_under(server, PEAK, "1 GB up: the server's peak memory grew " .. server .. " KiB")
  print(string.format("     1 GB up: the server's peak memory grew %d KiB", server))
  T.eq(md5_in(id, d .. "/" .. name), md5_pieces(1024), "1 GB byte-exact")
  T.eq(#leftovers(stmp, "^rock"), 0, "no temp file in the server's $TMPDIR")
  serve_done(id, d)
end)

T.test("rock serve PUT .../file: a sandbox that takes nothing holds the client (the server reads no further); " ..
    "every byte arrives once it takes them again", function()
  local id, d = serve_sandbox()
  local name = "held-" .. id
  local prog = {}
  local t = rock.spawn(function() return stream_put(file_url(id, d .. "/" .. name), { size = 256 << 20, res = prog }) end)
  T.wait_until("the sandbox writes", function()
    local w = writers(name)
    return w[1] and w[1].pos > (16 << 20)
  end, 60)
  local pid = writers(name)[1].pid
  T.sh("kill -STOP " .. pid)
  rock.sleep(1)
  local s1, rss1 = prog.sent, status_kib(srv.pid, "VmRSS")
  rock.sleep(1)
  local s2, rss2 = prog.sent, status_kib(srv.pid, "VmRSS")
  T.sh("kill -CONT " .. pid)
  local res = rock.wait(t)
  print(string.format("     the sandbox stopped: the client had sent %.1f MiB, %.1f MiB a second later",
    s1 / 2 ^ 20, s2 / 2 ^ 20))
  T.eq(s2, s1, "nothing more taken from the client while the sandbox took nothing")
  T.ok(s1 < (200 << 20), "the client held well before the end")
  T.rss_under(rss2 - rss1, 1024, "the server holds nothing more meanwhile")
  T.eq(res.status, 200, res.body)
  T.eq(md5_in(id, d .. "/" .. name), md5_pieces(256), "every byte after")
  serve_done(id, d)
end)

T.test("rock serve PUT .../file: a client that stops sending mid-body, then hangs up: the transfer to the sandbox " ..
    "ends, no file and no part is left, the session goes on", function()
  local id, d = serve_sandbox()
  T.eq(srv.post("create_session", { sandbox_id = id, session = "s" }).status, "Success")
  local name = "cut-" .. id
  local res = stream_put(file_url(id, d .. "/" .. name), { size = 512 << 20, stop_after = 64 << 20, hold = 0.5,
    at_stop = function() return writers(name) end })
  T.eq(res.why, "stopped")
  T.eq(res.status, nil, "no answer while the body is unfinished")
  T.eq(#res.at_stop, 1, "the sandbox's temp file was open while the client held")
  T.ok(res.at_stop[1].pos > (48 << 20), "it had what came: " .. res.at_stop[1].pos)
  T.wait_until("the sandbox lets its temp file go", function() return #writers(name) == 0 end, 10)
  T.eq(ls_in(id, d), "", "no file, no part in the sandbox")
  T.wait_until("the server logs the cut request as 499", function()
    return srv.log():find("PUT " .. PREFIX .. "file " .. id .. " 499 Failed", 1, true) ~= nil
  end, 5)
  T.eq(#leftovers(stmp, "^rock"), 0, "no temp file in the server's $TMPDIR")
  local env = srv.post("run_in_session", { sandbox_id = id, session = "s", command = "echo still here" })
  T.eq(env.result.output, "still here\n")
  serve_done(id, d)
end)

T.test("rock serve PUT .../file: a sandbox that dies mid-upload: the client gets an error, the server goes on", function()
  local id, d = serve_sandbox()
  local name = "dies-" .. id
  local prog = {}
  local t = rock.spawn(function() return stream_put(file_url(id, d .. "/" .. name), { size = 256 << 20, res = prog }) end)
  T.wait_until("the sandbox writes", function()
    local w = writers(name)
    return w[1] and w[1].pos > (16 << 20)
  end, 60)
  T.sh("kill -KILL " .. writers(name)[1].pid)
  local res = rock.wait(t)
  -- the answer comes at once; the rest (far past what the server drops to keep
  -- a connection) is not read: the connection closes after the answer
  T.ok(res.body, "the answer read (the connection: " .. tostring(res.why) .. ")")
  T.match(res.head, "\r\nConnection: close\r\n", "the answer's head")
  T.ok(res.sent < (256 << 20), "the rest of the body not taken")
  T.ok(res.status >= 400, "an error status: " .. tostring(res.status))
  local e = json.decode(res.body)
  T.eq(e.status, "Failed")
  print("     the client's answer: " .. res.status .. " " .. tostring(e.result.rock_code) .. ": " .. tostring(e.error))
  T.eq(srv.raw{ path = "/" }.status, 200, "the server answers")
  T.eq(#leftovers(stmp, "^rock"), 0, "no temp file in the server's $TMPDIR")
  srv.post("stop", { sandbox_id = id })
  local id2, d2 = serve_sandbox()
  T.eq(srv.raw{ method = "PUT", path = file_url(id2, d2 .. "/after"), body = "fine" }.status, 200, "another sandbox")
  serve_done(id2, d2)
end)

T.test("rock serve PUT .../file: a sandbox that dies while the client pauses: the client is answered at once", function()
  -- the client sends 4 MiB of 64 and then nothing (the connection open):
  -- the relay to the rocklet is paused, waiting for bytes; the rocklet is
  -- killed then. The server's watch of the sandbox ends the transfer and
  -- answers sandbox_not_alive within about a second, no byte more sent.
  local id, d = serve_sandbox()
  local name = "paused-" .. id
  local part = 4 << 20
  local t = rock.spawn(function()
    return stream_put(file_url(id, d .. "/" .. name), { size = 64 << 20, stop_after = part, hold = 20,
      answer_ends = true })
  end)
  T.wait_until("the sandbox took the 4 MiB sent", function()
    local w = writers(name)
    return w[1] and w[1].pos >= part
  end, 60)
  rock.sleep(0.3) -- the relay paused: nothing more to send
  local pid = writers(name)[1].pid
  local t0 = uv.hrtime()
  T.sh("kill -KILL " .. pid)
  local res = rock.wait(t)
  T.eq(res.why, "answered", "answered while sending nothing (not held until the client hangs up)")
  local s = (res.answered_at - t0) / 1e9
  print(string.format("     answered %.2f s after the kill: %s", s, tostring(res.status)))
  T.ok(s < 4, "answered within a few seconds of the kill: " .. s)
  T.eq(res.sent, part, "no byte more sent")
  T.ok(res.status >= 400, "an error status: " .. tostring(res.status))
  local e = json.decode(res.body)
  T.eq(e.status, "Failed")
  T.eq(e.result.rock_code, "sandbox_not_alive", tostring(e.error))
  T.ok(not srv.log():find("task failed", 1, true), "no task failed in the server's log (the watch ends quietly)")
  if backend == "local" then -- the host's files: the killed rocklet's part stays (docs/http-api.md)
    local parts = leftovers(d, "^" .. name:gsub("%-", "%%-") .. "%.rock%-tmp%.")
    T.eq(#parts, 1, "the killed rocklet's part beside the path")
    os.remove(d .. "/" .. parts[1])
  end
  T.eq(srv.raw{ path = "/" }.status, 200, "the server answers")
  T.eq(#leftovers(stmp, "^rock"), 0, "no temp file in the server's $TMPDIR")
  srv.post("stop", { sandbox_id = id })
  local id2, d2 = serve_sandbox()
  T.eq(srv.raw{ method = "PUT", path = file_url(id2, d2 .. "/after"), body = "fine" }.status, 200, "another sandbox")
  serve_done(id2, d2)
end)

T.test("the watch of a relayed upload ends with it, even when it ends while the watch asks the backend", function()
  local watch = require("rock.serve.routes")._watch_gone
  local asked, cancelled = 0, 0
  -- a sandbox whose check waits (a container's engine asked) and, as
  -- Sandbox:_check_gone does, catches what the backend raises
  local sb = { id = "fake", state = "running", _check_gone = function()
    asked = asked + 1
    pcall(rock.sleep, 0.4)
  end }
  local t = rock.spawn(function()
    local stop = watch(sb)
    local ok, e = pcall(rock.sleep, 0.7) -- the watch is in its check (0.5 to 0.9)
    if not ok then cancelled = cancelled + 1; error(e, 0) end
    stop()
    local n = asked
    ok = pcall(rock.sleep, 1.5)
    if not ok then cancelled = cancelled + 1 end
    return n
  end)
  local n = rock.wait(t)
  T.eq(n, 1, "asked once while the upload ran")
  T.eq(asked, 1, "never again after the upload ended")
  T.eq(cancelled, 0, "the relaying task never cancelled")
  sb.state = "stopped" -- a watch that sees the sandbox gone cancels the relaying task's wait
  t = rock.spawn(function()
    local stop = watch(sb)
    local ok, e = pcall(rock.sleep, 5)
    stop()
    return ok, e
  end)
  local ok, e = rock.wait(t)
  T.ok(not ok and e.code == "sandbox_not_alive", "sandbox_not_alive: " .. tostring(e and e.message))
end)

T.test("rock serve PUT .../file: 4 uploads at once, each byte-exact, the server's peak memory under 16 MB", function()
  local id, d = serve_sandbox()
  local srcs, want = {}, {}
  for i = 1, 4 do
    srcs[i] = host("many" .. i)
    T.sh(string.format("head -c %d /dev/urandom > '%s'", (48 << 20) + i, srcs[i]))
    want[i] = md5_host(srcs[i])
  end
  local _, server, codes = peak_growth(function()
    local ts = {}
    for i = 1, 4 do
      ts[i] = rock.spawn(function()
        return T.run{ "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-T", srcs[i],
          srv.url .. file_url(id, d .. "/many" .. i) }
      end)
    end
    return { rock.wait(ts) }
  end)
  for i = 1, 4 do
    T.eq(codes[1][i], "200", "upload " .. i)
    T.eq(md5_in(id, d .. "/many" .. i), want[i], "upload " .. i .. " byte-exact")
    os.remove(srcs[i])
  end
  print(string.format("     4 at once: the server's peak memory grew %d KiB", server))
  T.rss_under(server, PEAK, "4 uploads at once: the server's peak memory grew " .. server .. " KiB")
  serve_done(id, d)
end)

T.test("the remote backend: a 2xx answer to an upload that is no Success envelope is an error, not a success", function()
  -- a node that starts sandboxes as rock serve does, and answers PUT .../file with 200 and a word
  local fake = rock.http.serve{ port = 0, handler = function(req)
    local name = req.path:match("/v1/(.*)$")
    local function ok(result) return { headers = { ["Content-Type"] = "application/json" },
      body = json.encode{ status = "Success", result = result } } end
    if name == "start_async" then return ok{ sandbox_id = "fake-1" } end
    if name == "get_status" then return ok{ is_alive = true, state = "running", status = {} } end
    if name == "file" and req.method == "PUT" then return { status = 200, body = "stored" } end
    return ok{}
  end }
  local sb = rock.sandbox.start{ base_url = fake.url, image = "any" }
  local src = host("small")
  T.write(src, "bytes")
  local e = T.raises("http_error", sb.upload, sb, { path = "/tmp/x", file = src })
  T.match(e.message, "no Success envelope")
  os.remove(src)
  sb:stop()
  fake:stop()
end)

-- the refs rock.core holds in the registry (numbered entries that are no
-- free-list links)
local function refs()
  local n = 0
  for k, v in pairs(debug.getregistry()) do
    if math.type(k) == "integer" and type(v) ~= "number" then n = n + 1 end
  end
  return n
end

T.test("core.http_request{relay}: whole, an error answer, a client gone, a cancel; the registry as it was", function()
  local big = string.rep("0123456789abcdef", 1 << 18) -- 4 MiB
  local up = rock.http.serve{ port = 0, handler = function(req)
    if req.path == "/big" then return { headers = { ["Content-Type"] = "application/x-test" }, body = big } end
    if req.path == "/slow" then rock.sleep(5) return { body = "late" } end
    return { status = 404, body = "nope" }
  end }
  local started = {}
  local relay = rock.http.serve{ port = 0, handler = function(req)
    local t = { path = req.path }
    started[#started + 1] = t
    local ok, res = pcall(rock.http.request, { url = up.url .. req.path, relay = req._handle, timeout = 30 })
    t.ok, t.res = ok, res
    if req._handle:answered() then return { status = ok and res.status or 499 } end
    if not ok then error(res, 0) end
    return { status = res.status, body = "upstream said: " .. res.body }
  end }
  collectgarbage()
  local before = refs()
  local r = rock.http.request{ url = relay.url .. "/big" }
  T.eq(r.status, 200)
  T.eq(r.headers["content-type"], "application/x-test", "the upstream's type passed on")
  T.eq(r.headers["content-length"], tostring(#big))
  T.ok(r.body == big, "4 MiB relayed exact")
  r = rock.http.request{ url = relay.url .. "/missing" }
  T.eq(r.status, 404, "an error answer comes back to the handler, the request its to answer")
  T.eq(r.body, "upstream said: nope")
  -- a client gone while the upstream has not answered: the handler is cancelled, its relay with it
  T.raises("timeout", rock.http.request, { url = relay.url .. "/slow", timeout = 0.2 })
  T.wait_until("the relay's handler ended", function() return started[3].ok ~= nil end, 10)
  T.ok(not started[3].ok and rock.errors.is(started[3].res, "cancelled"), "cancelled: " .. tostring(started[3].res))
  -- misuse: a handle answered already
  local e = T.raises("invalid_argument", function()
    local ok, err = pcall(rock.core.http_request, { url = up.url .. "/big", relay = {} }, function() end)
    if not ok then error(rock.errors.new("invalid_argument", tostring(err)), 0) end
  end)
  T.match(e.message, "request handle")
  collectgarbage()
  T.eq(refs(), before, "no ref left in the registry")
  relay:stop()
  up:stop()
end)

srv.stop()
os.execute("rm -rf '" .. stmp .. "' '" .. hostdir .. "'")
if backend == "local" then
  for _, d in ipairs(scratch_dirs) do os.execute("rm -rf '" .. d .. "'") end
end
T.done()
