-- test_binary.lua: issue 7 item 18, binary contents. Bytes that are not
-- UTF-8, and NUL, round-trip through write_file / read_file{binary=true}
-- and reach bash in a command. sandbox.lua sends them base64-encoded
-- ("encoding": "base64"), which the rocklet decodes strictly.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")

local sb = rock.sandbox.start(T.sandbox_opts())
local dir = T.scratch(sb)

local all = {}
for i = 0, 255 do all[#all + 1] = string.char(i) end
all = table.concat(all)

T.test("issue7-18: every byte value round-trips through write_file and read_file{binary=true}", function()
  for _, content in ipairs({ all, "\0", "a\0b", "\xff\xfe", "caf\xc3\xa9", "" }) do
    sb:write_file{ path = dir .. "/bin", content = content }
    local r = sb:read_file{ path = dir .. "/bin", binary = true }
    T.eq(r.content, content, "bytes back")
    local n = sb:execute{ command = { "sh", "-c", "wc -c < " .. dir .. "/bin" } }.stdout
    T.eq(tonumber(n), #content, "bytes on disk")
  end
end)

T.test("issue7-18: text that is not strict base64 is refused, nothing written", function()
  for _, bad in ipairs({ "Y", "a===", "====", "Zh==", "Zm9vY", "!!!!" }) do
    local e = T.raises("invalid_argument", sb._op, sb, "write_file",
      { path = dir .. "/b64", content = bad, encoding = "base64" })
    T.match(e.message, "not base64")
  end
  T.eq(sb:execute{ command = { "test", "-e", dir .. "/b64" } }.exit_code, 1, "no file")
end)

T.test("issue7-18: text reads stay text (invalid UTF-8 replaced)", function()
  sb:write_file{ path = dir .. "/t", content = "ok\xff" }
  T.eq(sb:read_file{ path = dir .. "/t" }.content, "ok\u{FFFD}")
end)

T.test("issue7-18: a command with bytes that are not UTF-8 reaches bash as is", function()
  sb:create_session{ session = "b" }
  local o = sb:run_in_session{ session = "b", command = "printf '%s' '\xff\xfe' | od -An -tx1" }
  T.match(o.output, "ff fe")
  sb:close_session{ session = "b" }
end)

sb:stop()
T.done()
