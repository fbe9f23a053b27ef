--- rock.agent.dagger.mixture: DAgger's mixture policy, a policy factory
-- as rock.agent.run takes. At every turn both the student and the teacher
-- are asked for their action on the same message history (the teacher's is
-- the turn's label; it takes no sandbox step of its own), then a seeded
-- draw u in [0, 1) picks the one executed: the teacher's when u < beta,
-- the student's otherwise. The draws of a task come from its own
-- generator, seeded by (seed, round, instance_id): a run is reproducible
-- whatever the order the workers take the tasks in, and a resumed one
-- draws as the first did. The turns' records go into the trajectory as
-- traj.dagger (annotate, called by the episode however it ends).
--   local f = mixture.new{ student = sf, teacher = tf, beta = 0.5, seed = 7, round = 2 }
--   rock.agent.run(tasks, { policy = f, out = dir })
-- A teacher that fails (a model it cannot reach) ends the episode as any
-- policy failure does: `aborted`. The prompt is the student's (its
-- begin); the teacher's begin is called for its own state and its
-- messages are not used. A scripted teacher (oracle, replay) plays its
-- list in order whatever the state: its label is its next action.
local errors = require "rock.errors"
local json = require "rock.json"
local tools = require "rock.agent.tools"

local M = {}

local MASK53 = (1 << 53) - 1

-- splitmix64's finaliser (Lua integers are 64-bit and wrap)
local function mix(z)
  z = (z ~ (z >> 30)) * 0xbf58476d1ce4e5b9
  z = (z ~ (z >> 27)) * 0x94d049bb133111eb
  return z ~ (z >> 31)
end

local function fnv1a(s)
  local h = 0xcbf29ce484222325
  for i = 1, #s do h = (h ~ s:byte(i)) * 0x100000001b3 end
  return h
end

--- The draws of one task: a function returning u in [0, 1), the k-th call
--- the k-th draw of splitmix64 seeded by mix(seed) ~ mix(round) ~ fnv1a(id).
function M.rng(seed, round, id)
  local state = mix(math.tointeger(seed) or 0) ~ mix((math.tointeger(round) or 0) + 0x5851f42d) ~ fnv1a(tostring(id))
  return function()
    state = state + 0x9e3779b97f4a7c15
    return ((mix(state) >> 11) & MASK53) / (1 << 53)
  end
end

local function new_stats() return { calls = 0, tokens = 0, cost = 0 } end

local function count(stats, turn)
  stats.calls = stats.calls + 1
  stats.cost = stats.cost + (turn.cost or 0)
  local u = turn.usage
  if u then stats.tokens = stats.tokens + (u.total_tokens or ((u.prompt_tokens or 0) + (u.completion_tokens or 0))) end
end

local Mixture = {}
Mixture.__index = Mixture

--- opts: student, teacher (policy factories: rock.agent.policy(...) or
--- any {name, episode=}), beta (0..1), seed (integer), round (integer).
function M.new(opts)
  local s, t = opts.student, opts.teacher
  if type(s) ~= "table" or type(t) ~= "table" then errors.raise("invalid_argument", "mixture: student and teacher policies are required") end
  local beta = tonumber(opts.beta)
  if not beta or beta < 0 or beta > 1 then errors.raise("invalid_argument", "mixture: beta must be in [0, 1], got " .. tostring(opts.beta)) end
  local seed, round = math.tointeger(opts.seed or 0), math.tointeger(opts.round or 1)
  if not seed or not round then errors.raise("invalid_argument", "mixture: seed and round must be integers") end
  local sname, tname = s.model or s.name, t.model or t.name
  return {
    name = "dagger", model = string.format("dagger(%s,%s)", tostring(sname), tostring(tname)),
    beta = beta, seed = seed, round = round,
    episode = function(_, task)
      return setmetatable({ name = "dagger", student = s:episode(task), teacher = t:episode(task),
        beta = beta, seed = seed, round = round, draw = M.rng(seed, round, task.instance_id),
        episode_id = M.episode_id(task.instance_id, round), turns = json.array(),
        stats = { student = new_stats(), teacher = new_stats() } }, Mixture)
    end,
  }
end

--- The id of a task's trajectory in a round: "<instance_id>@r<round>".
function M.episode_id(id, round) return string.format("%s@r%d", id, round) end

function Mixture:begin(ctx)
  local msgs = self.student:begin(ctx)
  self.teacher:begin(ctx)
  return msgs
end

--- Both policies act on ctx.messages; the drawn one's turn is returned
--- (its message is what the episode keeps), carrying both calls' cost
--- and tokens so the run's limits count all the spending.
function Mixture:act(ctx)
  local upto = #ctx.messages
  local st = self.student:act(ctx)
  if not st.exhausted then count(self.stats.student, st) end -- counted even when the teacher then fails
  local tt = self.teacher:act(ctx)
  if not tt.exhausted then count(self.stats.teacher, tt) end
  local u = self.draw()
  local by = u < self.beta and "teacher" or "student"
  local turn = by == "teacher" and tt or st
  if turn.exhausted then return turn end
  local other = by == "teacher" and st or tt
  turn.cost = (turn.cost or 0) + (other.cost or 0)
  if other.usage then
    local a, b = turn.usage or {}, other.usage
    turn.usage = { prompt_tokens = (a.prompt_tokens or 0) + (b.prompt_tokens or 0),
      completion_tokens = (a.completion_tokens or 0) + (b.completion_tokens or 0),
      total_tokens = (a.total_tokens or 0) + (b.total_tokens or 0) }
  end
  local sa, ta = st.action, tt.action
  local rec = { turn = #self.turns + 1, messages = upto, executed_by = by, draw = u,
    student_action = sa or json.null, teacher_action = ta or json.null,
    agree = sa ~= nil and ta ~= nil and tools.key(sa) == tools.key(ta) }
  if st.format_error then rec.student_format_error = true end
  if tt.format_error then rec.teacher_format_error = true end
  if st.exhausted then rec.student_exhausted = true end
  if tt.exhausted then rec.teacher_exhausted = true end
  self.turns[#self.turns + 1] = rec
  self.by = by
  return turn
end

function Mixture:observe(turn, text)
  return self[self.by]:observe(turn, text)
end

--- The mixture's record in the trajectory: traj.episode_id and traj.dagger
--- {round, beta, seed, turns = [{turn, messages, executed_by, draw,
--- student_action, teacher_action, agree}], student, teacher = {calls,
--- tokens, cost}}. A turn's messages is how many of traj.messages were its
--- state (the history both policies saw).
function Mixture:annotate(traj)
  traj.episode_id = self.episode_id
  traj.dagger = { round = self.round, beta = self.beta, seed = self.seed, turns = self.turns,
    student = self.stats.student, teacher = self.stats.teacher }
end

return M
