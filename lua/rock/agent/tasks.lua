--- rock.agent.tasks: SWE-bench task instances, read from JSONL (or a JSON
-- list) and normalized: the test lists always Lua lists, defaults filled.
--   local list, errs = tasks.load("tasks.jsonl")  -- errs: {line=, message=}
--   local t, why = tasks.normalize(decoded)
-- Grading reads these fields (grading.lua); the agent loop reads
-- problem_statement, image, repo_dir. A classic SWE-bench row (repo,
-- version) gets its test command, parser and eval type from SWE-bench's
-- specs (rock.agent.swebench); a 5.x row's eval_script, log_parser,
-- eval_type and image are taken as given. Read next: grading.lua.
local json = require "rock.json"
local errors = require "rock.errors"
local images = require "rock.images"
local swe = require "rock.agent.swebench"

local M = {}

--- Defaults of the optional fields (docs/agent.md).
M.DEFAULT_REPO_DIR = "/testbed"
M.DEFAULT_TEST_CMD = "pytest -rA --tb=no -p no:cacheprovider"
M.DEFAULT_EVAL_TIMEOUT = 1800

---@class rock.Task
---@field instance_id string   ^[A-Za-z0-9][A-Za-z0-9_.-]*$ (it names log files)
---@field repo string           "owner/name"
---@field base_commit string
---@field problem_statement string
---@field patch string|nil      the gold patch
---@field test_patch string
---@field FAIL_TO_PASS string[]
---@field PASS_TO_PASS string[]
---@field image string          default rock.images.swebench_name(instance_id)
---@field repo_dir string       default "/testbed"
---@field version string|nil    SWE-bench's version of repo (picks the spec)
---@field test_cmd string|nil   default: the spec's (a list of lines joined with "\n"), else (a repo SWE-bench does not
---                             have) "pytest -rA --tb=no -p no:cacheprovider"; nil
---                             when the task has its own eval_script
---@field eval_script string|nil a 5.x row's script, run as given
---@field log_parser string     default: the repo's (SWE-bench's map), else parse_log_pytest
---@field eval_type string      "pass_and_fail" (default) or "fail_only"
---@field startup_source string[] files the eval script sources first (default none)
---@field eval_timeout number   seconds, default 1800
---@field memory string|number|nil  the eval sandbox's limits (grading.EVAL_LIMITS)
---@field pids_limit integer|nil
---@field disk string|number|nil

local function is_null(v) return v == nil or v == json.null end

-- a list of strings, or a JSON string holding one (as the datasets ship them)
local function test_list(v, field)
  if type(v) == "string" then
    local ok, decoded = pcall(json.decode, v)
    if not ok or type(decoded) ~= "table" then
      return nil, string.format("'%s' is a string that does not hold a JSON list", field)
    end
    v = decoded
  end
  if type(v) ~= "table" then
    return nil, string.format("'%s' must be a list of test names (or a string holding one)", field)
  end
  local n = #v
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 or k > n then
      return nil, string.format("'%s' must be a list, not an object", field)
    end
  end
  local out = {}
  for i = 1, n do
    if type(v[i]) ~= "string" then
      return nil, string.format("'%s'[%d] must be a string", field, i)
    end
    out[i] = v[i]
  end
  return json.array(out)
end

--- The text without a leading UTF-8 byte order mark (editors on Windows
--- write one; JSON does not allow it).
---@param text string
---@return string
function M.strip_bom(text)
  if text:sub(1, 3) == "\239\187\191" then return text:sub(4) end
  return text
end

local REQUIRED = { "instance_id", "repo", "base_commit", "problem_statement", "test_patch" }

-- v as an integer when it is a whole number in [lo, hi] (compared first:
-- a float past 2^63 has no integer), else nil
local function whole(v, lo, hi)
  if type(v) ~= "number" or v ~= v or v < lo or v > hi then return nil end
  return math.tointeger(v)
end

--- Check a decoded task and fill its defaults. Returns a new table (the
--- input's unknown fields kept), or nil and a message naming the field.
---@param t table
---@return rock.Task|nil, string|nil
function M.normalize(t)
  if type(t) ~= "table" then return nil, "a task must be a JSON object" end
  local out = {}
  for k, v in pairs(t) do
    if not is_null(v) then out[k] = v end
  end
  for _, f in ipairs(REQUIRED) do
    if out[f] == nil then return nil, string.format("missing required field '%s'", f) end
    if type(out[f]) ~= "string" then return nil, string.format("'%s' must be a string", f) end
  end
  local id = out.instance_id
  if #id > 200 or not id:match("^[%w][%w_.%-]*$") then
    return nil, string.format("'instance_id' %q must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$ " ..
      "(at most 200 characters: it names files)", id)
  end
  -- it reaches git's argv and the eval script: a leading "-" would be an
  -- option (`--orphan`, `-b x`), ".." a range
  local bc = out.base_commit
  if not bc:match("^[%w._/-]+$") or bc:sub(1, 1) == "-" or bc:find("..", 1, true) then
    return nil, string.format("'base_commit' %q is not a commit name", bc)
  end
  for _, f in ipairs({ "FAIL_TO_PASS", "PASS_TO_PASS" }) do
    if out[f] == nil then return nil, string.format("missing required field '%s'", f) end
    local list, why = test_list(out[f], f)
    if not list then return nil, why end
    out[f] = list
  end
  for _, f in ipairs({ "patch", "image", "repo_dir", "test_cmd", "version", "eval_script", "log_parser",
                       "eval_type" }) do
    if out[f] ~= nil and type(out[f]) ~= "string" then
      return nil, string.format("'%s' must be a string%s", f,
        f == "version" and " (as the datasets ship it: \"3.0\", not 3.0)" or "")
    end
  end
  out.image = out.image or images.swebench_name(id)
  out.repo_dir = out.repo_dir or M.DEFAULT_REPO_DIR
  if not out.eval_script and not out.test_cmd then
    local spec = swe.spec(out.repo, out.version)
    if spec then
      out.test_cmd = swe.test_cmd_of(spec)
      if not out.test_cmd then
        return nil, string.format("SWE-bench's spec for %s %s has no test command: give the task " ..
          "'test_cmd' or 'eval_script'", out.repo, out.version)
      end
    elseif swe.known_repo(out.repo) then
      return nil, string.format("SWE-bench has no spec for %s version %s: give the task 'version' " ..
        "(one of SWE-bench's), 'test_cmd' or 'eval_script'", out.repo, tostring(out.version))
    else
      out.test_cmd = M.DEFAULT_TEST_CMD
    end
  end
  out.log_parser = out.log_parser or swe.parser_for(out.repo) or "parse_log_pytest"
  if not require("rock.agent.parsers").get(out.log_parser) then
    return nil, string.format("'log_parser' %q is no parser rock has (rock.agent.parsers.names())",
      out.log_parser)
  end
  if out.eval_type == nil then
    out.eval_type = swe.FAIL_ONLY_REPOS[out.repo] and "fail_only" or "pass_and_fail"
  elseif out.eval_type ~= "pass_and_fail" and out.eval_type ~= "fail_only" then
    return nil, "'eval_type' must be \"pass_and_fail\" or \"fail_only\""
  end
  -- limits: whole numbers in range, checked before any conversion (JSON
  -- numbers are floats: 1e30 has no integer, and must not become none)
  for _, f in ipairs({ "memory", "disk" }) do
    local v = out[f]
    if type(v) == "string" then
      local ok, err = pcall(require("rock.images").parse_size, v, "'" .. f .. "'")
      if not ok then return nil, tostring(errors.is(err) and err.message or err) end
    elseif v ~= nil then
      local n = whole(v, 1, 2 ^ 62)
      if not n then
        return nil, string.format("'%s' must be a size (\"8g\") or a number of bytes from 1 to 2^62, got %s",
          f, tostring(v))
      end
      out[f] = n
    end
  end
  if out.pids_limit ~= nil then
    local n = whole(out.pids_limit, 1, 1 << 31)
    if not n then
      return nil, string.format("'pids_limit' must be a whole number from 1 to %d, got %s", 1 << 31,
        tostring(out.pids_limit))
    end
    out.pids_limit = n
  end
  local src = out.startup_source
  if type(src) == "string" then src = { src } end
  if src ~= nil then
    if type(src) ~= "table" then return nil, "'startup_source' must be a list of paths (or one path)" end
    for i, p in ipairs(src) do
      if type(p) ~= "string" then return nil, string.format("'startup_source'[%d] must be a string", i) end
    end
  end
  out.startup_source = src or {}
  local to = out.eval_timeout
  if to == nil then
    out.eval_timeout = M.DEFAULT_EVAL_TIMEOUT
  elseif type(to) ~= "number" or to ~= to or to <= 0 or to > 1e8 then
    return nil, "'eval_timeout' must be a number of seconds (0 < s <= 1e8)"
  end
  return out
end

--- Read tasks from a file: JSON lines (one object per line; blank lines
--- skipped) or one JSON list. A malformed line (bad JSON, a missing or
--- mistyped field, a repeated instance_id) is reported in errors as
--- {line=n, message=} and the other lines still load. A file that cannot
--- be read raises io_error.
---@param path string
---@return rock.Task[] tasks, table[] errors
function M.load(path)
  if type(path) ~= "string" then
    errors.raise("invalid_argument", "tasks.load: 'path' must be a string")
  end
  local f, why = io.open(path, "rb")
  if not f then errors.raise("io_error", "tasks.load: cannot open " .. tostring(why)) end
  local text = f:read("a")
  f:close()
  text = M.strip_bom(text)
  local list, errs, seen = {}, {}, {}
  local function add(n, v)
    local t, msg = M.normalize(v)
    if t and seen[t.instance_id] then
      t, msg = nil, string.format("instance_id %s repeats line %d", t.instance_id, seen[t.instance_id])
    end
    if t then
      seen[t.instance_id] = n
      list[#list + 1] = t
    else
      errs[#errs + 1] = { line = n, message = msg }
    end
  end
  if text:match("^%s*%[") then -- a JSON list (a dataset saved as JSON)
    local ok, v = pcall(json.decode, text)
    if not ok or type(v) ~= "table" then
      errs[1] = { line = 1, message = "bad JSON: " .. tostring(v) }
      return list, errs
    end
    for i, item in ipairs(v) do add(i, item) end
    return list, errs
  end
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if line:match("%S") then
      local ok, v = pcall(json.decode, line)
      if not ok then
        errs[#errs + 1] = { line = n, message = "bad JSON: " .. tostring(v) }
      else
        add(n, v)
      end
    end
  end
  return list, errs
end

return M
