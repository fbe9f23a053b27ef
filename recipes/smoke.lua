-- smoke.lua: ROCK's getting-started health check.
--   rock recipes/smoke.lua [--backend local|auto]
-- Starts a sandbox, opens a bash session, runs `cat /etc/os-release | head -3`,
-- prints the output and stops the sandbox.
local rock = require "rock"

local backend = "auto"
for i = 1, #arg do
  if arg[i] == "--backend" then backend = arg[i + 1] end
end

local t0 = rock.uv.hrtime()
local sb = rock.sandbox.start{ backend = backend }
io.write(string.format("sandbox %s started (%s backend) in %.0f ms\n",
  sb.id, sb.backend, (rock.uv.hrtime() - t0) / 1e6))
sb:create_session{ session = "bash-1" }
local obs = sb:run_in_session{ session = "bash-1", command = "cat /etc/os-release | head -3", timeout = 30 }
io.write(obs.output)
sb:stop()
if obs.exit_code ~= 0 then
  io.stderr:write("smoke: command failed with exit code ", tostring(obs.exit_code), "\n")
  os.exit(1)
end
print("smoke: ok")
