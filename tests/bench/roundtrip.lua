-- roundtrip.lua: run_in_session("true") through the Lua API on the local
-- backend.   rock roundtrip.lua N   -> prints "mean p50 p95" in microseconds
local rock = require "rock"
local n = tonumber(arg[1]) or 2000
local sb = rock.sandbox.start{ backend = "local" }
sb:create_session{ session = "b" }
for _ = 1, 100 do sb:run_in_session{ session = "b", command = "true" } end
local hr = rock.uv.hrtime
local lat = {}
local t0 = hr()
for i = 1, n do
  local t = hr()
  local o = sb:run_in_session{ session = "b", command = "true" }
  lat[i] = (hr() - t) / 1e3
  assert(o.exit_code == 0)
end
local mean = (hr() - t0) / 1e3 / n
table.sort(lat)
print(string.format("%.1f %.1f %.1f", mean, lat[n // 2], lat[math.floor(n * 0.95)]))
sb:stop()
