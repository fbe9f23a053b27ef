--- tests/slurm/cluster.lua: the Lua tests' handle on tests/slurm/cluster
-- (a real 3-node Slurm cluster on this machine, its own ports and dirs).
--   local C = dofile(here .. "../slurm/cluster.lua")
--   local cl, why = C.up()      -- nil, why: Slurm or root is missing
--   cl.conf                     -- its slurm.conf (SLURM_CONF)
--   cl:sh("squeue")             -- a command with SLURM_CONF set
--   cl:jobs(), cl:nodes()       -- Slurm's own view, parsed
--   cl:down()                   -- every job, daemon and dir gone
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)")
local SCRIPT = here .. "cluster"

local C = {}
local Cluster = {}
Cluster.__index = Cluster

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return out, ok == true
end

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

--- Start a cluster in a fresh temp dir; nil and why when it cannot be
--- (not root, slurm-wlm or munge not installed).
function C.up()
  if not sh("command -v sbatch && command -v slurmctld && command -v munged") then
    return nil, "slurm-wlm and munge are not installed (.ci/deps)"
  end
  if sh("id -u"):match("^%d+") ~= "0" then return nil, "the test cluster runs as root (SlurmUser=root)" end
  local dir = sh("mktemp -d /tmp/rock-slurm.XXXXXX"):gsub("%s+$", "")
  -- down by itself once this test is gone (killed at its ctest timeout)
  local out, ok = sh("OWNER=" .. require("rock.core").getpid() .. " " .. q(SCRIPT) .. " up " .. q(dir))
  if not ok then error("tests/slurm/cluster up failed:\n" .. out, 2) end
  return setmetatable({ dir = dir, conf = out:match("SLURM_CONF=(%S+)") }, Cluster)
end

function Cluster:down()
  local out, ok = sh(q(SCRIPT) .. " down " .. q(self.dir))
  if not ok then error("tests/slurm/cluster down failed:\n" .. out, 2) end
end

--- Run a shell command against this cluster; its output and success.
function Cluster:sh(cmd) return sh("SLURM_CONF=" .. q(self.conf) .. " " .. cmd) end

--- Every job squeue shows: {id=, state=, reason=, node=, name=, comment=}.
function Cluster:jobs()
  local out = self:sh("squeue -h -a -t all -o '%i|%T|%r|%N|%j|%k'")
  local jobs = {}
  for line in out:gmatch("[^\n]+") do
    local id, st, reason, node, name, comment = line:match("^(%d+)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|(.*)$")
    if id then
      jobs[#jobs + 1] = { id = id, state = st, reason = reason, node = node, name = name, comment = comment }
    end
  end
  return jobs
end

--- Every node as scontrol shows it: {name=, state=, cpus=, cpus_alloc=,
--- memory=, memory_alloc=} (memory in MB).
function Cluster:nodes()
  local out = self:sh("scontrol -o show node")
  local nodes = {}
  for line in out:gmatch("[^\n]+") do
    local n = { name = line:match("NodeName=(%S+)"), state = line:match(" State=(%S+)"),
      cpus = tonumber(line:match(" CPUTot=(%d+)")), cpus_alloc = tonumber(line:match(" CPUAlloc=(%d+)")),
      memory = tonumber(line:match(" RealMemory=(%d+)")), memory_alloc = tonumber(line:match(" AllocMem=(%d+)")) }
    if n.name then nodes[#nodes + 1] = n end
  end
  return nodes
end

return C
