--- rock.fleet.backend: the backend "fleet" (backends/init.lua's contract):
-- rock.sandbox.start{ fleet = pool, ... } places the sandbox on one of the
-- pool's nodes (fleet/init.lua) and is then that node's remote sandbox:
-- every operation goes to the node's `rock serve` as remote.lua sends it.
-- Its stop gives the pool its share back.
local remote = require "rock.backends.remote"

local M = { caps = { image = true, upload_stream = true, download_stream = true } }

function M.start(sb, opts, phase) return opts.fleet:place(sb, opts, phase) end

M.op, M.is_alive, M.gone, M.status = remote.op, remote.is_alive, remote.gone, remote.status

function M.stop(sb)
  local ok, err = pcall(remote.stop, sb)
  if sb.fleet then sb.fleet:released(sb) end
  if not ok then error(err, 0) end
end

return M
