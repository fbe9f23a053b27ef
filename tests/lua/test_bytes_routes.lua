-- test_bytes_routes.lua: a file's bytes through every route above the
-- rocklet (issue 18; test_bytes.lua is the rocklet itself): the Lua API
-- on this run's backend, `rock serve` over HTTP (rock's GET/PUT .../file,
-- ROCK's read_file), and the remote backend (a sandbox on base_url).
-- Bytes that are not UTF-8 (all 256 values), a 0-byte and a 1-byte file,
-- a file larger than read_file's and the server's 32 MiB bounds, a
-- missing file (a clear error, no host file made), a download cancelled
-- midway (no partial file on the host, none in the server's $TMPDIR, the
-- sandbox usable), a 1 GB file streamed down (local backend). On the
-- local backend by default; ROCK_TEST_BACKEND and
-- ROCK_TEST_IMAGE run it in docker and podman (tests/CMakeLists.txt).
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

local ALL = {}
for i = 0, 255 do ALL[#ALL + 1] = string.char(i) end
ALL = table.concat(ALL):rep(64) .. "\xff\xfe\xc3" -- 16 KiB and a cut UTF-8 sequence at the end
local BIG = 40 << 20 -- past read_file's 32 MiB and the server's max_body (32 MiB)

local function host(name) return hostdir .. "/" .. name end
local function read_host(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end
local function md5_host(path) return T.sh("md5sum < '" .. path .. "'"):match("%x+") end
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

-- a scratch directory in the sandbox, by a command (a remote sandbox's dir is not ours)
local function scratch(sb)
  local d = "/tmp/rock-br-" .. sb.id
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
    sb:execute{ command = { "rm", "-rf", d } }
    sb:stop()
  end)

  T.test(name .. ": a 40 MB file goes up and down whole; read_file refuses it, pointing at download", function()
    local sb = start()
    local d = scratch(sb)
    local src, dst = host("big"), host("big.out")
    local _, made = T.sh(string.format("head -c %d /dev/urandom > '%s'", BIG, src))
    T.ok(made, "the file is made")
    local want = md5_host(src)
    sb:upload{ path = d .. "/big", file = src }
    T.eq(sb:execute{ command = { "sh", "-c", "md5sum < " .. d .. "/big" } }.stdout:match("%x+"), want, "uploaded")
    collectgarbage()
    local before = T.rss_kib()
    T.eq(sb:download{ path = d .. "/big", file = dst }.size, BIG)
    local grown = T.rss_kib() - before
    T.eq(md5_host(dst), want, "downloaded")
    T.rss_under(grown, 16 * 1024, "the download was streamed (RSS grew " .. grown .. " KiB)")
    local e = T.raises("invalid_argument", sb.read_file, sb, { path = d .. "/big", binary = true })
    T.match(e.message, "larger than 32 MiB: download it")
    os.remove(src)
    os.remove(dst)
    sb:execute{ command = { "rm", "-rf", d } }
    sb:stop()
  end)

  if backend == "local" then -- the engines' runs already move 40 MB and 256 MB each way
    T.test(name .. ": a 1 GB file streams down whole, the host's RSS growing under 16 MB", function()
      local sb = start()
      local d = scratch(sb)
      sb:execute{ command = { "truncate", "-s", "1G", d .. "/giga" } }
      local dst = host("giga")
      collectgarbage()
      local before = T.rss_kib()
      T.eq(sb:download{ path = d .. "/giga", file = dst, timeout = 300 }.size, 1 << 30)
      local grown = T.rss_kib() - before
      T.eq(T.file_size(dst), 1 << 30, "the whole file on the host")
      T.rss_under(grown, 16 * 1024, "1 GB streamed (RSS grew " .. grown .. " KiB)")
      os.remove(dst)
      T.wait_until("nothing left in the server's $TMPDIR", function() return #leftovers(stmp, "^rock") == 0 end, 30)
      sb:execute{ command = { "rm", "-rf", d } }
      sb:stop()
    end)
  end

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
  local d = "/tmp/rock-br-" .. id
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
  -- a body past the server's max_body (32 MiB) goes in: it is streamed to a file
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
  T.eq(#leftovers(stmp, "^rock"), 0, "no temp file left in the server's $TMPDIR")
  srv.post("execute", { sandbox_id = id, command = { "rm", "-rf", d } })
  srv.post("stop", { sandbox_id = id })
end)

srv.stop()
os.execute("rm -rf '" .. stmp .. "' '" .. hostdir .. "'")
T.done()
