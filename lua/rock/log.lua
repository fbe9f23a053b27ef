--- rock.log: Lua's side of the one log sink. Every line goes through the C
-- logger (core.log, c/core/log.c), so ROCK_LOG (debug, info, warn, error;
-- default warn) governs both languages and the lines look alike:
--   rock warn sandbox: msg="start failed" sandbox=rk-1 attempt=1
--   log.warn("sandbox", "start failed (attempt %d): %s", n, err)
-- A message is formatted only when its level is printed. rock.log(level,
-- fmt, ...) (init.lua) is M.log, area "lua". Recipes' progress bars and
-- summaries are UI, printed by the recipes themselves, not logged.
-- M.buffered is for lines logged per request (rock serve): they may wait
-- up to ~100 ms (or 4 KiB) to go out together; warn and error never wait.
local core = require "rock.core"

local M = {}

-- level -> printed?, asked of C once (the level changes only through
-- M.set_default, which clears it)
local on = {}
local function enabled(level)
  local v = on[level]
  if v == nil then
    v = core.log_enabled(level)
    on[level] = v
  end
  return v
end

local function emit(level, area, fmt, ...)
  if not enabled(level) then return end
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

local FLUSH_MS = 100
local timer -- a luv timer flushing the buffered lines, while some wait

local function flush_soon()
  local uv = require "luv"
  if not timer then
    timer = uv.new_timer()
    timer:unref() -- never keeps the loop alive: exit flushes too
  end
  timer:start(FLUSH_MS, 0, core.log_flush)
end

--- Log a line that may wait in a buffer (at most ~100 ms, 4 KiB, or
--- until the next unbuffered line or exit): for lines logged per request,
--- where a write(2) each would cost more than the request. warn and error
--- lines are written at once.
---@param level "debug"|"info"|"warn"|"error"
---@param area string
---@param fmt string
function M.buffered(level, area, fmt, ...)
  if not enabled(level) then return end
  local msg = select("#", ...) > 0 and string.format(fmt, ...) or tostring(fmt)
  if core.log_buffered(level, area, msg) then flush_soon() end
end

--- Write the buffered lines now.
function M.flush() core.log_flush() end

--- The level printed when ROCK_LOG does not say (warn unless set):
--- rock serve sets info, so its request lines show by default.
---@param level "debug"|"info"|"warn"|"error"
function M.set_default(level)
  core.log_default(level)
  on = {}
end

--- Would a line at this level be printed?
---@param level "debug"|"info"|"warn"|"error"
---@return boolean
function M.enabled(level) return enabled(level) end

--- rock.log(level, fmt, ...): a line in area "lua".
---@param level "debug"|"info"|"warn"|"error"
---@param fmt string
function M.log(level, fmt, ...) emit(level, "lua", fmt, ...) end

-- rock.log(level, fmt, ...) calls M.log
return setmetatable(M, { __call = function(_, ...) return M.log(...) end })
