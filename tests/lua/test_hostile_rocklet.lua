-- test_hostile_rocklet.lua: regressions from the hostile round on issue 7
-- against a real rocklet, straight over HTTP (the C side of each fix is
-- tested in tests/rocklet and tests/http; this is the wire a foreign client
-- such as ROCK's SDK speaks, with JSON text rather than base64).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local json = rock.json

local sb = rock.sandbox.start{ backend = "local" }
local dir = os.tmpname()
os.remove(dir)
sb:execute{ command = { "mkdir", "-p", dir } }

local function post(path, body)
  local r = rock.http.request{ url = "http://rocklet" .. path, unix_socket = sb.socket,
    method = "POST", body = body, timeout = 20 }
  return r.status, json.decode(r.body)
end

-- JSON text is built by hand: \u0000 is valid JSON, whatever an encoder does
local function q(s) return '"' .. s .. '"' end

T.test("issue 7 hostile (18): write_file text with \\u0000 lands byte for byte", function()
  local path = dir .. "/nul.bin"
  local st, r = post("/write_file", '{"path":' .. q(path) .. ',"content":"a\\u0000b\\u0000"}')
  T.eq(st, 200, "status " .. json.encode(r))
  T.eq(sb:read_file{ path = path, binary = true }.content, "a\0b\0")
end)

T.test("issue 7 hostile (18): a command with \\u0000 runs (bash drops the NUL)", function()
  sb:create_session{ session = "n" }
  local st, r = post("/run_in_session", '{"session":"n","command":"echo x\\u0000y"}')
  T.eq(st, 200)
  T.eq(r.output, "xy\n")
  sb:close_session{ session = "n" }
end)

T.test("issue 7 hostile (18): \\u0000 in a path, name or argv is refused, not cut", function()
  local cases = {
    { "/read_file", '{"path":"/etc/hostname\\u0000junk"}' },
    { "/write_file", '{"path":' .. q(dir .. "/cut\\u0000x") .. ',"content":"x"}' },
    { "/create_session", '{"session":"a\\u0000b"}' },
    { "/execute", '{"command":["echo","a\\u0000b"]}' },
    { "/execute", '{"command":"echo a\\u0000b"}' },
    { "/create_session", '{"session":"e","env":{"A":"1\\u00002"}}' },
  }
  for _, c in ipairs(cases) do
    local st, r = post(c[1], c[2])
    T.eq(st, 400, c[1] .. " " .. c[2])
    T.eq(r.code, "invalid_argument", c[1] .. " " .. c[2])
    T.match(r.message, "NUL")
  end
  T.eq(sb:execute{ command = { "ls", dir } }.stdout, "nul.bin\n") -- no "cut" file
end)

T.test("issue 7 hostile: write_file and upload never replace a FIFO (or a device)", function()
  -- /dev/zero on this machine was found replaced by a 1-byte regular file
  -- (write_file renames its temp file over the target); a FIFO stands in
  local fifo = dir .. "/fifo"
  sb:execute{ command = { "mkfifo", fifo } }
  T.raises("invalid_argument", sb.write_file, sb, { path = fifo, content = "c" })
  local r = rock.http.request{ url = "http://rocklet/upload?path=" .. fifo, unix_socket = sb.socket,
    method = "POST", body = "c", timeout = 10 }
  T.eq(r.status, 400)
  T.eq(json.decode(r.body).code, "invalid_argument")
  T.eq(sb:execute{ command = { "test", "-p", fifo } }.exit_code, 0, "still a FIFO")
  sb:execute{ command = { "rm", fifo } }
end)

sb:execute{ command = { "rm", "-rf", dir } }
sb:stop()
T.done()
