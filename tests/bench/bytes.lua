-- bytes.lua: the rocklet's byte routes timed from a Lua client (rock.http
-- on the rocklet's socket, the local backend's rocklet), with the JSON
-- routes beside them (a session's run too).   rock bytes.lua DIR R N
-- DIR holds f10 (10 MB) and f100 (100 MB); R rounds of each, N execute
-- calls. Prints "name value unit" lines, each the median of its rounds.
local rock = require "rock"
local rocklet = require "rock.rocklet"
local json = rock.json
local dir, R, N = arg[1], tonumber(arg[2]) or 5, tonumber(arg[3]) or 500
local sb = rock.sandbox.start{ backend = "local" }
local hr = rock.uv.hrtime

local function median(v)
  table.sort(v)
  return v[(#v + 1) // 2]
end

local function http(path, method, body, headers)
  local r = rock.http.request{ url = "http://rocklet" .. path, unix_socket = sb.socket,
    method = method, body = body, headers = headers, timeout = 120,
    response_headers = headers ~= nil }
  assert(r.status == 200, path .. " " .. r.status .. " " .. r.body:sub(1, 200))
  return r
end

-- ms of fn, median over R rounds (one warm-up)
local function time_ms(fn)
  fn()
  local v = {}
  for i = 1, R do
    local t = hr()
    fn()
    v[i] = (hr() - t) / 1e6
  end
  return median(v)
end

local function out(name, v, unit) print(string.format("%s %.2f %s", name, v, unit)) end

local raw = { Accept = "application/octet-stream" }
local f10, f100 = dir .. "/f10", dir .. "/f100"

out("get_file_10mb", time_ms(function()
  assert(#http("/file?path=" .. f10, "GET").body == 10000000)
end), "ms")
out("read_file_json_10mb", time_ms(function()
  http("/read_file", "POST", json.encode{ path = f10, encoding = "base64" })
end), "ms")
local seq = json.encode{ command = { "seq", "1000000" }, max_output = 16 << 20 }
out("execute_raw_seq", time_ms(function()
  assert(#http("/execute", "POST", seq, raw).body == 6888896)
end), "ms")
out("execute_json_seq", time_ms(function()
  http("/execute", "POST", seq)
end), "ms")
sb:create_session{ session = "b" }
local sseq = json.encode{ session = "b", command = "seq 1000000", max_output = 16 << 20 }
out("session_raw_seq", time_ms(function()
  assert(#http("/run_in_session", "POST", sseq, raw).body == 6888896)
end), "ms")
out("session_json_seq", time_ms(function()
  http("/run_in_session", "POST", sseq)
end), "ms")
local big = assert(io.open(f100, "rb")):read("a")
local up = time_ms(function() http("/file?path=" .. dir .. "/up", "PUT", big) end)
out("upload_100mb", 100 / (up / 1000), "MB/s")
local down = time_ms(function()
  assert(#http("/file?path=" .. f100, "GET").body == 100000000)
end)
out("download_100mb", 100 / (down / 1000), "MB/s")
os.remove(dir .. "/up")

local t = json.encode{ command = { "true" } }
for _ = 1, 50 do http("/execute", "POST", t) end
local v = {}
for i = 1, N do
  local t0 = hr()
  http("/execute", "POST", t)
  v[i] = (hr() - t0) / 1e3
end
out("execute_true", median(v), "us")
sb:stop()
