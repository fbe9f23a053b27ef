-- test_json.lua: rock.json's encode: marked lists stay lists when empty,
-- everything else is cjson's (the fast path skips the walk only when no
-- empty table is in the output); encode_exact: the same JSON, its numbers
-- reading back as the same values.
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

T.test("encode_exact: every number reads back as itself; the rest as encode writes it", function()
  for _, x in ipairs({ 1 - 2 / 9, 1 / 3, 0.1, 0.1 + 0.2, -0.1, 1.0, 0.5, 1e300, -1e-300, 5e-324, 2 ^ 53 + 0.0,
    2 ^ 60 + 0.0, 123456.789, 1e21 }) do
    local s = json.encode_exact(x)
    T.ok(tonumber(s) == x and json.decode(s) == x, string.format("%.17g written as %s", x, s))
  end
  T.eq(json.encode_exact(1 - 2 / 9), "0.7777777777777778", "the shortest that reads back (Python's repr)")
  T.eq(json.encode_exact(0.1), "0.1")
  T.eq(json.encode_exact(0.1 + 0.2), "0.30000000000000004")
  T.eq(json.encode_exact(1.0), "1")
  T.eq(json.encode_exact(9007199254740993), "9007199254740993", "an integer in full")
  T.eq(json.encode_exact(json.array()), "[]")
  T.eq(json.encode_exact({}), "{}")
  T.eq(json.encode_exact({ 1, 2.5, "a/b", json.null, true }), '[1,2.5,"a\\/b",null,true]')
  T.eq(json.encode_exact({ [1] = 1, [3] = 3 }), json.encode({ [1] = 1, [3] = 3 }), "holes as cjson")
  local v = { r = 1 - 1 / 9, list = json.array(), obj = {}, nested = { { x = "y\n" } }, [5] = "five" }
  T.eq(json.encode_exact(v):gsub("0.8888888888888888", "0.88888888888889"):len(), json.encode(v):len())
  T.eq(json.decode(json.encode_exact(v)).r, 1 - 1 / 9)
  T.ok(not pcall(json.encode_exact, { 0 / 0 }), "NaN")
  T.ok(not pcall(json.encode_exact, { math.huge }), "inf")
  T.ok(not pcall(json.encode_exact, { [true] = 1 }), "a boolean key")
  T.ok(not pcall(json.encode_exact, { f = function() end }), "a function")
  local cyc = {}; cyc.self = cyc
  T.ok(not pcall(json.encode_exact, cyc), "a cycle")
  T.ok(not pcall(json.encode_exact, { [1] = 1, [100] = 2 }), "an excessively sparse list, as cjson")
end)

T.done()
