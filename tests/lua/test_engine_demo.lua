-- test_engine_demo.lua: the demo tasks graded in their images (docker,
-- and one on podman): gold patches resolve, empty patches are
-- empty_patch, breaking patches do not resolve; recipes/swe_eval.lua run
-- as a user runs it. Needs the engines fixture (tests/engines/up builds
-- the demo images with recipes/demo/build-image).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local tasks = require "rock.agent.tasks"
local grading = require "rock.agent.grading"

local here = arg[0]:match("(.*/)")
local demo = here .. "../../recipes/demo/"
local tmp = T.sh("mktemp -d /tmp/rock-demo-test.XXXXXX"):gsub("%s+$", "")
local q = T.q
local slurp = T.read

local list, errs = tasks.load(demo .. "tasks.jsonl")
T.eq(#errs, 0, "the demo tasks load")
T.eq(#list, 3)

-- a patch that breaks the task's package: its __init__ imports nothing there
local function breaking_patch(t)
  local name = t.repo:match("/(.*)")
  local dir = tmp .. "/break-" .. name
  local out, ok = T.sh(q(demo .. "make-repo") .. " " .. name .. " " .. q(dir) .. " && cd " .. q(dir) ..
    " && echo 'import no_such_module_here' >> " .. name .. "/__init__.py && git diff")
  T.ok(ok, out)
  return out
end

T.test("docker: every demo task's gold patch resolves", function()
  for _, t in ipairs(list) do
    local r = grading.run(t, t.patch, { sandbox = { backend = "docker" }, log_path = tmp .. "/" .. t.instance_id .. ".log" })
    T.eq(r.status, "resolved", t.instance_id .. ": " .. tostring(r.report and r.report.reason) ..
      tostring(r.error and r.error.message))
    T.eq(#r.report.FAIL_TO_PASS.success, #t.FAIL_TO_PASS)
    T.eq(#r.report.PASS_TO_PASS.success, #t.PASS_TO_PASS)
    T.match(slurp(r.log_path), "\n%+ : '>>>>> End Test Output'\n")
  end
  T.eq(rock.sandbox.live_count(), 0, "every sandbox stopped")
end)

T.test("docker: empty patches and breaking patches", function()
  for _, t in ipairs(list) do
    local r = grading.run(t, "", { sandbox = { backend = "docker" } })
    T.eq(r.status, "empty_patch")
    r = grading.run(t, breaking_patch(t), { sandbox = { backend = "docker" } })
    T.eq(r.status, "unresolved", t.instance_id)
    T.ok(r.applied)
    T.eq(#r.report.FAIL_TO_PASS.success, 0, "nothing passes once the import fails")
    T.eq(r.report.FAIL_TO_PASS.failure[1], t.FAIL_TO_PASS[1])
  end
  T.eq(rock.sandbox.live_count(), 0)
end)

T.test("docker: an image that is not there is an error result", function()
  local t = {}
  for k, v in pairs(list[1]) do t[k] = v end
  t.image = "rock-test-tmp/no-such-demo-image:1"
  local r = grading.run(t, t.patch, { sandbox = { backend = "docker", pull = "never" } })
  T.eq(r.status, "error"); T.eq(r.error.code, "image_not_found")
end)

T.test("podman: a gold patch resolves", function()
  local t = list[1]
  local r = grading.run(t, t.patch, { sandbox = { backend = "podman" } })
  T.eq(r.status, "resolved", tostring(r.error and r.error.message))
end)

T.test("swe_eval.lua on gold predictions: all resolved, report.json right", function()
  local preds = {}
  for _, t in ipairs(list) do
    preds[#preds + 1] = rock.json.encode{ instance_id = t.instance_id, model_name_or_path = "gold",
                                          model_patch = t.patch }
  end
  preds[#preds + 1] = "{not json"
  local pf = tmp .. "/preds.jsonl"
  local f = assert(io.open(pf, "wb"))
  f:write(table.concat(preds, "\n"), "\n")
  f:close()
  local out_dir = tmp .. "/out"
  local out, ok = T.sh(q(T.rock_exe()) .. " " .. q(here .. "../../recipes/swe_eval.lua") ..
    " --instances " .. q(demo .. "tasks.jsonl") .. " --predictions " .. q(pf) .. " --out " .. q(out_dir) ..
    " --workers 2 --backend docker")
  T.ok(ok, "swe_eval ran: " .. out)
  T.match(out, "resolved 3, unresolved 0")
  T.match(out, "preds%.jsonl item 4: bad JSON")
  local rep = rock.json.decode(slurp(out_dir .. "/report.json"))
  T.eq(rep.total_instances, 3); T.eq(rep.submitted_instances, 3); T.eq(rep.completed_instances, 3)
  T.eq(rep.resolved_instances, 3); T.eq(rep.error_instances, 0); T.eq(rep.empty_patch_instances, 0)
  T.eq(#rep.resolved_ids, 3); T.eq(#rep.unresolved_ids, 0); T.eq(#rep.incomplete_ids, 0)
  T.eq(#rep.malformed_predictions, 1)
  T.match(slurp(out_dir .. "/report.json"), '"unresolved_ids":%[%]', "empty lists are lists")
  local n = 0
  for line in io.lines(out_dir .. "/eval_results.jsonl") do
    local r = rock.json.decode(line)
    n = n + 1
    T.eq(r.status, "resolved"); T.eq(r.model_name_or_path, "gold")
    T.match(slurp(out_dir .. "/eval/" .. r.instance_id .. ".log"), "\n%+ : '>>>>> Start Test Output'\n")
  end
  T.eq(n, 3)
end)

T.sh("rm -rf " .. q(tmp))
T.done()
