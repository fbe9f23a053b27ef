--- rock.agent.dagger: the DAgger evaluator. In rounds r = 1..R every task
-- is run by the mixture of a student and a teacher policy (mixture.lua),
-- β_r the teacher's share (schedule.lua); every turn is labelled with the
-- teacher's action and kept as a record (records.lua); finish-only picks
-- what reaches the aggregated dataset; a hook between rounds may train
-- the student. Budgets and the plan: budget.lua. docs/dagger.md.
--   local summaries = rock.agent.dagger.run(tasks, {
--     out = "out/", rounds = 3, schedule = schedule.new("exp", {beta0 = 1, decay = 0.5}),
--     seed = 1, student = function(r) return factory end, teacher = factory,
--     agent = { workers = 4, backend = "docker" } })
-- The files (out/): rounds/<r>/ is a rock.agent.run --out DIR
-- (trajectories.jsonl, preds.jsonl, eval/) plus dataset.jsonl and the
-- round's summary.json; dataset.jsonl is the aggregated set; .lock holds
-- the whole run (a second one on out is refused: conflict). Resume
-- (opts.resume): a round whose summary.json says complete is not run
-- again, the round a kill cut short runs only the tasks not in its
-- trajectories.jsonl (rock.agent.run's resume), the hook of a complete
-- round that had not returned runs again; every dataset is rewritten from
-- the trajectories, so nothing is lost or repeated. A resume whose
-- schedule gives a begun round another beta is refused (invalid_argument).
-- A round's wall time adds its runs: rounds/<r>/wall.json keeps the
-- seconds so far as each task ends and when a signal ends the run (a
-- kill -9 loses the time since its last task ended), gone once the
-- round's summary.json holds the total.
local uv = require "luv"
local log = require "rock.log"
local errors = require "rock.errors"
local json = require "rock.json"
local output = require "rock.agent.output"
local records = require "rock.agent.dagger.records"
local mixture = require "rock.agent.dagger.mixture"

local M = { mixture = mixture, records = records,
  schedule = require "rock.agent.dagger.schedule", budget = require "rock.agent.dagger.budget" }

local function read_json(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  local ok, v = pcall(json.decode, s)
  return ok and type(v) == "table" and v or nil
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- A resumed round goes on with the beta it began with, or not at all.
local function check_beta(dir, r, beta, prev)
  local seen = prev and tonumber(prev.beta)
  if not seen and exists(dir .. "/trajectories.jsonl") then
    for _, t in ipairs(output.read_jsonl(dir .. "/trajectories.jsonl")) do
      if type(t.dagger) == "table" and tonumber(t.dagger.beta) then seen = tonumber(t.dagger.beta); break end
    end
  end
  if seen and math.abs(seen - beta) > 1e-9 then
    errors.raise("invalid_argument", string.format("resume: round %d was run with beta %.6g, this run gives it %.6g (another schedule?)",
      r, seen, beta))
  end
end

local function call(f, r)
  if type(f) == "function" then return f(r) end
  return f
end

--- Run the rounds; returns the list of round summaries (and, when a signal
--- cut a round short, interrupted = the signal's name in the second
--- value). opts: out (required), rounds (default 3), schedule (r -> β,
--- default exp from 1 by 0.5), seed (default 0), student, teacher (a
--- policy factory, or a function round -> factory), agent (the options of
--- rock.agent.run for every round: workers, backend, sandbox, limits,
--- eval, start_concurrency, progress, on_signal), resume, between_rounds
--- (function(r, dataset_path, summary), run after every round but the
--- last and waited for; an error in it ends the run), on_round
--- (function(summary), after each round, e.g. to print its table).
function M.run(tasks, opts)
  if type(opts) ~= "table" or type(opts.out) ~= "string" then errors.raise("invalid_argument", "dagger.run: opts.out is required") end
  local R = math.tointeger(opts.rounds or 3)
  if not R or R < 1 then errors.raise("invalid_argument", "dagger.run: rounds must be a whole number >= 1") end
  local schedule = opts.schedule or M.schedule.new("exp", { beta0 = 1, decay = 0.5, rounds = R })
  local out = opts.out
  output.mkdir(out .. "/rounds")
  local lock = output.lock(out)
  local summaries, agg = {}, {}
  local ok, err = pcall(function()
    for r = 1, R do
      local dir = string.format("%s/rounds/%d", out, r)
      local beta = schedule(r)
      local prev = opts.resume and read_json(dir .. "/summary.json") or nil
      if opts.resume then check_beta(dir, r, beta, prev) end
      local done = prev and prev.complete == true
      local t0 = uv.hrtime()
      -- the seconds the round ran before (runs a kill or a signal ended)
      local before = opts.resume and tonumber((read_json(dir .. "/wall.json") or {}).seconds_wall) or 0
      local function wall() return before + (uv.hrtime() - t0) / 1e9 end
      local function save_wall()
        local ok_w, werr = pcall(output.write_lines, dir .. "/wall.json", { { round = r, seconds_wall = wall() } })
        if not ok_w then log.warn("dagger", "round %d: %s", r, tostring(werr)) end
      end
      local agent_summary
      if not done then
        local factory = mixture.new{ student = call(opts.student, r), teacher = call(opts.teacher, r),
          beta = beta, seed = opts.seed or 0, round = r }
        local aopts = {}
        for k, v in pairs(opts.agent or {}) do aopts[k] = v end
        aopts.policy, aopts.out, aopts.resume = factory, dir, opts.resume
        local on_trajectory = aopts.on_trajectory
        aopts.on_trajectory = function(traj)
          save_wall()
          if on_trajectory then on_trajectory(traj) end
        end
        agent_summary = require("rock.agent").run(tasks, aopts)
        if agent_summary.interrupted then
          save_wall()
          return agent_summary.interrupted
        end
      end
      local trajs = output.read_jsonl(dir .. "/trajectories.jsonl")
      local all, kept, counts = records.round(trajs, r)
      output.write_lines(dir .. "/dataset.jsonl", all)
      for _, line in ipairs(kept) do agg[#agg + 1] = line end
      output.write_lines(out .. "/dataset.jsonl", agg)
      local s
      if done then s = prev
      else
        s = records.summary(r, beta, trajs, counts, agent_summary, wall())
        output.write_lines(dir .. "/summary.json", { s })
        os.remove(dir .. "/wall.json")
      end
      summaries[r] = s
      if opts.on_round then opts.on_round(s) end
      if r < R and opts.between_rounds and not (opts.resume and exists(dir .. "/hook.done")) then
        opts.between_rounds(r, out .. "/dataset.jsonl", s)
        output.write_lines(dir .. "/hook.done", { { round = r } })
      end
    end
  end)
  lock:release()
  if not ok then error(err, 0) end
  return summaries, err
end

return M
