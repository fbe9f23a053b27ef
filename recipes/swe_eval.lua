-- swe_eval.lua: grade predictions made by any agent, SWE-bench's way.
--   rock recipes/swe_eval.lua --instances FILE --predictions preds.jsonl|preds.json
--     --out DIR [--workers N] [--backend auto|docker|podman|local] [--eval-timeout S]
--     [--run-id ID] [--memory SIZE] [--pids-limit N] [--disk SIZE]
--     [--backend slurm [--partition P] ... (swe_agent.lua's Slurm flags: docs/clusters.md)]
-- Instances: tasks JSONL (or a JSON list) in SWE-bench's fields
-- (lua/rock/agent/tasks.lua); predictions: {instance_id,
-- model_name_or_path, model_patch} as JSONL, a JSON list or a JSON dict
-- keyed by instance_id. Each prediction is graded in a fresh sandbox of
-- its task's image (lua/rock/agent/grading.lua), N at a time. Writes
-- DIR/eval/<instance_id>.log, DIR/eval_results.jsonl (a line per task as
-- it finishes), SWE-bench's per-instance files under
-- DIR/logs/run_evaluation/<run_id>/<model>/<instance_id>/ (report.json,
-- test_output.txt, patch.diff, eval.sh) and its run report as
-- DIR/report.json and DIR/<model>.<run_id>.json, then prints a summary
-- table. Malformed lines are reported; the rest run.
local rock = require "rock"
local tasks = require "rock.agent.tasks"
local grading = require "rock.agent.grading"
local json = require "rock.json"
local uv = rock.uv

local usage = "rock recipes/swe_eval.lua --instances FILE --predictions FILE --out DIR " ..
  "[--workers N] [--backend auto|docker|podman|local] [--eval-timeout S] [--run-id ID] " ..
  "[--memory SIZE] [--pids-limit N] [--disk SIZE]"
local spec = {
  instances = { help = "tasks: JSONL or a JSON list, SWE-bench fields" },
  predictions = { help = "predictions: JSONL, a JSON list or a dict by instance_id" },
  out = { help = "output dir (eval/<id>.log, eval_results.jsonl, report.json)" },
  workers = { type = "number", default = 4, help = "evaluations at a time" },
  backend = { default = "auto", help = "auto|docker|podman|local|slurm" },
  eval_timeout = { type = "number", help = "seconds per evaluation (default: the task's, 1800)" },
  run_id = { default = "rock", help = "the run's id in SWE-bench's log layout and report name" },
  memory = { help = "each eval sandbox's memory limit (default " .. grading.EVAL_LIMITS.memory .. ")" },
  pids_limit = { type = "number", help = "each eval sandbox's process limit (default " ..
    grading.EVAL_LIMITS.pids_limit .. ")" },
  disk = { help = "each eval sandbox's disk limit (default " .. grading.EVAL_LIMITS.disk .. ")" },
}
-- --backend slurm: each eval sandbox a Slurm job; its flags (--partition, ...)
local slurm = require "rock.backends.slurm"
for k, v in pairs(slurm.FLAGS) do spec[k] = v end
local opts = rock.flags.parse(arg, spec, usage)
local sandbox = { backend = opts.backend }
for k, v in pairs(slurm.from_flags(opts, opts.backend)) do sandbox[k] = v end

local function die(msg)
  io.stderr:write("swe_eval: ", msg, "\n", "usage: ", usage, "\n")
  os.exit(2)
end
for _, f in ipairs({ "instances", "predictions", "out" }) do
  if not opts[f] then die("--" .. f .. " is required") end
end
local workers = math.tointeger(opts.workers)
if not workers or workers < 1 then die("--workers must be a whole number >= 1") end
if opts.eval_timeout and not (opts.eval_timeout > 0 and opts.eval_timeout <= 1e8) then
  die("--eval-timeout must be a number of seconds > 0")
end
if not opts.run_id:match("^[%w][%w_.%-]*$") then die("--run-id must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$") end
local limits = { memory = opts.memory, disk = opts.disk }
if opts.pids_limit then
  limits.pids_limit = math.tointeger(opts.pids_limit)
  if not limits.pids_limit or limits.pids_limit < 1 then die("--pids-limit must be a whole number >= 1") end
end

local function mkdir_p(path)
  local sofar = path:sub(1, 1) == "/" and "" or "."
  for part in path:gmatch("[^/]+") do
    sofar = sofar .. "/" .. part
    local st = uv.fs_stat(sofar)
    if not st then
      local ok, err = uv.fs_mkdir(sofar, tonumber("755", 8))
      if not ok and not uv.fs_stat(sofar) then die("cannot make " .. sofar .. ": " .. tostring(err)) end
    elseif st.type ~= "directory" then
      die(sofar .. " is not a directory")
    end
  end
end

-- the instances
local ok, list, bad = pcall(tasks.load, opts.instances)
if not ok then die(tostring(list)) end
for _, e in ipairs(bad) do
  io.stderr:write(string.format("swe_eval: %s line %d: %s (skipped)\n", opts.instances, e.line, e.message))
end
local by_id = {}
for _, t in ipairs(list) do by_id[t.instance_id] = t end

-- the predictions: JSONL, a JSON list, or a JSON dict keyed by instance_id
local preds, pred_errors, order = {}, {}, {}
do
  local f, why = io.open(opts.predictions, "rb")
  if not f then die("cannot open predictions: " .. tostring(why)) end
  local text = tasks.strip_bom(f:read("a"))
  f:close()
  local items = {}
  local dok, whole = pcall(json.decode, text)
  if dok and type(whole) == "table" then
    if type(whole.instance_id) == "string" then
      items[1] = { 1, whole }
    elseif #whole > 0 or next(whole) == nil then
      for i, p in ipairs(whole) do items[#items + 1] = { i, p } end
    else
      local keys = {}
      for k in pairs(whole) do keys[#keys + 1] = k end
      table.sort(keys)
      for i, k in ipairs(keys) do
        local p = whole[k]
        if type(p) == "table" and p.instance_id == nil then p.instance_id = k end
        items[#items + 1] = { i, p }
      end
    end
  else
    local n = 0
    for line in (text .. "\n"):gmatch("([^\n]*)\n") do
      n = n + 1
      if line:match("%S") then
        local lok, p = pcall(json.decode, line)
        if lok then items[#items + 1] = { n, p } else
          pred_errors[#pred_errors + 1] = { line = n, message = "bad JSON: " .. tostring(p) }
        end
      end
    end
  end
  for _, it in ipairs(items) do
    local n, p = it[1], it[2]
    local msg
    if type(p) ~= "table" or type(p.instance_id) ~= "string" then
      msg = "a prediction needs a string instance_id"
    elseif p.model_patch ~= nil and p.model_patch ~= json.null and type(p.model_patch) ~= "string" then
      msg = "model_patch must be a string"
    elseif preds[p.instance_id] then
      msg = "a second prediction for " .. p.instance_id
    elseif not by_id[p.instance_id] then
      msg = "no instance " .. p.instance_id .. " in " .. opts.instances
    end
    if msg then
      pred_errors[#pred_errors + 1] = { line = n, message = msg }
    else
      if p.model_patch == json.null then p.model_patch = nil end
      preds[p.instance_id] = p
      order[#order + 1] = p.instance_id
    end
  end
end
for _, e in ipairs(pred_errors) do
  io.stderr:write(string.format("swe_eval: %s item %d: %s (skipped)\n", opts.predictions, e.line, e.message))
end

mkdir_p(opts.out .. "/eval")
local results_file = assert(io.open(opts.out .. "/eval_results.jsonl", "wb"))
local results, done = {}, 0
local t_start = uv.hrtime()

local function write_file(path, text)
  local f, why = io.open(path, "wb")
  if not f then
    io.stderr:write("swe_eval: cannot write ", path, ": ", tostring(why), "\n")
    return
  end
  f:write(text)
  f:close()
end

-- SWE-bench's per-instance files: logs/run_evaluation/<run_id>/<model>/<id>/
local function instance_files(id, res)
  local p = preds[id]
  local model = tostring(p.model_name_or_path or "None"):gsub("/", "__")
  local dir = string.format("%s/logs/run_evaluation/%s/%s/%s", opts.out, opts.run_id, model, id)
  mkdir_p(dir)
  write_file(dir .. "/report.json", json.encode(grading.swebench_report(res, p.model_patch)) .. "\n")
  write_file(dir .. "/patch.diff", p.model_patch or "")
  if res.test_output and res.test_output ~= "" then write_file(dir .. "/test_output.txt", res.test_output) end
  if res.eval_script then write_file(dir .. "/eval.sh", res.eval_script) end
  write_file(dir .. "/run_instance.log", res.log or "")
end

local function record(id, res)
  local p = preds[id]
  local line = {
    instance_id = id, model_name_or_path = p.model_name_or_path,
    status = res.status, resolved = res.resolved, applied = res.applied,
    apply_method = res.apply_method, test_exit_code = res.test_exit_code,
    report = res.report, error = res.error, seconds = res.seconds, log_path = res.log_path,
  }
  results[id] = res
  instance_files(id, res)
  results_file:write(json.encode(line), "\n")
  results_file:flush()
  done = done + 1
  io.stderr:write(string.format("[%d/%d] %s %s%s (%.1f s)\n", done, #order, id, res.status,
    res.error and (": " .. res.error.code .. ": " .. res.error.message:sub(1, 200)) or "", res.seconds or 0))
end

local sem = rock.semaphore(workers)
local running = {}
for _, id in ipairs(order) do
  running[#running + 1] = rock.spawn(function()
    sem:with(function()
      local rok, res = pcall(grading.run, by_id[id], preds[id].model_patch, {
        sandbox = sandbox, limits = limits, timeout = opts.eval_timeout,
        log_path = opts.out .. "/eval/" .. id .. ".log",
      })
      if not rok then -- grading.run raises only for misuse or a cancel
        res = { instance_id = id, status = "error", resolved = false, applied = false, seconds = 0,
                error = { code = rock.errors.is(res) and res.code or "internal",
                          message = rock.errors.is(res) and tostring(res.message) or tostring(res) } }
      end
      record(id, res)
    end)
  end)
end
rock.wait(running)
results_file:close()

-- SWE-bench's run report
local function ids() return json.array() end
local rep = { submitted_ids = ids(), completed_ids = ids(), incomplete_ids = ids(), empty_patch_ids = ids(),
              resolved_ids = ids(), unresolved_ids = ids(), error_ids = ids() }
local function add(k, id) rep[k][#rep[k] + 1] = id end
for _, id in ipairs(order) do add("submitted_ids", id) end
for _, t in ipairs(list) do
  local id, res = t.instance_id, results[t.instance_id]
  if not res then
    add("incomplete_ids", id)
  elseif res.status == "empty_patch" then
    add("empty_patch_ids", id)
  elseif res.status == "error" then
    add("error_ids", id)
  else
    add("completed_ids", id)
    add(res.resolved and "resolved_ids" or "unresolved_ids", id)
  end
end
for k in pairs(rep) do table.sort(rep[k]) end
rep.total_instances = #list
rep.submitted_instances = #rep.submitted_ids
rep.completed_instances = #rep.completed_ids
rep.incomplete_instances = #rep.incomplete_ids
rep.resolved_instances = #rep.resolved_ids
rep.unresolved_instances = #rep.unresolved_ids
rep.empty_patch_instances = #rep.empty_patch_ids
rep.error_instances = #rep.error_ids
rep.schema_version = 2
rep.malformed_instances = json.array(bad)
rep.malformed_predictions = json.array(pred_errors)
local rf = assert(io.open(opts.out .. "/report.json", "wb"))
rf:write(json.encode(rep), "\n")
rf:close()
-- SWE-bench's name for the run report: <model>.<run_id>.json
local first = order[1] and preds[order[1]]
local model = first and tostring(first.model_name_or_path or "None"):gsub("/", "__") or "None"
write_file(string.format("%s/%s.%s.json", opts.out, model, opts.run_id), json.encode(rep) .. "\n")

-- the summary table
local function counts(side)
  if not side then return "-" end
  return string.format("%d/%d", #side.success, #side.success + #side.failure)
end
print(string.format("%-32s %-12s %-8s %-8s %8s", "instance", "status", "F2P", "P2P", "seconds"))
for _, id in ipairs(order) do
  local r = results[id]
  print(string.format("%-32s %-12s %-8s %-8s %8.1f", id, r.status,
    counts(r.report and r.report.FAIL_TO_PASS), counts(r.report and r.report.PASS_TO_PASS), r.seconds or 0))
end
print(string.format("total %d, submitted %d, completed %d, resolved %d, unresolved %d, " ..
  "empty patch %d, error %d, incomplete %d (%.1f s); %s/report.json", rep.total_instances,
  rep.submitted_instances, rep.completed_instances, rep.resolved_instances, rep.unresolved_instances,
  rep.empty_patch_instances, rep.error_instances, rep.incomplete_instances,
  (uv.hrtime() - t_start) / 1e9, opts.out))
