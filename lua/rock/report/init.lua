--- rock.report: a run directory as a static site (docs/report.md).
--   rock report RUN_DIR [--out DIR] [--instances FILE]
-- writes DIR (default RUN_DIR/report): index.html (rock.report.index)
-- and t/<instance>.html per task (rock.report.trajectory), self-contained
-- (CSS, SVG and scripts inline, nothing fetched, from file:// too), every
-- text redacted (rock.report.redact) and escaped (rock.report.html).
-- M.live(dir, opts) is the agent recipe's: a task's page as it ends, the
-- index refreshed at most every few seconds (and at the latest then), the
-- whole report at the end.
local run_mod = require "rock.report.run"
local redact = require "rock.report.redact"
local index = require "rock.report.index"
local trajectory = require "rock.report.trajectory"
local output = require "rock.agent.output"
local json = require "rock.json"

local M = {}

-- write path whole: a temp file renamed into place (a reader never sees half)
local function put(path, data)
  local tmp = path .. ".tmp"
  local f, why = io.open(tmp, "wb")
  if not f then error("report: cannot write " .. path .. ": " .. tostring(why), 0) end
  local ok, werr = f:write(data)
  local closed, cerr = f:close()
  if not ok or not closed then
    os.remove(tmp)
    error("report: cannot write " .. path .. ": " .. tostring(werr or cerr), 0)
  end
  assert(os.rename(tmp, path))
end

--- The redactor of a run: its recorded secret flags (run.json keeps
--- only their names: a value that is the mark is no secret), this
--- environment's secrets, opts.secrets.
function M.redactor(info, extra)
  local secrets = redact.env_secrets()
  redact.secrets_of(type(info) == "table" and type(info.flags) == "table" and info.flags or {}, secrets)
  for _, s in ipairs(extra or {}) do secrets[#secrets + 1] = s end
  return redact.new(secrets)
end

--- Write the report of run dir; returns {out, tasks, pages, torn, seconds, index_bytes, redactions}.
--- opts: out (default dir/report), instances (a tasks file), secrets
--- (more values to hide), only (write only the index and these tasks'
--- pages: a set of instance ids), running (the index says so), loader
--- (a rock.report.run loader of dir kept between writes: each reads only
--- what the run added since).
function M.write(dir, opts)
  opts = opts or {}
  local uv = require "luv"
  local t0 = uv.hrtime()
  local out = opts.out or (dir .. "/report")
  local run = (opts.loader or run_mod.loader(dir, { instances = opts.instances })):load()
  output.mkdir(out .. "/t")
  local R = M.redactor(run.info, opts.secrets)
  local pages = 0
  for i, t in ipairs(run.tasks) do
    if (t.traj or t.torn) and (not opts.only or opts.only[t.id]) then
      local prev, nxt = run.tasks[i - 1], run.tasks[i + 1]
      local view = setmetatable({ traj = run_mod.full(run, t) }, { __index = t }) -- the whole trajectory, for this page only
      put(out .. "/t/" .. t.file .. ".html", trajectory.render(view, R, prev and (prev.traj or prev.torn) and prev.file,
        nxt and (nxt.traj or nxt.torn) and nxt.file, run_mod.read))
      pages = pages + 1
    end
  end
  -- the index last: the count of redactions covers every page written,
  -- the index's own too (put in once it is rendered)
  local page = index.render(run, R, { redactions = R.count, partial = opts.only ~= nil, running = opts.running })
  page = page:gsub('<span id="redactions">%d+</span>', '<span id="redactions">' .. R.count .. "</span>", 1)
  put(out .. "/index.html", page)
  return { out = out, tasks = #run.tasks, pages = pages, torn = run.torn, seconds = (uv.hrtime() - t0) / 1e9, index_bytes = #page,
           redactions = R.count }
end

--- Record a run's provenance in dir/run.json for its report: info is
--- {recipe, flags, started, ...}; flags whose names say secret keep
--- their names only (the value is written as the redaction mark).
function M.write_info(dir, info)
  local copy = {}
  for k, v in pairs(info) do copy[k] = v end
  if type(info.flags) == "table" then
    copy.flags = {}
    for k, v in pairs(info.flags) do
      if type(v) ~= "table" and type(v) ~= "function" then
        copy.flags[k] = type(v) == "string" and redact.secret_name(k) and redact.MARK or v
      end
    end
  end
  copy.rock_version = copy.rock_version or require("rock.core").version()
  output.mkdir(dir)
  put(dir .. "/run.json", json.encode(copy) .. "\n")
end

--- The git revision of the checkout holding path, or nil.
function M.git_revision(path)
  local dirname = path:match("^(.*)/[^/]*$") or "."
  local p = io.popen("git -C '" .. dirname:gsub("'", "'\\''") .. "' rev-parse --short=12 HEAD 2>/dev/null")
  if not p then return nil end
  local rev = p:read("l")
  p:close()
  return rev and rev:match("^%x+$") and rev or nil
end

--- A live report of a run in dir: l:task_done(traj) writes that task's
--- page and the index, at once or, within opts.every seconds (default 2)
--- of the last write, when that window ends (a timer): the index is never
--- more than a window behind. Its loader (rock.report.run) is kept, so a
--- write reads only the trajectories added since the last (at 2,000
--- tasks, the index's render is what is left: about 0.1 s CPU on the
--- loop). The window grows to 10 times the last write's seconds, so a big
--- run spends at most about a tenth of its time on the live report.
--- l:finish() writes the whole report.
--- opts: out, instances, secrets, every. Failures are logged, never
--- fatal: the report must not stop the run.
function M.live(dir, opts)
  opts = opts or {}
  local uv = require "luv"
  local log = require "rock.log"
  local l = { last = -math.huge, pending = {}, window = opts.every or 2 }
  local loader -- made on the first write (the instances file read then)
  local function write(o)
    if not loader then loader = run_mod.loader(dir, { instances = opts.instances }) end
    o.loader = loader
    return M.write(dir, o)
  end
  local timer
  local function now() return uv.hrtime() / 1e9 end
  local function try(f, ...)
    local ok, err = pcall(f, ...)
    if not ok then log.warn("report", "%s", tostring(err)) end
    return ok and err or nil
  end
  local function flush()
    if not next(l.pending) then return end
    local only = l.pending
    l.pending = {}
    local t0 = now()
    try(write, { out = opts.out, secrets = opts.secrets, only = only, running = true })
    l.last = now()
    l.window = math.max(opts.every or 2, 10 * (l.last - t0))
    l.writes = (l.writes or 0) + 1
  end
  function l:task_done(traj)
    if type(traj) ~= "table" or type(traj.instance_id) ~= "string" then return end
    self.pending[traj.instance_id] = true
    local wait = self.last + self.window - now()
    if wait <= 0 then return flush() end
    if not timer then
      timer = uv.new_timer()
      timer:start(math.ceil(wait * 1000), 0, function()
        timer:close()
        timer = nil
        flush()
      end)
    end
  end
  function l:finish()
    if timer then timer:stop(); timer:close(); timer = nil end
    self.pending = {}
    try(write, { out = opts.out, secrets = opts.secrets })
  end
  return l
end


--- A recipe's report of its run (swe_agent.lua, dagger_eval.lua), or nil
--- when o.report is false: r:task_done(traj) writes run.json once (the run
--- holds o.out by then) and the task's live page; r:finish() records the
--- end in run.json and writes the whole report. o: the recipe's flags
--- (out, instances, report; recorded in run.json, secrets redacted).
function M.for_run(o, recipe)
  if not o.report then return nil end
  local info = { recipe = recipe, flags = o, started = os.time(), git_revision = M.git_revision(arg and arg[0] or "") }
  local live = M.live(o.out, { instances = o.instances, secrets = require("rock.report.redact").secrets_of(o) })
  local written = false
  local r = {}
  function r.task_done(_, traj)
    if not written then
      pcall(M.write_info, o.out, info)
      written = true
    end
    live:task_done(traj)
  end
  function r.finish()
    info.finished = os.time()
    pcall(M.write_info, o.out, info)
    live:finish()
  end
  return r
end

return M
