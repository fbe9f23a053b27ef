--- rock.agent.parsers: SWE-bench's log parsers by name, as its harness
-- names them ("parse_log_pytest", "parse_log_django", ...). Each family
-- module (rock.agent.parsers.<family>, listed in M.FAMILIES) returns a
-- table { parse_log_xxx = function(log, task) ... }.
--   local parse = require("rock.agent.parsers").get("parse_log_django")
--   local statuses = parse(log_text, task)  -- { [test] = "PASSED" | ... }
-- The contract every parser keeps: pure (no I/O), never raises on any
-- input, linear time (no backtracking patterns: the log is the tests'
-- and the patch's), and each status one of SWE-bench's TestStatus values.
-- Which text a parser gets (the slice between the markers or the whole
-- log) and what the statuses mean for a grade: rock.agent.swebench.rules.
local M = {}

--- SWE-bench's TestStatus values, the only statuses a parser returns.
M.STATUSES = { "PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL" }

--- The family modules loaded (rock.agent.parsers.<family>).
M.FAMILIES = { "python", "go", "rust", "java", "php", "ruby", "c", "js", "js_multimodal" }

local registry

local function load()
  if registry then return registry end
  local r = {}
  for _, family in ipairs(M.FAMILIES) do
    for name, fn in pairs(require("rock.agent.parsers." .. family)) do
      if type(fn) == "function" and name:match("^parse_log_") then r[name] = fn end
    end
  end
  registry = r
  return r
end

--- The parser called name, or nil.
---@param name string
---@return fun(log: string, task: table): table<string,string>|nil
function M.get(name)
  if type(name) ~= "string" then return nil end
  return load()[name]
end

--- Every parser's name, sorted.
---@return string[]
function M.names()
  local out = {}
  for name in pairs(load()) do out[#out + 1] = name end
  table.sort(out)
  return out
end

return M
