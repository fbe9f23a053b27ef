-- test_rocklet_api.lua: bad input to every rocklet endpoint, straight over
-- HTTP: a clear {code, message} answer, nothing changed, rocklet still up.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local json = rock.json

local sb = rock.sandbox.start{ backend = "local" }
sb:create_session{ session = "keep" }
sb:run_in_session{ session = "keep", command = "export KEPT=1" }

local function post(path, body)
  local r = rock.http.request{ url = "http://rocklet" .. path, unix_socket = sb.socket,
    method = "POST", body = body, timeout = 10 }
  return r.status, json.decode(r.body)
end

local endpoints = { "/create_session", "/run_in_session", "/close_session", "/interrupt",
  "/execute", "/read_file", "/write_file" }

T.test("malformed JSON is a 400 bad_request on every endpoint", function()
  for _, ep in ipairs(endpoints) do
    for _, body in ipairs({ "{bad", "[1,2]", "\"str\"", "{\"a\":", "\255\254" }) do
      local st, r = post(ep, body)
      T.eq(st, 400, ep .. " status")
      T.eq(r.code, "bad_request", ep .. " " .. body)
      T.ok(#r.message > 0, "message")
    end
  end
end)

T.test("missing or mistyped fields are invalid_argument", function()
  local cases = {
    { "/run_in_session", { session = "keep" } },
    { "/run_in_session", { session = "keep", command = 1 } },
    { "/run_in_session", { session = "keep", command = "true", timeout = "x" } },
    { "/run_in_session", { session = "keep", command = "true", timeout = -1 } },
    { "/create_session", { session = 5 } },
    { "/create_session", { session = "" } },
    { "/create_session", { session = "x", env = "notatable" } },
    { "/create_session", { session = "x", startup_source = "notalist" } },
    { "/execute", {} },
    { "/execute", { command = json.decode("[]") } },
    { "/execute", { command = { 1, 2 } } },
    { "/read_file", {} },
    { "/write_file", { path = "/tmp/x" } },
    { "/write_file", { content = "x" } },
    { "/close_session", { session = 3 } },
  }
  for _, c in ipairs(cases) do
    local st, r = post(c[1], json.encode(c[2]))
    T.eq(st, 400, c[1] .. " " .. json.encode(c[2]))
    T.eq(r.code, "invalid_argument", c[1] .. " " .. json.encode(c[2]))
  end
end)

T.test("unknown sessions are session_not_found (404)", function()
  for _, ep in ipairs({ "/run_in_session", "/close_session", "/interrupt" }) do
    local st, r = post(ep, json.encode({ session = "ghost", command = "true" }))
    T.eq(st, 404, ep)
    T.eq(r.code, "session_not_found", ep)
  end
end)

T.test("unknown endpoint is not_found; empty body is ok for is_alive", function()
  local st, r = post("/nope", "{}")
  T.eq(st, 404)
  T.eq(r.code, "not_found")
  st, r = post("/is_alive", nil)
  T.eq(st, 200)
  T.eq(r.is_alive, true)
end)

T.test("garbage on the socket is answered and the rocklet stays up", function()
  local uv = rock.uv
  local pipe = uv.new_pipe(false)
  local got = rock.await(function(done)
    pipe:connect(sb.socket, function(err)
      if err then return done(nil) end
      pipe:write("THIS IS NOT HTTP\r\n\r\n")
      local buf = ""
      pipe:read_start(function(_, chunk)
        if chunk then buf = buf .. chunk else done(buf) end
      end)
    end)
  end)
  pipe:close()
  T.match(got, "^HTTP/1.1 400")
end)

T.test("after all that, the session and its state are intact", function()
  T.ok(sb:is_alive(), "alive")
  local o = sb:run_in_session{ session = "keep", command = "echo $KEPT" }
  T.eq(o.output, "1\n")
end)

sb:stop()
T.done()
