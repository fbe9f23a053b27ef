--- rock.fleet.backend: the backend "fleet" (backends/init.lua's contract):
-- rock.sandbox.start{ fleet = pool, ... } places the sandbox on one of the
-- pool's nodes (fleet/init.lua) and is then that node's remote sandbox:
-- every operation goes to the node's `rock serve` as remote.lua sends it.
-- Its status names the node (node_url: nodes on one machine share a host
-- name and address); its stop gives the pool its share back.
local remote = require "rock.backends.remote"

local M = { caps = { image = true, upload_stream = true, download_stream = true, served_elsewhere = true } }

function M.start(sb, opts, phase) return opts.fleet:place(sb, opts, phase) end

M.op, M.is_alive, M.gone = remote.op, remote.is_alive, remote.gone

--- The remote sandbox's status fields (host_name, host_ip) and node_url:
--- the node it was placed on, as the pool names it.
function M.status(sb)
  local w = {}
  for k, v in pairs(remote.status(sb)) do w[k] = v end
  w.node_url = sb.node_url
  return w
end

function M.stop(sb)
  local ok, err = pcall(remote.stop, sb)
  if sb.fleet then sb.fleet:released(sb) end
  if not ok then error(err, 0) end
end

return M
