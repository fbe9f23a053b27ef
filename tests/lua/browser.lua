-- browser.lua: the report tests' way into headless Chromium (Debian's
-- chromium, installed by .ci/deps): B.run(steps) drives one browser
-- session through browser.js (a CDP client over node:http, no npm package; Node 18 and later) and
-- returns the steps' results; a missing chromium or node fails the test.
--   local B = dofile(here .. "browser.lua")
--   local r = B.run{ { ["goto"] = B.url(path) }, { eval = "document.title" } }
local json = require "cjson"
local B = {}
local here = arg[0]:match("(.*/)")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

--- file:// URL of an absolute path (percent-encoding what a URL needs).
function B.url(path, hash)
  return "file://" .. path:gsub("[^%w/%._%-~]", function(c) return string.format("%%%02X", c:byte()) end) .. (hash or "")
end

--- Run steps (browser.js's script); returns the list of results.
function B.run(steps)
  local f = os.tmpname()
  local h = assert(io.open(f, "wb"))
  h:write(json.encode({ steps = steps }))
  h:close()
  local p = io.popen("node " .. q(here .. "browser.js") .. " " .. q(f) .. " 2>&1")
  local out = p:read("a")
  p:close()
  os.remove(f)
  local line = out:match("([^\n]*)\n?$") -- the last line: its JSON (warnings come first)
  local ok, r = pcall(json.decode, line or "")
  if not ok or type(r) ~= "table" then error("browser.js: " .. out, 2) end
  if r.error then error("browser.js: " .. r.error, 2) end
  return r.results
end

return B
