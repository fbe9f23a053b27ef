-- test_json.lua: rock.json's encode: marked lists stay lists when empty,
-- everything else is cjson's (the fast path skips the walk only when no
-- empty table is in the output).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local json = rock.json

T.test("marked empty lists are [], unmarked empty tables {}", function()
  T.eq(json.encode(json.array()), "[]")
  T.eq(json.encode({}), "{}")
  T.eq(json.encode({ a = json.array() }), '{"a":[]}')
  T.eq(json.encode({ { b = { json.array(), {} } } }), '[{"b":[[],{}]}]')
  T.eq(json.encode(json.array({ 1, 2 })), "[1,2]")
  local shared = { x = json.array() }
  T.eq(json.encode({ shared, shared }), '[{"x":[]},{"x":[]}]', "a table met twice is fixed both times")
end)

T.test("strings holding {} or [] are left alone", function()
  T.eq(json.encode({ s = "{}" }), '{"s":"{}"}')
  local both = json.encode({ s = "{}", l = json.array() })
  T.ok(both == '{"s":"{}","l":[]}' or both == '{"l":[],"s":"{}"}', "with a list to fix as well: " .. both)
  T.eq(json.encode("{}"), '"{}"')
  T.eq(json.decode(json.encode({ out = "a{}b", n = 1 })).out, "a{}b")
end)

T.test("values without empty tables are cjson's output", function()
  local v = { status = "Success", result = { output = "hi\n", exit_code = 0, list = { 1, 2, 3 } } }
  T.eq(json.encode(v), require("cjson").encode(v))
  T.eq(json.encode(7), "7")
  T.eq(json.encode(json.null), "null")
end)

T.test("what cjson cannot write still raises", function()
  T.ok(not pcall(json.encode, { f = function() end }), "a function")
  local cyc = {}; cyc.self = cyc
  T.ok(not pcall(json.encode, cyc), "a cycle")
end)

T.done()
