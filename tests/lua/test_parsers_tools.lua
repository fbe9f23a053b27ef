-- test_parsers_tools.lua: the real test runners (go test, cargo test,
-- Maven, PHPUnit, minitest, test-unit, RSpec, googletest under ctest,
-- doctest, jest, vitest, mocha, node's TAP) run afresh on the tiny projects
-- of data/parsers/ with SWE-bench's flags (data/parsers/make-log, in a temp
-- dir), and SWE-bench's parser for each reads what data/parsers/expected.lua
-- says. .ci/deps installs the runners; one that is missing is skipped with a
-- loud SKIP line (make-log exits 77), never passed silently.
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local here = arg[0]:match("(.*/)")
local data = here .. "data/parsers/"
local expected = dofile(data .. "expected.lua")

local tmp = T.sh("mktemp -d /tmp/rock-parsers.XXXXXX"):gsub("%s+$", "")
T.ok(tmp:match("^/tmp/rock%-parsers%."), "temp dir made")
local q = T.q

local check = dofile(data .. "check.lua")

local skipped = {}
-- the JS runners share one npm install (work dir "js")
local ORDER = { { "go", "go" }, { "cargo", "cargo" }, { "maven", "maven" }, { "phpunit", "php" },
  { "minitest", "ruby" }, { "test-unit", "ruby" }, { "rspec", "ruby" }, { "googletest", "cpp" },
  { "doctest", "cpp" }, { "jest", "js" }, { "jest-json", "js" }, { "vitest", "js" }, { "mocha", "js" },
  { "tap", "js" } }

for _, o in ipairs(ORDER) do
  local tool, dir = o[1], o[2]
  T.test(tool .. " (real output) through " .. expected[tool].parser, function()
    local log_file = tmp .. "/" .. tool .. ".log"
    local cmd = q(data .. "make-log") .. " " .. tool .. " " .. q(tmp .. "/" .. dir) .. " > " .. q(log_file)
    local p = io.popen(cmd .. " 2>&1; echo \"rc=$?\"")
    local out = p:read("a")
    p:close()
    local rc = tonumber(out:match("rc=(%d+)%s*$"))
    if rc == 77 then
      skipped[#skipped + 1] = tool
      print("SKIP " .. tool .. ": " .. out:gsub("rc=%d+%s*$", ""):gsub("%s+$", "") .. " (.ci/deps installs it)")
      return
    end
    T.eq(rc, 0, tool .. " ran (" .. out .. ")")
    local e = expected[tool]
    local parse = require("rock.agent.parsers." .. e.family)[e.parser]
    local log = T.read(log_file)
    local ok, err = pcall(check.eq_map, parse(log, {}), e.map, tool, 1)
    if not ok then error(err .. "\nlog:\n" .. log) end
  end)
end

os.execute("rm -rf " .. q(tmp))
if #skipped > 0 then
  print("SKIPPED (runner not installed): " .. table.concat(skipped, ", "))
end
T.done()
