--- rock.log: Lua's side of the one log sink. Every line goes through the C
-- logger (core.log, c/core/log.c), so ROCK_LOG (debug, info, warn, error;
-- default warn) governs both languages and the lines look alike:
--   rock warn sandbox: msg="start failed" sandbox=rk-1 attempt=1
--   log.warn("sandbox", "start failed (attempt %d): %s", n, err)
-- A message is formatted only when its level is printed. rock.log(level,
-- fmt, ...) (init.lua) is M.log, area "lua". Recipes' progress bars and
-- summaries are UI, printed by the recipes themselves, not logged.
local core = require "rock.core"

local M = {}

local function emit(level, area, fmt, ...)
  if not core.log_enabled(level) then return end
  local msg = select("#", ...) > 0 and string.format(fmt, ...) or tostring(fmt)
  core.log(level, area, msg)
end

--- Log at a level: area names the part of rock ("sandbox", "gc", ...);
--- fmt and its arguments as string.format's.
---@param area string
---@param fmt string
function M.debug(area, fmt, ...) emit("debug", area, fmt, ...) end
---@param area string
---@param fmt string
function M.info(area, fmt, ...) emit("info", area, fmt, ...) end
---@param area string
---@param fmt string
function M.warn(area, fmt, ...) emit("warn", area, fmt, ...) end
---@param area string
---@param fmt string
function M.error(area, fmt, ...) emit("error", area, fmt, ...) end

--- Would a line at this level be printed?
---@param level "debug"|"info"|"warn"|"error"
---@return boolean
function M.enabled(level) return core.log_enabled(level) end

--- rock.log(level, fmt, ...): a line in area "lua".
---@param level "debug"|"info"|"warn"|"error"
---@param fmt string
function M.log(level, fmt, ...) emit(level, "lua", fmt, ...) end

-- rock.log(level, fmt, ...) calls M.log
return setmetatable(M, { __call = function(_, ...) return M.log(...) end })
