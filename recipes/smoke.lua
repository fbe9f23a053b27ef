-- smoke.lua: ROCK's getting-started health check.
--   rock recipes/smoke.lua [--backend auto|docker|podman|local] [--image IMAGE]
-- Starts a sandbox, opens a bash session, runs `cat /etc/os-release | head -3`,
-- prints the output and stops the sandbox. With --image, auto picks docker,
-- then podman, then local; without one it runs on the local backend.
local rock = require "rock"

local opts = rock.flags.parse(arg, {
  backend = { default = "auto", help = "auto|docker|podman|local" },
  image = { help = "image to run (auto then picks docker, podman, local)" },
}, "rock recipes/smoke.lua [--backend auto|docker|podman|local] [--image IMAGE]")
local backend, image = opts.backend, opts.image

local t0 = rock.uv.hrtime()
local sb = rock.sandbox.start{ backend = backend, image = image }
io.write(string.format("sandbox %s started (%s backend%s) in %.0f ms\n",
  sb.id, sb.backend, image and (", " .. image) or "", (rock.uv.hrtime() - t0) / 1e6))
local ok, obs = pcall(function()
  sb:create_session{ session = "bash-1" }
  return sb:run_in_session{ session = "bash-1", command = "cat /etc/os-release | head -3", timeout = 30 }
end)
sb:stop()
if not ok then error(obs, 0) end
io.write(obs.output)
if obs.exit_code ~= 0 then
  io.stderr:write("smoke: command failed with exit code ", tostring(obs.exit_code), "\n")
  os.exit(1)
end
print("smoke: ok")
