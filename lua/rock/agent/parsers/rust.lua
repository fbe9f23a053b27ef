--- rock.agent.parsers.rust: SWE-bench's log parser for `cargo test`
-- (parse_log_cargo: ripgrep, bat, ruff, tokio, coreutils, nushell, axum).
-- The registry (init.lua) loads this family; helpers are in _text.lua.
local tx = require "rock.agent.parsers._text"

local M = {}

local LINE = "^test" .. tx.WS .. "+(" .. tx.NWS .. "+)" .. tx.WS .. "+%.%.%." .. tx.WS .. "+([%w_]+)$"

--- `test path::name ... ok` -> PASSED, `... FAILED` -> FAILED; `ignored`
--- and anything else is not recorded (as in SWE-bench).
function M.parse_log_cargo(log)
  local map = {}
  if type(log) ~= "string" then return map end
  for line in tx.lines(log) do
    local name, outcome = tx.strip(line):match(LINE)
    if outcome == "ok" then map[name] = tx.PASSED
    elseif outcome == "FAILED" then map[name] = tx.FAILED end
  end
  return map
end

return M
