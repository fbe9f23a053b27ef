--- rock.agent.dagger.schedule: β, the teacher's share of executed turns,
-- round by round (r = 1..R), as DAgger schedules it:
--   exp     β_r = β0 · p^(r-1)              (--beta0 1 --beta-decay 0.5)
--   linear  β0 at round 1 down to 0 at round R (β0 for R = 1)
--   const   β_r = β0
-- or any Lua function r -> β (a recipe's own). Every β is checked to be
-- in [0, 1].
local errors = require "rock.errors"

local M = {}

M.KINDS = { exp = true, linear = true, const = true }

--- A schedule: kind (a name above or a function r, rounds -> β),
--- opts.beta0 (default 1), opts.decay (exp's p, default 0.5), opts.rounds
--- (R, linear's end). Returns a function r -> β.
function M.new(kind, opts)
  opts = opts or {}
  local b0, p, R = opts.beta0 or 1, opts.decay or 0.5, opts.rounds or 1
  local f
  if type(kind) == "function" then f = function(r) return kind(r, R) end
  elseif kind == "exp" then f = function(r) return b0 * p ^ (r - 1) end
  elseif kind == "linear" then f = function(r) return R <= 1 and b0 or b0 * (R - r) / (R - 1) end
  elseif kind == "const" then f = function() return b0 end
  else errors.raise("invalid_argument", "beta schedule: expected exp, linear, const or a function, got " .. tostring(kind)) end
  return function(r)
    local b = tonumber(f(r))
    if not b or b ~= b or b < 0 or b > 1 then
      errors.raise("invalid_argument", string.format("beta schedule: round %d gives %s, not a number in [0, 1]", r, tostring(b)))
    end
    return b
  end
end

return M
