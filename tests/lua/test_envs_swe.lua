-- test_envs_swe.lua: the SWE task as an environment, swe:<instance_id>
-- (rock.envs.swe), on the local backend: the demo calc task (recipes/demo)
-- solved through step with the gold patch's edits (reward 1), a wrong
-- edit (reward 0), the step budget (truncated), bad input.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local tasks = require "rock.agent.tasks"
local envs = rock.envs

local demo = here .. "../../recipes/demo/"
local tmp = T.sh("mktemp -d /tmp/rock-envs-swe.XXXXXX"):gsub("%s+$", "")
local list = tasks.load(demo .. "tasks.jsonl")
local calc
for _, t in ipairs(list) do if t.instance_id == "demo__calc-1" then calc = t end end
calc.repo_dir = tmp .. "/calc"
T.must(T.q(demo .. "make-repo") .. " calc " .. T.q(calc.repo_dir))

local function make(extra)
  local o = { task = calc, backend = "local" }
  for k, v in pairs(extra or {}) do o[k] = v end
  return envs.make("swe:demo__calc-1", o)
end

T.test("the gold patch's edits, then submit: reward 1, terminated", function()
  local e = make()
  local obs, info = e:reset()
  T.eq(obs, calc.problem_statement)
  T.eq(info.instance_id, "demo__calc-1")
  local o, r, term, trunc, i = e:step("grep -n \"'.'\" calc/tokens.py; echo done")
  T.match(o, "<returncode>%d+</returncode>"); T.eq(r, 0.0); T.eq(term, false); T.eq(trunc, false)
  T.eq(type(i.exit_code), "number")
  o = e:step("git apply " .. T.q(T.sh("realpath " .. T.q(demo .. "patches/calc.gold.diff")):gsub("%s+$", "")))
  T.match(o, "<returncode>0</returncode>")
  local o2, r2, term2, trunc2, info2 = e:step({ tool = "submit" })
  T.eq(r2, 1.0, "resolved: " .. tostring(info2.eval and info2.eval.status))
  T.eq(term2, true); T.eq(trunc2, false)
  T.eq(info2.eval.resolved, true)
  T.match(info2.patch, "calc/")
  T.raises("conflict", e.step, e, "true")
  e:close()
  e:close()
end)

T.test("a wrong edit (the editor), then submit: reward 0", function()
  local e = make()
  e:reset()
  local o = e:step({ tool = "str_replace_editor", command = "insert", path = calc.repo_dir .. "/calc/tokens.py",
    insert_line = 0, new_str = "# decimals: to do" })
  T.match(o, "has been edited")
  local _, r, term, _, info = e:step({ tool = "submit" })
  T.eq(r, 0.0); T.eq(term, true)
  T.eq(info.eval.resolved, false)
  -- reset again: a fresh sandbox at base_commit, the edit gone
  e:reset()
  local o3 = e:step("git status --porcelain | wc -l")
  T.match(o3, "<output>\n0\n")
  e:close()
end)

T.test("step_limit ends it truncated; bad actions and unknown tasks raise", function()
  local e = make({ step_limit = 2 })
  T.raises("conflict", e.step, e, "true")
  e:reset()
  local _, _, term, trunc = e:step("true")
  T.eq(term, false); T.eq(trunc, false)
  local _, r, term2, trunc2 = e:step("true")
  T.eq(r, 0.0); T.eq(term2, true); T.eq(trunc2, true)
  e:reset()
  T.raises("invalid_argument", e.step, e, 42)
  T.raises("invalid_argument", e.step, e, { command = "no tool" })
  e:close()
  T.raises("not_found", envs.make, "swe:nope__x-1", { tasks = list })
  T.raises("not_found", envs.make, "swe:demo__calc-1", {})
  local e2 = envs.make("swe:demo__calc-1", { tasks = demo .. "tasks.jsonl", backend = "local" })
  T.eq(e2.task.instance_id, "demo__calc-1")
end)

os.execute("rm -rf " .. T.q(tmp))
T.done()
