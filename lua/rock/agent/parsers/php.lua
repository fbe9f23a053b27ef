--- rock.agent.parsers.php: SWE-bench's log parser for `phpunit --testdox
-- --colors=never` (parse_log_phpunit: phpspreadsheet, laravel,
-- php-cs-fixer, carbon). The registry (init.lua) loads this family;
-- helpers are in _text.lua.
local tx = require "rock.agent.parsers._text"

local M = {}

local MARKS = { ["\226\156\148"] = tx.PASSED,  -- ✔
                ["\226\156\152"] = tx.FAILED,  -- ✘
                ["\226\134\169"] = tx.SKIPPED } -- ↩

-- `Suite name (Class\Name)` at the start of a line: the suite name, which
-- runs to the last " (" that leaves something inside the parentheses
local function suite_of(line)
  if not tx.is_word_at(line, 1) or line:byte(-1) ~= 41 then return nil end -- ")"
  local last
  for _, i in ipairs(tx.find_all(line, " (", 3)) do
    if i + 2 <= #line - 1 then last = i end
  end
  local name = last and line:sub(1, last - 1)
  if name and (utf8.len(name) or #name) >= 2 then return name end
end

--- Testdox lines `Suite (Class)` then ` ✔ test`, ` ✘ test`, ` ↩ test`
--- give "Suite > test" (the whole rest of the line, as printed). A test
--- before any suite line is "None > test", as SWE-bench's parser names it.
function M.parse_log_phpunit(log)
  local map = {}
  if type(log) ~= "string" then return map end
  local suite = "None"
  for line in tx.lines(log) do
    local name = suite_of(line)
    if name then
      suite = name
    else
      local i = line:find(tx.NWS)
      local status = i and MARKS[line:sub(i, i + 2)]
      if status then
        local rest = line:sub(i + 3)
        map[suite .. " > " .. rest:sub((rest:find(tx.NWS) or #rest + 1))] = status
      end
    end
  end
  return map
end

return M
