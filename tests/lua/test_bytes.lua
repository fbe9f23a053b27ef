-- test_bytes.lua: the rocklet's raw byte routes (issue 18), straight over
-- its socket with rock.http: GET/HEAD/PUT /file (exact bytes, ranges,
-- streamed both ways) and /execute answered raw (Accept:
-- application/octet-stream). Byte-exact round trips (all 256 byte values,
-- 0 bytes, 1 byte, 100 MB), ranges at and past the end, a 1 GB sparse file
-- streamed with the rocklet's memory flat, clients that go away mid-stream.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local json = rock.json
local uv = rock.uv
local rocklet = require "rock.rocklet"

local sb = rock.sandbox.start{ backend = "local" }
local dir = T.scratch(sb)
local pid = rocklet.call(sb.socket, "/is_alive", {}, 30).pid

local function urlencode(s)
  return (s:gsub("[^%w%-._~/]", function(c) return string.format("%%%02X", c:byte()) end))
end

local function req(method, path, opts)
  opts = opts or {}
  return rock.http.request{ url = "http://rocklet/file?path=" .. urlencode(path),
    unix_socket = sb.socket, method = method, body = opts.body, headers = opts.headers,
    timeout = 60 }
end

local function put(path, bytes)
  local r = req("PUT", path, { body = bytes })
  T.eq(r.status, 200, "PUT " .. path .. ": " .. r.body)
  return json.decode(r.body)
end

local function temps(d)
  return sb:execute{ command = "ls -A '" .. d .. "' | grep -c rock-tmp" }.stdout
end

local function status_kib(field)
  for line in io.lines("/proc/" .. pid .. "/status") do
    local kb = line:match("^" .. field .. ":%s+(%d+)")
    if kb then return tonumber(kb) end
  end
end

local function fds()
  return #T.listdir("/proc/" .. pid .. "/fd")
end

T.test("PUT then GET /file: every byte value, 0 bytes, 1 byte, exactly", function()
  local all = {}
  for i = 0, 255 do all[#all + 1] = string.char(i) end
  all = table.concat(all)
  for _, bytes in ipairs{ all, all:rep(257), "", "\0", "\255" } do
    local path = dir .. "/deep er/b ü.bin"
    local a = put(path, bytes)
    T.eq(a.success, true)
    T.eq(a.message, "wrote " .. #bytes .. " bytes to " .. path)
    local r = req("GET", path)
    T.eq(r.status, 200)
    T.eq(r.headers["content-type"], "application/octet-stream")
    T.eq(r.headers["content-length"], tostring(#bytes))
    T.eq(r.body, bytes)
    local h = req("HEAD", path)
    T.eq(h.status, 200)
    T.eq(h.headers["content-length"], tostring(#bytes))
    T.eq(h.body, "")
  end
  T.eq(temps(dir .. "/deep er"), "0\n")
end)

T.test("100 MB round trip through PUT and GET /file, byte for byte", function()
  local chunk = {}
  for i = 0, 65535 do chunk[#chunk + 1] = string.char((i * 7 + (i >> 8)) % 256) end
  chunk = table.concat(chunk)
  local big = chunk:rep(100 * 1000 * 1000 // #chunk) .. chunk:sub(1, 100 * 1000 * 1000 % #chunk)
  T.eq(#big, 100000000)
  put(dir .. "/big.bin", big)
  T.eq(T.file_size(dir .. "/big.bin"), 100000000)
  local r = req("GET", dir .. "/big.bin")
  T.eq(r.status, 200)
  T.ok(r.body == big, "the same 100 MB back")
  os.remove(dir .. "/big.bin")
end)

T.test("ranges: a-b, a-, -n, at and past the end", function()
  local path = dir .. "/ten"
  put(path, "0123456789")
  local function range(spec)
    return req("GET", path, { headers = { Range = spec } })
  end
  local cases = { -- spec, status, body, Content-Range
    { "bytes=2-4", 206, "234", "bytes 2-4/10" },
    { "bytes=7-", 206, "789", "bytes 7-9/10" },
    { "bytes=-3", 206, "789", "bytes 7-9/10" },
    { "bytes=-30", 206, "0123456789", "bytes 0-9/10" },
    { "bytes=9-9", 206, "9", "bytes 9-9/10" },
    { "bytes=8-100", 206, "89", "bytes 8-9/10" },
    { "bytes=0-", 206, "0123456789", "bytes 0-9/10" },
    { "bytes=10-", 416, nil, "bytes */10" }, -- at the end
    { "bytes=10-20", 416, nil, "bytes */10" },
    { "bytes=99-", 416, nil, "bytes */10" }, -- past it
    { "bytes=-0", 416, nil, "bytes */10" },
    { "bytes=5-2", 200, "0123456789" }, -- invalid: ignored, the whole file
    { "bytes=0-1,4-5", 200, "0123456789" }, -- several: the whole file
    { "items=0-1", 200, "0123456789" },
    { "bytes=99999999999999999999-", 200, "0123456789" }, -- past 2^63: junk, ignored
    { "bytes= 3-3 ", 206, "3", "bytes 3-3/10" },
  }
  for _, c in ipairs(cases) do
    local r = range(c[1])
    T.eq(r.status, c[2], c[1])
    if c[3] then T.eq(r.body, c[3], c[1]) end
    T.eq(r.headers["content-range"], c[4], c[1])
    if c[2] == 416 then
      T.eq(json.decode(r.body).code, "invalid_argument", c[1])
    end
  end
  put(path, "")
  T.eq(range("bytes=0-").status, 416, "any range of an empty file")
  T.eq(range("bytes=0-").headers["content-range"], "bytes */0")
end)

T.test("ranges past 4 GiB in a sparse 5 GiB file (64-bit offsets)", function()
  local path = dir .. "/five"
  T.sh("truncate -s 5G '" .. path .. "' && printf ABCD | dd of='" .. path
    .. "' bs=1 seek=4294967296 conv=notrunc status=none && printf WXYZ | dd of='" .. path
    .. "' bs=1 seek=5368709116 conv=notrunc status=none")
  local r = req("GET", path, { headers = { Range = "bytes=4294967296-4294967299" } })
  T.eq(r.status, 206)
  T.eq(r.body, "ABCD")
  T.eq(r.headers["content-range"], "bytes 4294967296-4294967299/5368709120")
  r = req("GET", path, { headers = { Range = "bytes=-4" } })
  T.eq(r.body, "WXYZ")
  T.eq(req("HEAD", path).headers["content-length"], "5368709120")
  T.eq(req("GET", path, { headers = { Range = "bytes=5368709120-" } }).status, 416)
  os.remove(path)
end)

T.test("GET /file errors are the rocklet's JSON", function()
  local function err(method, path, status, code)
    local r = req(method, path)
    T.eq(r.status, status, method .. " " .. path)
    T.eq(json.decode(r.body).code, code, method .. " " .. path)
  end
  err("GET", dir .. "/nope", 404, "not_found")
  err("GET", dir, 400, "invalid_argument")      -- a directory
  err("GET", "/dev/null", 400, "invalid_argument") -- a device
  sb:execute{ command = { "mkfifo", dir .. "/fifo" } }
  err("GET", dir .. "/fifo", 400, "invalid_argument") -- never blocks
  err("DELETE", dir .. "/nope", 405, "bad_request")
  local r = rock.http.request{ url = "http://rocklet/file", unix_socket = sb.socket }
  T.eq(r.status, 400)
  T.eq(json.decode(r.body).code, "invalid_argument")
  r = rock.http.request{ url = "http://rocklet/file", unix_socket = sb.socket, method = "PUT",
    body = "x" }
  T.eq(r.status, 400)
  -- a NUL in the path is refused, never cut short (to name another file)
  put(dir .. "/whole", "whole")
  for _, m in ipairs{ "GET", "PUT" } do
    r = rock.http.request{ url = "http://rocklet/file?path=" .. urlencode(dir .. "/whole") .. "%00x",
      unix_socket = sb.socket, method = m, body = m == "PUT" and "new" or nil }
    T.eq(r.status, 400, m)
    T.eq(json.decode(r.body).code, "invalid_argument", m)
  end
  T.eq(req("GET", dir .. "/whole").body, "whole")
  -- a symlink is read through, as /read_file reads it
  sb:execute{ command = { "ln", "-sf", dir .. "/whole", dir .. "/link" } }
  T.eq(req("GET", dir .. "/link").body, "whole")
end)

T.test("a 1 GB sparse file streams with the rocklet's memory flat", function()
  local path = dir .. "/sparse"
  T.sh("truncate -s 1G '" .. path .. "'")
  local before = status_kib("VmRSS")
  -- curl writes to a pipe as it reads: the rocklet can only send as fast
  local out = T.sh("curl -sS --unix-socket '" .. sb.socket .. "' 'http://rocklet/file?path="
    .. urlencode(path) .. "' | wc -c")
  T.eq(out, "1073741824\n")
  local hwm = status_kib("VmHWM")
  print(string.format("     rocklet RSS %d KiB before, peak %d KiB after 1 GiB", before, hwm))
  T.rss_under(hwm - before, 16 * 1024, "peak RSS grew by less than 16 MiB")
  os.remove(path)
end)

-- a raw client on the socket: send bytes, read n bytes of the answer (or
-- none), then hang up
local function hang_up_after(bytes, want)
  local p = uv.new_pipe(false)
  local got, done = 0, false
  p:connect(sb.socket, function(e)
    assert(not e, e)
    p:write(bytes)
    if want == 0 then
      done = true
      return
    end
    p:read_start(function(_, data)
      if data then got = got + #data end
      if not data or got >= want then
        p:read_stop()
        done = true
      end
    end)
  end)
  T.wait_until("the raw client is done", function() return done end, 20)
  p:close()
  return got
end

T.test("a client gone mid-download leaves the rocklet serving, its fd closed", function()
  sb:create_session{ session = "mid" }
  local path = dir .. "/sparse"
  T.sh("truncate -s 1G '" .. path .. "'")
  local n = fds()
  local got = hang_up_after("GET /file?path=" .. urlencode(path) .. " HTTP/1.1\r\nHost: r\r\n\r\n",
    1 << 20)
  T.ok(got >= 1 << 20, "it began")
  T.wait_until("the file's fd is closed", function() return fds() == n end, 10)
  T.eq(rocklet.call(sb.socket, "/is_alive", {}, 10).is_alive, true)
  local r = req("GET", path, { headers = { Range = "bytes=-4" } })
  T.eq(r.body, "\0\0\0\0")
  T.eq(sb:run_in_session{ session = "mid", command = "echo usable" }.output, "usable\n")
  sb:close_session{ session = "mid" }
  os.remove(path)
end)

T.test("a client gone mid-upload leaves no temp file and the rocklet serving", function()
  local path = dir .. "/cut/partial.bin"
  hang_up_after("PUT /file?path=" .. urlencode(path) .. " HTTP/1.1\r\nHost: r\r\n"
    .. "Content-Length: 100000000\r\n\r\n" .. ("x"):rep(1 << 20), 0)
  T.wait_until("the upload began", function()
    return sb:execute{ command = { "test", "-d", dir .. "/cut" } }.exit_code == 0
  end, 10)
  T.wait_until("the temp file is gone", function() return temps(dir .. "/cut") == "0\n" end, 10)
  T.eq(sb:execute{ command = { "test", "-e", path } }.exit_code, 1)
  T.eq(rocklet.call(sb.socket, "/is_alive", {}, 10).is_alive, true)
  sb:create_session{ session = "up" }
  T.eq(sb:run_in_session{ session = "up", command = "echo usable" }.output, "usable\n")
  sb:close_session{ session = "up" }
end)

local function execute_raw(body)
  local r = rock.http.request{ url = "http://rocklet/execute", unix_socket = sb.socket,
    method = "POST", body = json.encode(body), timeout = 60,
    headers = { Accept = "application/octet-stream" } }
  local n = tonumber(r.headers["x-stdout-length"])
  return r, n and r.body:sub(1, n), n and r.body:sub(n + 1)
end

T.test("/execute answered raw: stdout then stderr, uncleaned, the rest in headers", function()
  local r, out, err = execute_raw{ command = { "sh", "-c",
    [[printf 'a\377\r\n\033[1mb\0'; printf 'e\r\n' >&2; exit 3]] } }
  T.eq(r.status, 200)
  T.eq(r.headers["content-type"], "application/octet-stream")
  T.eq(out, "a\255\r\n\27[1mb\0")
  T.eq(err, "e\r\n")
  T.eq(r.headers["x-exit-code"], "3")
  T.eq(r.headers["x-failure-reason"], "")
  T.eq(r.headers["x-stdout-dropped"], "0")
  -- seq 1000000 whole, byte for byte
  r, out, err = execute_raw{ command = { "seq", "1000000" }, max_output = 16 << 20 }
  local want = {}
  for i = 1, 1000000 do want[i] = i end
  T.ok(out == table.concat(want, "\n") .. "\n", "seq's 6.9 MB exactly")
  T.eq(err, "")
  -- past max_output: head and tail joined, the count in a header
  r, out = execute_raw{ command = { "head", "-c", "10000", "/dev/zero" }, max_output = 1000 }
  T.eq(#out, 1000)
  T.eq(r.headers["x-stdout-dropped"], "9000")
  -- a timeout, and errors stay JSON
  r = execute_raw{ command = { "sleep", "5" }, timeout = 0.2 }
  T.eq(r.headers["x-failure-reason"], "timeout")
  T.eq(r.headers["x-exit-code"], "137")
  r = execute_raw{ command = { "no-such-command-here" } }
  T.eq(r.status, 500)
  T.eq(json.decode(r.body).code, "spawn_failed")
end)

T.test("raw output scrubbed by rock.core.output_clean is the JSON route's text, corpus-exact", function()
  local data = T.sh("realpath '" .. arg[0]:match("(.*/)") .. "../rocklet/data/scrub'")
    :gsub("\n$", "") .. "/" -- the rocklet's cwd is not ours
  local n = 0
  for _, name in ipairs(T.listdir(data)) do
    local base = name:match("^(.*)%.in$")
    if base then
      n = n + 1
      local _, raw = execute_raw{ command = { "cat", data .. name } }
      T.eq(raw, T.read(data .. name), base .. " raw is the bytes")
      local text = sb:execute{ command = { "cat", data .. name } }.stdout
      T.eq(rock.core.output_clean(raw), text, base .. " scrubbed as the JSON route")
      T.eq(text, T.read(data .. base .. ".out"), base .. " as the corpus says")
    end
  end
  T.ok(n >= 20, "the corpus is there")
  local s = "plain"
  T.ok(rock.core.output_clean(s) == s)
end)

T.test("/execute argv is spawned directly (vfork + execve): execvp's rules kept", function()
  local bin = dir .. "/bin"
  sb:execute{ command = { "mkdir", "-p", bin } }
  T.write(bin .. "/hi", "#!/bin/sh\necho hi \"$@\" from \"$PWD\"\n")
  T.write(bin .. "/noshebang", "echo no shebang $1\n") -- ENOEXEC: run by /bin/sh
  T.write(bin .. "/noexec", "#!/bin/sh\necho never\n")
  sb:execute{ command = { "chmod", "+x", bin .. "/hi", bin .. "/noshebang" } }
  -- the PATH searched is the one env gives, relative to cwd
  local r = sb:execute{ command = { "hi", "a b" }, env = { PATH = bin .. ":/usr/bin:/bin" },
    cwd = "/" }
  T.eq(r.stdout, "hi a b from /\n")
  T.eq(sb:execute{ command = { "noshebang", "x" }, env = { PATH = bin } }.stdout,
    "no shebang x\n")
  T.eq(sb:execute{ command = { "./hi" }, cwd = bin }.stdout, "hi from " .. bin .. "\n")
  T.eq(sb:execute{ command = { "sh", "-c", "echo $A$B" }, env = { A = "1", B = "2" } }.stdout,
    "12\n")
  -- not executable (EACCES), not found, a bad cwd: spawn_failed
  T.raises("spawn_failed", sb.execute, sb, { command = { "noexec" }, env = { PATH = bin } })
  T.raises("spawn_failed", sb.execute, sb, { command = { bin .. "/noexec" } })
  T.raises("spawn_failed", sb.execute, sb, { command = { "hi" }, env = { PATH = "/nonexistent" } })
  T.raises("spawn_failed", sb.execute, sb, { command = { "true" }, cwd = dir .. "/nope" })
  -- its own session, stdin /dev/null, signals at their defaults
  r = sb:execute{ command = { "sh", "-c",
    "ps -o sid= -p $$ | tr -d ' '; echo $$; cat; grep SigIgn /proc/$$/status" } }
  local sid, pid_, rest = r.stdout:match("^(%d+)\n(%d+)\n(.*)$")
  T.eq(sid, pid_, "a session of its own")
  T.eq(rest, "SigIgn:\t0000000000000000\n")
end)

local function run_raw(body)
  local r = rock.http.request{ url = "http://rocklet/run_in_session", unix_socket = sb.socket,
    method = "POST", body = json.encode(body), timeout = 60,
    headers = { Accept = "application/octet-stream" } }
  return r, r.body
end

T.test("/run_in_session answered raw: the output's bytes, the rest in headers", function()
  sb:create_session{ session = "raw" }
  local r, out = run_raw{ session = "raw", command = [[printf 'a\377\r\n\033[1mb\0'; false]] }
  T.eq(r.status, 200)
  T.eq(r.headers["content-type"], "application/octet-stream")
  T.eq(out, "a\255\r\n\27[1mb\0")
  T.eq(r.headers["x-exit-code"], "1")
  T.eq(r.headers["x-failure-reason"], "")
  T.eq(r.headers["x-truncated"], "0")
  T.eq(r.headers["x-output-file"], nil)
  -- bash's messages about the command file read as for typed input, raw too
  _, out = run_raw{ session = "raw", command = "if" }
  T.match(out, "^bash: line %d+: syntax error")
  T.eq(out, sb:run_in_session{ session = "raw", command = "if" }.output, "as the JSON route's")
  -- seq 1000000 whole
  _, out = run_raw{ session = "raw", command = "seq 1000000", max_output = 16 << 20 }
  local want = {}
  for i = 1, 1000000 do want[i] = i end
  T.ok(out == table.concat(want, "\n") .. "\n", "6.9 MB exactly")
  -- past max_output: head and tail joined; the whole in the file, named URL-encoded
  r, out = run_raw{ session = "raw", command = "seq 100000", max_output = 1000 }
  T.eq(#out, 1000)
  T.eq(r.headers["x-truncated"], "1")
  T.eq(tonumber(r.headers["x-dropped-bytes"]) + 1000, tonumber(r.headers["x-output-bytes"]))
  local f = r.headers["x-output-file"]:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
  T.ok(req("GET", f).body == table.concat(want, "\n", 1, 100000) .. "\n", "the spill whole")
  -- the session's end, raw: the exit code in its header; then not found (JSON)
  r, out = run_raw{ session = "raw", command = "exit 3" }
  T.eq(r.headers["x-failure-reason"], "session_ended")
  T.eq(r.headers["x-exit-code"], "3")
  T.eq(out, "")
  r = run_raw{ session = "raw", command = "true" }
  T.eq(r.status, 404)
  T.eq(json.decode(r.body).code, "session_not_found")
end)

T.test("/execute and /run_in_session answered as text: the JSON answer's strings byte for byte, no JSON", function()
  local TEXT = { Accept = "text/plain" }
  local function both(path, body)
    local j = rock.http.request{ url = "http://rocklet" .. path, unix_socket = sb.socket, method = "POST",
      body = json.encode(body), timeout = 60 }
    local t = rock.http.request{ url = "http://rocklet" .. path, unix_socket = sb.socket, method = "POST",
      body = json.encode(body), timeout = 60, headers = TEXT }
    T.eq(t.headers["content-type"], "text/plain; charset=utf-8", path)
    return json.decode(j.body), t
  end
  for _, c in ipairs({
    { command = { "sh", "-c", [[printf 'a\377\r\n\033[1mb\0 "q" \\'; printf 'e\377\r\n' >&2; exit 3]] } },
    { command = { "seq", "100000" }, max_output = 1000 }, -- the drop note
    { command = { "sh", "-c", "seq 3000 >&2" }, max_output = 100 },
    { command = { "sleep", "5" }, timeout = 0.2 },
  }) do
    local j, t = both("/execute", c)
    local n = tonumber(t.headers["x-stdout-length"])
    T.ok(t.body:sub(1, n) == j.stdout, "stdout as JSON's")
    T.ok(t.body:sub(n + 1) == j.stderr, "stderr as JSON's")
    T.eq(tonumber(t.headers["x-exit-code"]), j.exit_code)
    T.eq(t.headers["x-failure-reason"], j.failure_reason)
  end
  sb:create_session{ session = "txt1" }
  sb:create_session{ session = "txt2" }
  for _, c in ipairs({ [[printf 'a\377\r\n\033[1mb\0'; false]], "seq 100000", "if", "sleep 5", "exit 4" }) do
    local body = { command = c, max_output = 1000, timeout = c == "sleep 5" and 0.2 or nil }
    body.session = "txt1"
    local j = json.decode(rock.http.request{ url = "http://rocklet/run_in_session", unix_socket = sb.socket,
      method = "POST", body = json.encode(body), timeout = 60 }.body)
    body.session = "txt2"
    local t = rock.http.request{ url = "http://rocklet/run_in_session", unix_socket = sb.socket, method = "POST",
      body = json.encode(body), timeout = 60, headers = TEXT }
    T.eq(t.headers["content-type"], "text/plain; charset=utf-8")
    local a, b = j.output, t.body
    if j.output_file ~= json.null then -- the spill's name is the session's own
      a, b = a:gsub("full output: %S+", ""), b:gsub("full output: %S+", "")
      T.match(t.headers["x-output-file"], "/out%.%d+$")
    end
    T.ok(a == b, c .. ": the output as JSON's")
    T.eq(tonumber(t.headers["x-exit-code"]), j.exit_code ~= json.null and j.exit_code or nil, c)
    T.eq(t.headers["x-failure-reason"], j.failure_reason, c)
    T.eq(t.headers["x-truncated"], j.truncated and "1" or "0", c)
    T.eq(tonumber(t.headers["x-dropped-bytes"]), j.dropped_bytes, c)
  end
end)

T.test("a spilled session output is read whole through GET /file", function()
  sb:create_session{ session = "s" }
  local a = sb:run_in_session{ session = "s", command = "seq 100000", max_output = 1000 }
  T.ok(a.output_file, "spilled")
  local r = req("GET", a.output_file)
  local want = {}
  for i = 1, 100000 do want[i] = i end
  T.ok(r.body == table.concat(want, "\n") .. "\n", "the full output")
  sb:close_session{ session = "s" }
end)

sb:stop()
T.done()
