-- wrapped_backend.lua: a backend for test_backends.lua, registered at
-- runtime as "wrapped": the local backend's functions under another name,
-- counting what the contract asks of it (ops by name, releases, reaps,
-- lists). Nothing in rock names it: what works here works through the
-- contract (lua/rock/backends/init.lua) alone.
--   local W = dofile("wrapped_backend.lua")   -- registers it; W.calls, ...
local backends = require "rock.backends"
local base = backends.get("local")

local W = { caps = { keep = true, upload_stream = true }, calls = {}, released = {}, reaped = 0, listed = 0 }
for _, f in ipairs({ "start", "is_alive", "gone", "stop", "status", "keep", "lease" }) do W[f] = base[f] end

function W.op(sb, name, args, timeout, file)
  W.calls[name] = (W.calls[name] or 0) + 1
  return base.op(sb, name, args, timeout, file)
end

function W.release(rec, dir, final)
  W.released[#W.released + 1] = rec.id
  return base.release(rec, dir, final)
end

function W.reap() W.reaped = W.reaped + 1 end

function W.list(rows)
  W.listed = W.listed + 1
  for _, row in ipairs(rows) do
    if row.backend == W.name then row.listed_by = W.name end
  end
end

backends.register("wrapped", W)
return W
