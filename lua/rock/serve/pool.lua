--- rock.serve.pool: `rock serve --pool IMAGE=N,...`: ROCK's start served
--- from warm sandboxes. Each image gets a rock.pool (pool.lua) whose
--- members are the registry's own entries, started as any start is (so
--- admission reserves their budget, their phases and records are
--- written, a restart finds them) but marked pooled: no route lists or
--- finds them until a start claims one. A start matches a pool when it
--- asks for that image with the pool's memory and cpus (ROCK's defaults,
--- 8g and 2, unless given), pull "missing" (the default), no sandbox_id,
--- env or GPU, and a lease no longer than the server's (the warm rocklet's); the claimed entry becomes the caller's at once (its id is the
--- answer's sandbox_id) and the pool starts another behind it. Anything
--- else starts as without a pool.
local errors = require "rock.errors"
local images = require "rock.images"
local log = require "rock.log"
local task = require "rock.task"

local M = {}

M.DEFAULT_MEMORY = "8g" -- ROCK's SandboxConfig defaults: what its SDK asks
M.DEFAULT_CPUS = 2

--- "IMAGE=N,IMAGE=N" -> { {image=, size=}, ... }; raises invalid_argument.
function M.parse(spec)
  local out = {}
  if type(spec) ~= "string" or spec == "" then
    errors.raise("invalid_argument", "--pool: expected IMAGE=N[,IMAGE=N...]")
  end
  for part in spec:gmatch("[^,]+") do
    local image, n = part:match("^%s*([^=%s]+)=(%d+)%s*$")
    n = n and math.tointeger(tonumber(n))
    if not image or not n or n > 10000 then
      errors.raise("invalid_argument", "--pool: '" .. part .. "' is not IMAGE=N (N a whole number up to 10000)")
    end
    out[#out + 1] = { image = image, size = n }
  end
  return out
end

local function need_of(memory, cpus)
  return images.parse_size(memory or M.DEFAULT_MEMORY, "memory"), cpus or M.DEFAULT_CPUS
end

--- The pools of registry, from spec (M.parse's list); they begin filling.
--- check_every: seconds between looks at the warm ones (renewing their
--- leases: under a third of the server's).
function M.new(registry, list, check_every)
  local self = { registry = registry, by_image = {} }
  for _, p in ipairs(list) do
    if self.by_image[p.image] then errors.raise("invalid_argument", "--pool: image " .. p.image .. " is listed twice") end
    local mem, cpus = need_of(nil, nil)
    local req = { image = p.image, memory = M.DEFAULT_MEMORY, cpus = M.DEFAULT_CPUS }
    local warm = require("rock.pool").new{
      size = p.size, name = p.image, check_every = check_every,
      start = function()
        local e = registry:start(req, { user_id = "rock-pool" }, true)
        while e.state == "pending" do task.sleep(0.02) end
        if e.state ~= "running" then
          local err = e.start_error or errors.new("sandbox_start_failed", "the pool's start of " .. p.image .. " ended " .. e.state)
          registry:delete(e)
          error(err, 0)
        end
        return e
      end,
      stop = function(e) registry:delete(e) end,
      alive = function(e) return e.state == "running" and e.sb ~= nil and e.sb.state == "running" end,
      answers = function(e) return e.sb:is_alive() end, -- at its claim: its rocklet answers now
      look = function(e) -- renews both leases: the registry's and the rocklet's own
        registry:touch(e)
        if not e.sb:is_alive() then errors.raise("sandbox_not_alive", "gone") end
      end,
    }
    self.by_image[p.image] = { warm = warm, memory = mem, cpus = cpus, size = p.size }
    log.info("serve", "pool: %d warm sandbox(es) of %s", p.size, p.image)
  end
  return setmetatable(self, { __index = M })
end

--- A warm entry for start request req, claimed (no longer pooled), or nil.
function M.claim(self, req)
  local p = self.by_image[req.image]
  if not p or req.sandbox_id or req.env or (req.pull and req.pull ~= "missing") or (req.num_gpus or 0) > 0 then
    return nil
  end
  -- the rocklet's own lease was set at its start: a longer one cannot be had now
  if req.lease and req.lease > self.registry.lease then return nil end
  local ok, mem, cpus = pcall(need_of, req.memory, req.cpus)
  if not ok or mem ~= p.memory or cpus ~= p.cpus then return nil end
  return p.warm:try_claim()
end

--- {image = {size, idle, starting, claimed, failures, last_error}}: the
--- node report's `pools`.
function M.report(self)
  local out = {}
  for image, p in pairs(self.by_image) do
    local s = p.warm:stats()
    out[image] = { size = s.size, idle = s.idle, starting = s.starting, claimed = s.claimed,
      failures = s.failures, last_error = s.last_error }
  end
  return out
end

--- Stop the idle members (the server stops).
function M.close(self)
  for _, p in pairs(self.by_image) do p.warm:close() end
end

return M
