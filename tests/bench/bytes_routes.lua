-- bytes_routes.lua: the byte routes above the rocklet, timed (issue 18):
-- the Lua API on the local backend, `rock serve` (ROCK's routes and rock's
-- GET .../file, spoken over HTTP as a client that is not rock would), and
-- the remote backend (a sandbox on base_url).   rock bytes_routes.lua DIR R N URL
-- DIR holds f10 (10 MB), t10 (10 MB of text) and f100 (100 MB); R rounds of each, N execute
-- calls; URL is a `rock serve --backend local` already up. Prints
-- "name value unit" lines, each the median of its rounds.
local rock = require "rock"
local json = rock.json
local dir, R, N, url = arg[1], tonumber(arg[2]) or 5, tonumber(arg[3]) or 500, arg[4]
local hr = rock.uv.hrtime
local f10, t10, f100 = dir .. "/f10", dir .. "/t10", dir .. "/f100"
local SEQ_BYTES = 6888896
local MAXO = 16 << 20

local function median(v)
  table.sort(v)
  return v[(#v + 1) // 2]
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
-- us of fn, median over N calls (50 warm-up)
local function time_us(fn)
  for _ = 1, 50 do fn() end
  local v = {}
  for i = 1, N do
    local t = hr()
    fn()
    v[i] = (hr() - t) / 1e3
  end
  return median(v)
end
local function out(name, v, unit) print(string.format("%s %.2f %s", name, v, unit)) end

-- the same figures for a sandbox of the Lua API (in-process or remote)
local function api(prefix, sb)
  out(prefix .. "_read_file_10mb", time_ms(function()
    assert(#sb:read_file{ path = f10, binary = true }.content == 10000000)
  end), "ms")
  out(prefix .. "_read_file_text_10mb", time_ms(function()
    assert(#sb:read_file{ path = t10 }.content == 10000000)
  end), "ms")
  out(prefix .. "_execute_seq", time_ms(function()
    assert(#sb:execute{ command = { "seq", "1000000" }, max_output = MAXO }.stdout == SEQ_BYTES)
  end), "ms")
  sb:create_session{ session = "b" }
  out(prefix .. "_session_seq", time_ms(function()
    assert(#sb:run_in_session{ session = "b", command = "seq 1000000", max_output = MAXO }.output == SEQ_BYTES)
  end), "ms")
  local down = time_ms(function() sb:download{ path = f100, file = dir .. "/down" } end)
  out(prefix .. "_download_100mb", 100 / (down / 1000), "MB/s")
  local up = time_ms(function() sb:upload{ path = dir .. "/up", file = f100 } end)
  out(prefix .. "_upload_100mb", 100 / (up / 1000), "MB/s")
  os.remove(dir .. "/down")
  os.remove(dir .. "/up")
  out(prefix .. "_execute_true", time_us(function() sb:execute{ command = { "true" } } end), "us")
end

local lsb = rock.sandbox.start{ backend = "local" }
api("lua", lsb)
lsb:stop()
local sb = rock.sandbox.start{ base_url = url, image = "local" }
api("remote", sb)

-- rock serve spoken over HTTP: ROCK's JSON routes, rock's raw GET .../file
local P = url .. "/apis/envs/sandbox/v1/"
local H = { ["Content-Type"] = "application/json" }
local function post(name, body)
  local r = rock.http.request{ url = P .. name, method = "POST", body = json.encode(body), headers = H,
    timeout = 120, response_headers = false }
  assert(r.status == 200, name .. " " .. r.status)
  local env = json.decode(r.body)
  assert(env.status == "Success", name .. ": " .. r.body:sub(1, 300))
  return env.result
end
out("serve_get_file_10mb", time_ms(function()
  local r = rock.http.request{ url = P .. "file?sandbox_id=" .. sb.id .. "&path=" .. f10, timeout = 120,
    response_headers = false }
  assert(r.status == 200 and #r.body == 10000000)
end), "ms")
-- 100 MB through rock's GET .../file (relayed as it comes) into a file,
-- and PUT .../file from one (relayed to the sandbox as it comes, nothing
-- stored in the server)
local down = time_ms(function()
  local r = rock.http.request{ url = P .. "file?sandbox_id=" .. sb.id .. "&path=" .. f100, timeout = 120,
    output_file = dir .. "/sdown", response_headers = false }
  assert(r.status == 200)
end)
out("serve_download_100mb", 100 / (down / 1000), "MB/s")
local up = time_ms(function()
  local r = rock.http.request{ url = P .. "file?sandbox_id=" .. sb.id .. "&path=" .. dir .. "/sup", method = "PUT",
    body_file = f100, timeout = 120, response_headers = false }
  assert(r.status == 200)
end)
out("serve_upload_100mb", 100 / (up / 1000), "MB/s")
os.remove(dir .. "/sdown")
os.remove(dir .. "/sup")
out("serve_read_file_b64_10mb", time_ms(function()
  post("read_file", { sandbox_id = sb.id, path = f10, encoding = "base64" })
end), "ms")
out("serve_read_file_text_10mb", time_ms(function()
  assert(#post("read_file", { sandbox_id = sb.id, path = t10 }).content == 10000000)
end), "ms")
out("serve_execute_seq", time_ms(function()
  assert(#post("execute", { sandbox_id = sb.id, command = { "seq", "1000000" }, max_output = MAXO }).stdout
    == SEQ_BYTES)
end), "ms")
out("serve_session_seq", time_ms(function()
  assert(#post("run_in_session", { sandbox_id = sb.id, session = "b", command = "seq 1000000",
    max_output = MAXO }).output == SEQ_BYTES)
end), "ms")
out("serve_execute_true", time_us(function() post("execute", { sandbox_id = sb.id, command = { "true" } }) end),
  "us")
sb:stop()
