--- rock.agent.parsers.go: SWE-bench's log parser for `go test -v`
-- (parse_log_gotest: caddy, terraform, prometheus, hugo, gin). The
-- registry (init.lua) loads this family; shared helpers are in _text.lua.
local tx = require "rock.agent.parsers._text"

local M = {}

local STATUS = { PASS = tx.PASSED, FAIL = tx.FAILED, SKIP = tx.SKIPPED }

--- `--- PASS: TestName (0.01s)` (indented for subtests) -> TestName.
--- The name runs to the last " (" that still leaves a non-empty duration.
function M.parse_log_gotest(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local s = tx.strip(line)
    local word = s:match("^%-%-%- (%u%u%u%u): ")
    local status = STATUS[word]
    if status and s:byte(-1) == 41 then -- ")"
      local last
      for _, i in ipairs(tx.find_all(s, " (", 11)) do
        if i + 2 <= #s - 1 then last = i end
      end
      if last and last > 11 then map[s:sub(11, last - 1)] = status end
    end
  end
  return map
end

return M
