-- test_parsers_multilingual.lua: SWE-bench's non-Python log parsers
-- (rock.agent.parsers.go, rust, java, php, ruby, c, js, js_multimodal):
-- every name SWE-bench registers is there; each parses the captured logs
-- of the real runners (data/parsers/logs, made by data/parsers/make-log;
-- test_parsers_tools runs the runners afresh) and the shapes of SWE-bench's
-- own parser tests (data/parsers/shapes.lua) as SWE-bench's parsers do;
-- none raises or slows down on hostile logs (random bytes, bad UTF-8,
-- 1 MB lines built to make backtracking patterns quadratic).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local here = arg[0]:match("(.*/)")
local data = here .. "data/parsers/"

local FAMILIES = { "go", "rust", "java", "php", "ruby", "c", "js", "js_multimodal" }
local parsers, family_of = {}, {}
for _, fam in ipairs(FAMILIES) do
  for name, fn in pairs(require("rock.agent.parsers." .. fam)) do
    parsers[name] = fn
    family_of[name] = family_of[name] and (family_of[name] .. "," .. fam) or fam
  end
end

-- SWE-bench's PARSER_REGISTRY (log_parsers/__init__.py), all but Python's
local SWE_BENCH = {
  go = { "parse_log_gotest" },
  rust = { "parse_log_cargo" },
  java = { "parse_log_maven", "parse_log_ant", "parse_log_gradle_custom" },
  php = { "parse_log_phpunit" },
  ruby = { "parse_log_minitest", "parse_log_cucumber", "parse_log_ruby_unit",
    "parse_log_rspec_transformed_json", "parse_log_jekyll" },
  c = { "parse_log_redis", "parse_log_jq", "parse_log_doctest", "parse_log_micropython_test",
    "parse_log_googletest" },
  js = { "parse_log_jest", "parse_log_jest_json", "parse_log_vitest", "parse_log_karma",
    "parse_log_tap", "parse_log_immutable_js" },
  js_multimodal = { "parse_log_calypso", "parse_log_chart_js", "parse_log_marked", "parse_log_p5js",
    "parse_log_react_pdf", "parse_log_bpmn_js", "parse_log_carbon", "parse_log_eslint",
    "parse_log_grommet", "parse_log_highlightjs", "parse_log_lighthouse", "parse_log_next",
    "parse_log_openlayers", "parse_log_prismjs", "parse_log_quarto_cli" },
}
local STATUSES = { PASSED = true, FAILED = true, SKIPPED = true, ERROR = true, XFAIL = true }

local eq_map = dofile(data .. "check.lua").eq_map

T.test("every non-Python parser SWE-bench registers, in its family, nothing else", function()
  local n = 0
  for fam, names in pairs(SWE_BENCH) do
    for _, name in ipairs(names) do
      T.eq(type(parsers[name]), "function", name)
      T.eq(family_of[name], fam, name .. "'s family")
      n = n + 1
    end
  end
  local count = 0
  for name in pairs(parsers) do
    count = count + 1
    T.match(name, "^parse_log_[%w_]+$", "a family exports only parsers")
  end
  T.eq(count, n, "no parser beyond SWE-bench's")
  T.eq(n, 37, "SWE-bench's 37 non-Python parsers")
  -- and each is what the registry gives by that name (a 5.x row's log_parser)
  local registry = require "rock.agent.parsers"
  for name, fn in pairs(parsers) do T.eq(registry.get(name), fn, "rock.agent.parsers.get(" .. name .. ")") end
end)

T.test("the real runners' captured logs parse as SWE-bench parses them", function()
  local expected = dofile(data .. "expected.lua")
  for tool, e in pairs(expected) do
    local log = T.read(data .. "logs/" .. tool .. ".log")
    T.ok(log, "captured log for " .. tool)
    T.eq(family_of[e.parser], e.family, e.parser)
    eq_map(parsers[e.parser](log, {}), e.map, tool .. " through " .. e.parser)
    -- the same log inside a bigger eval log
    local wrapped = "+ git apply -v -\nApplied patch\n" .. log .. "\n+ git checkout abc\n"
    eq_map(parsers[e.parser](wrapped, {}), e.map, tool .. " inside an eval log")
  end
end)

T.test("SWE-bench's own test shapes and each runner's shapes", function()
  for i, s in ipairs(dofile(data .. "shapes.lua")) do
    eq_map(parsers[s[1]](s[2], s[4] or {}), s[3], string.format("shape %d (%s)", i, s[1]))
  end
end)

T.test("later lines win; ANSI, CRLF and names with odd bytes", function()
  local go = parsers.parse_log_gotest
  eq_map(go("--- FAIL: TestA (0.00s)\n--- PASS: TestA (0.01s)\n", {}), { TestA = "PASSED" }, "later wins")
  eq_map(go("--- PASS: TestA (0.00s)\r\n--- FAIL: Test\255B (1s)\r\n", {}),
    { TestA = "PASSED", ["Test\255B"] = "FAILED" }, "CRLF is stripped, bytes kept")
  eq_map(go("--- PASS: T (a) (0.1s)\n--- PASS: U ()\n", {}), { ["T (a)"] = "PASSED" }, "the last ' (' with a duration")
  eq_map(parsers.parse_log_cargo("test a ... ok\ntest b ... ignored\ntest c - should panic ... ok\n", {}),
    { a = "PASSED" }, "cargo: only ok and FAILED, one-word names")
  eq_map(parsers.parse_log_vitest(" ✓ a > b 12ms\n ↓ a > c [skipped]\n × a > d\n", {}),
    { ["a > b"] = "PASSED", ["a > c"] = "SKIPPED", ["a > d"] = "FAILED" }, "vitest")
  eq_map(parsers.parse_log_phpunit(" ✔ orphan\n", {}), { ["None > orphan"] = "PASSED" }, "phpunit: no suite line yet")
  -- doctest: entities decoded; broken XML or no report gives nothing
  local xml = '<doctest><TestCase name="a &amp; b"><SubCase name="&#x263A;"><Expression success="true"/></SubCase></TestCase></doctest>'
  eq_map(parsers.parse_log_doctest("noise\n" .. xml .. "\n", {}), { ["a & b > \226\152\186"] = "PASSED" }, "doctest entities")
  eq_map(parsers.parse_log_doctest(xml:gsub("</SubCase>", ""), {}), {}, "doctest: unbalanced")
  eq_map(parsers.parse_log_doctest('<doctest><TestCase name="x"/>', {}), {}, "doctest: no end tag")
  eq_map(parsers.parse_log_doctest('<doctest><TestCase name="a"><TestCase name="b"><SubCase name="c"/></TestCase></TestCase></doctest>', {}),
    {}, "doctest: a TestCase in a TestCase is no doctest report")
  eq_map(parsers.parse_log_chart_js("\27[1mChrome 1.0 (Linux x86_64) a\27[0m b FAILED\n", {}), { ["a b "] = "FAILED" }, "ANSI stripped")
  eq_map(parsers.parse_log_prismjs("./node_modules/.bin/mocha tests/run.js --reporter json\n{not json}\n", {}),
    {}, "prismjs: JSON that does not parse is skipped")
end)

-- hostile logs: each parser on each; none raises, each result is a map of
-- strings to SWE-bench statuses, and none takes long
local MB = 1 << 20
local function rep(s) return s:rep(MB // #s + 1):sub(1, MB) end
local function random_bytes(n, seed)
  math.randomseed(seed)
  local t = {}
  for i = 1, n do t[i] = string.char(math.random(0, 255)) end
  return table.concat(t)
end

-- fragments whose repetition makes a naive pattern (or a naive scan)
-- quadratic, per family
local HOSTILE = {
  go = { "--- PASS: ", " (", "--- PASS: a (" },
  rust = { "test ", "test a ... ", " ... " },
  java = { "-Dtest=", "-Dtest=a ", "BUILD SUCCESS\n", "a > b\n", "[junit] [PASS] " },
  php = { " (", "a (", "\226\156\148 " },
  ruby = { ". ", ". =", " .", " ..F", ":", ": E", " - ", " - passed" },
  c = { "[ok]: ", " in ", "[", "[ OK ] (", "(", "<doctest><TestCase name='a'>", "<SubCase name='b'>",
    "<doctest><a b='c'", "&amp;" },
  js = { "\226\156\147 ", " (1 ms)", " 12", "    ", "  \226\156\148 x\n", "ok 1 " },
  js_multimodal = { " ./node_modules/.bin/jest ", "Chrome 1.2 (", "Chrome 1 (a) ", ") ", "1) ", "  1)",
    "  1) a\n", "<a>", "<a><b>", "</a>", "{\n", "[\n", "PASS (1.2", " (", "2KPhantomJS 1 (Linux 1) ",
    "Chrome Headless ", " (Linux x86_64) ", "Error", " passing", "\n3 passing", "running 1 test files",
    '"fullTitle": "a",\n', " xvfb-run ", "AssertionError: #", "Running:", ")\n\n\n  a\n", "    1) ",
    "case a:", "./node_modules/.bin/mocha tests/run.js --reporter json{", "[smoke] /tmp/a/", "\27[", "\27" },
}

T.test("hostile logs: random bytes, bad UTF-8, 1 MB lines, odd arguments", function()
  local generic = { random_bytes(MB, 1), rep("\n"), rep(" "), rep("\255\254"), rep("a"),
    "\0\1\2\n\0", "" }
  -- the task picks the parser inside these (by instance id or version)
  local by_task = { parse_log_jekyll = true, parse_log_immutable_js = true, parse_log_lighthouse = true,
    parse_log_next = true }
  local all_tasks = { {}, { instance_id = "jekyll__jekyll-9141", version = "9.5" },
    { instance_id = "immutable-js__immutable-js-2006", version = "1.27" }, { instance_id = "j-8761", version = 2 } }
  local worst, worst_what = 0, ""
  for fam, names in pairs(SWE_BENCH) do
    local logs = {}
    for _, g in ipairs(generic) do logs[#logs + 1] = g end
    for _, f in ipairs(HOSTILE[fam]) do logs[#logs + 1] = rep(f) end
    for _, name in ipairs(names) do
      local fn = parsers[name]
      for _, bad in ipairs{ 0, true, {}, function() end } do
        local ok, res = pcall(fn, bad, {})
        T.ok(ok and type(res) == "table" and next(res) == nil, name .. " on a non-string log")
      end
      T.ok(pcall(fn, "x", nil) and pcall(fn, "x", 5) and pcall(fn, "x", { instance_id = 5, version = {} }),
        name .. " with an odd task")
      for li, log in ipairs(logs) do
        for _, task in ipairs(by_task[name] and all_tasks or { {} }) do
          local t0 = rock.uv.hrtime()
          local ok, res = pcall(fn, log, task)
          local s = (rock.uv.hrtime() - t0) / 1e9
          if not ok then error(string.format("%s raised on hostile log %d: %s", name, li, res)) end
          for k, v in pairs(res) do
            if type(k) ~= "string" or not STATUSES[v] then
              error(string.format("%s gave %q = %q", name, tostring(k), tostring(v)))
            end
          end
          if s > worst then worst, worst_what = s, string.format("%s on log %d", name, li) end
          -- generous: the slowest takes about 2 s on 1 MB here, a quadratic one minutes
          T.ok(s < 10, string.format("%s took %.1f s on hostile log %d", name, s, li))
        end
      end
    end
  end
  print(string.format("     slowest: %.2f s (%s)", worst, worst_what))
end)

T.done()
