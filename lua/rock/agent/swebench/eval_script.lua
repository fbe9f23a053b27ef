--- rock.agent.swebench.eval_script: the eval script of a task, as
-- SWE-bench writes it, and the same script with what rock adds for a grade
-- no patch can forge.
--   es.directives(task)       -- the test command's arguments (django: dotted labels;
--                                none for a Multilingual repo)
--   es.modified_files(patch)  -- the a/ files of a test patch (reset before and after)
--   es.patch_paths(patch)     -- each file's path as unidiff's PatchedFile.path gives it
--   es.classic(task, opts)    -- SWE-bench 4.1.0's script for a row without eval_script:
--                                make_eval_script_list_py for a Python repo (or one
--                                SWE-bench has no spec for), _common / _js for the
--                                other languages (swe.family)
--   es.swebench(task, opts)   -- what SWE-bench 5.0.x runs: the row's eval_script (or
--                                the classic one) with the test command's exit code
--                                recorded after the end marker
--   es.rock(task, opts)       -- that script with rock's additions (below)
-- opts.conda: activate /opt/miniconda3's testbed env in a task SWE-bench
-- has no spec for (a spec'd repo always activates, as SWE-bench does).
--
-- rock's additions, none of which prints a line of its own (their traces
-- go to /dev/null; `set -x` prints the rest exactly as SWE-bench's):
--   * the script runs from memory (`bash -c`: `bash eval.sh` rereads the
--     file as it goes, so a test that appends to it runs its own lines);
--     its output goes to the log, fd 4 to rock;
--   * `git` is a function that runs git with hooks and fsmonitor off;
--   * the test command runs in a subshell without fd 4; right after it,
--     every other process of the sandbox is killed, and again when the
--     script exits: in a container (the rocklet is pid 1, the script its
--     child) by kill(-1), which signals every process but pid 1 and the
--     caller at once (no fork slips between), repeated until /proc holds
--     nothing else alive (200 passes at most); elsewhere the rocklet's
--     descendants, found by walking /proc, stopped, then killed. Each
--     /proc/PID/stat is read whole and its fields after its LAST ") "
--     (a process name may hold ") " and newlines);
--   * the log's offsets after the start marker and before the end marker,
--     and the test command's exit code, are kept in the shell and written
--     to fd 4 as the script's last act (`rock-eval-report rc= start= end=
--     size=`), once nothing else is left that could write.
local swe = require "rock.agent.swebench"

local M = {}

M.HEREDOC = "EOF_114329324912"

--- Scripts longer than this are run with `source` from a file (an argv
--- string holds at most 128 KiB): their trace lines start with "++ ".
M.ARGV_MAX = 120000

local find, sub = string.find, string.sub

local function each_line(s, fn)
  local pos, n = 1, #s
  while pos <= n + 1 do
    local nl = find(s, "\n", pos, true)
    if not nl then fn(sub(s, pos)) return end
    fn(sub(s, pos, nl - 1))
    pos = nl + 1
  end
end

local function ends(s, p) return #s >= #p and sub(s, -#p) == p end

local function non_test(path)
  for _, ext in ipairs(swe.NON_TEST_EXTS) do
    if ends(path, ext) then return true end
  end
  return false
end

--- The b/ paths of the test patch's `diff --git a/... b/...` text, as
--- SWE-bench's `diff --git a/.* b/(.*)` finds them (in any line, the last
--- " b/" of the line), without its NON_TEST_EXTS; for django/django each
--- becomes a dotted label (tests/ and .py dropped, "/" -> ".").
--- None for a repo of another language than Python: 4.1.0 calls
--- get_test_directives only in make_eval_script_list_py, and runs the
--- other languages' test commands as the spec gives them.
---@param task table
---@return string[]
function M.directives(task)
  if task.repo == "swe-bench/humaneval" then return { "test.py" } end
  local family = swe.family(task.repo)
  if family and family ~= "python" then return {} end
  local out = {}
  each_line(task.test_patch or "", function(line)
    local i = find(line, "diff --git a/", 1, true)
    if not i then return end
    local at, from = nil, i + 13
    while true do
      local j = find(line, " b/", from, true)
      if not j then break end
      at, from = j, j + 1
    end
    if not at then return end
    local d = sub(line, at + 3)
    if non_test(d) then return end
    if task.repo == "django/django" then
      if ends(d, ".py") then d = sub(d, 1, -4) end
      if sub(d, 1, 6) == "tests/" then d = sub(d, 7) end
      d = d:gsub("/", ".")
    end
    out[#out + 1] = d
  end)
  return out
end

-- the files of a patch as unidiff's PatchSet reads them, in order:
-- { source = "a/x" | "/dev/null" | ..., target = "b/x" | "/dev/null" | ... }
local function patch_files(test_patch)
  local files, cur, last_source = {}, nil, nil
  local old, new = 0, 0
  local function add(f) files[#files + 1] = f end
  each_line(test_patch or "", function(line)
    local c = sub(line, 1, 1)
    if (old > 0 or new > 0) and (c == " " or c == "-" or c == "+" or c == "\\" or line == "") then
      if c == "-" then old = old - 1
      elseif c == "+" then new = new - 1
      elseif c ~= "\\" then old, new = old - 1, new - 1 end
      return
    end
    old, new = 0, 0
    if line:match("^diff %-%-git ") then
      -- unidiff's `(a/)?[^\t\n]+ (b/)?[^\t\n]+`: the source runs to the last space
      local body = sub(line, 12):match("^[^\t]*")
      local sp, from = nil, 1
      while true do
        local j = find(body, " ", from, true)
        if not j then break end
        sp, from = j, j + 1
      end
      if sp and sp > 1 and sp < #body then
        cur = { source = sub(body, 1, sp - 1), target = sub(body, sp + 1) }
        last_source = cur.source
        add(cur)
      end
      return
    end
    if line:match("^new file mode %d+$") and cur then cur.source = "/dev/null" return end
    if line:match("^deleted file mode %d+$") and cur then cur.target = "/dev/null" return end
    local s = line:match("^%-%-%- ([^\t]+)")
    if s then
      last_source = s
      if cur and cur.source ~= s then cur = nil end
      return
    end
    local t = line:match("^%+%+%+ ([^\t]+)")
    if t then
      if not cur and last_source then
        cur = { source = last_source, target = t }
        add(cur)
      end
      return
    end
    local a, b = require("rock.agent.swebench.patch").hunk_counts(line)
    if a then
      old, new = a, b
      return
    end
  end)
  return files
end

--- The files a test patch changes that exist before it (unidiff's
--- source files without /dev/null, "a/" removed), in order: the eval
--- script checks them out at base_commit before and after the tests.
---@param test_patch string
---@return string[]
function M.modified_files(test_patch)
  local out = {}
  for _, f in ipairs(patch_files(test_patch)) do
    if f.source ~= "/dev/null" and sub(f.source, 1, 2) == "a/" then out[#out + 1] = sub(f.source, 3) end
  end
  return out
end

--- Each file's path as unidiff's PatchedFile.path gives it: the source
--- file, or the target for a new file or a rename, without "a/" or "b/".
---@param test_patch string
---@return string[]
function M.patch_paths(test_patch)
  local out = {}
  for _, f in ipairs(patch_files(test_patch)) do
    local p = f.source
    if p == "/dev/null" or (f.source ~= "/dev/null" and f.target ~= "/dev/null"
        and sub(f.source, 3) ~= sub(f.target, 3)) then
      p = f.target
    end
    if sub(p, 1, 2) == "a/" or sub(p, 1, 2) == "b/" then p = sub(p, 3) end
    out[#out + 1] = p
  end
  return out
end

-- a word for the shell: as it is when SWE-bench's unquoted text is safe,
-- else quoted (a name SWE-bench's script would break on); a leading "-"
-- gets "./" (not an option)
local function word(s)
  if sub(s, 1, 1) == "-" then s = "./" .. s end
  if s ~= "" and s:match("^[%w%._/+,=@:%-]+$") then return s end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function words(list)
  local out = {}
  for i, s in ipairs(list) do out[i] = word(s) end
  return table.concat(out, " ")
end

-- a heredoc delimiter that is no line of text
local function delimiter(text)
  local d = M.HEREDOC
  while find("\n" .. text .. "\n", "\n" .. d .. "\n", 1, true) do d = d .. "_" end
  return d
end

--- The test command of a task: its own, else its spec's (a list of lines
--- joined with "\n"), else nil.
function M.test_cmd(task)
  if task.test_cmd then return task.test_cmd end
  return swe.test_cmd_of(swe.spec(task.repo, task.version))
end

local function no_test_cmd(task)
  require("rock.errors").raise("invalid_argument", string.format(
    "%s: no test command: SWE-bench's spec for %s %s has none; set the task's test_cmd",
    task.instance_id, tostring(task.repo), tostring(task.version)))
end

--- SWE-bench 4.1.0's eval script lines (make_eval_script_list_py) for a
--- task without eval_script: activation, eval_commands, the informational
--- git commands, activation again, install, the reset of the test files,
--- the test patch, the markers around the test command and its directives,
--- the reset again; for a repo of another language, M.common_lines.
--- Raises invalid_argument when there is no test command.
---@return string[] lines (without "#!/bin/bash" and "set -uxo pipefail")
function M.classic_lines(task, opts)
  opts = opts or {}
  local spec = swe.spec(task.repo, task.version) or {}
  local family = swe.family(task.repo)
  if family and family ~= "python" then return M.common_lines(task, family) end
  local cmd = M.test_cmd(task)
  if not cmd then no_test_cmd(task) end
  local dir, base = word(task.repo_dir or "/testbed"), task.base_commit
  local files = words(M.modified_files(task.test_patch))
  local directives = M.directives(task)
  local conda = next(spec) ~= nil or opts.conda
  local activate = { "source " .. swe.CONDA_ACTIVATE, "conda activate " .. swe.CONDA_ENV }
  local l = {}
  local function add(x) l[#l + 1] = x end
  if conda then add(activate[1]); add(activate[2]) end
  add("cd " .. dir)
  for _, c in ipairs(spec.eval_commands or {}) do add(c) end
  add("git config --global --add safe.directory " .. dir)
  add("cd " .. dir)
  add("git status")
  add("git show")
  add("git -c core.fileMode=false diff " .. base)
  if conda then add(activate[1]); add(activate[2]) end
  if spec.install then add(spec.install) end
  local reset = "git checkout " .. base .. " " .. files
  add(reset)
  local patch = task.test_patch or ""
  local d = delimiter(patch)
  add("git apply -v - <<'" .. d .. "'\n" .. patch .. "\n" .. d)
  add(": '" .. swe.START_MARKER .. "'")
  add(table.concat({ cmd, #directives > 0 and words(directives) or nil }, " "))
  add(": '" .. swe.END_MARKER .. "'")
  add(reset)
  return l
end

--- Automattic/wp-calypso's versions whose tests run with jest and
--- test/<pkg>/jest.config.js, and with jest.config.json (4.1.0's
--- get_test_cmds_calypso); the other versions run `npm run test-<pkg>`.
M.CALYPSO_JEST_JS = { ["10.10.0"] = true, ["10.12.0"] = true, ["10.13.0"] = true,
  ["10.14.0"] = true, ["10.15.2"] = true, ["10.16.3"] = true }
M.CALYPSO_JEST_JSON = { ["6.11.5"] = true, ["8.9.1"] = true, ["8.9.3"] = true, ["8.9.4"] = true,
  ["8.11.0"] = true, ["8.11.2"] = true, ["10.4.1"] = true, ["10.5.0"] = true, ["10.6.0"] = true,
  ["10.9.0"] = true }

local function split(s, sep)
  local out, from = {}, 1
  while true do
    local i = find(s, sep, from, true)
    if not i then out[#out + 1] = sub(s, from) return out end
    out[#out + 1] = sub(s, from, i - 1)
    from = i + #sep
  end
end

local function starts(s, p) return sub(s, 1, #p) == p end

-- a path in '...' as SWE-bench writes it ('\'' for a quote in it)
local function squote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

--- wp-calypso's test commands, made from the test patch's paths as 4.1.0's
--- get_test_cmds_calypso makes them: a jest snapshot runs its test's
--- folder; client/ and packages/ paths run their package's jest (or npm
--- script), test/e2e paths the e2e suite; other paths nothing.
---@param task table
---@return string[]
function M.calypso_test_cmds(task)
  local cmds = {}
  for _, p in ipairs(M.patch_paths(task.test_patch)) do
    if find(p, "__snapshots__/.*.js.snap$") then
      local parts = split(p, "/")
      p = table.concat(parts, "/", 1, #parts - 2)
    end
    if starts(p, "client") or starts(p, "packages") then
      local pkg = split(p, "/")[1]
      if M.CALYPSO_JEST_JS[task.version] then
        cmds[#cmds + 1] = "./node_modules/.bin/jest --verbose -c=test/" .. pkg .. "/jest.config.js " .. squote(p)
      elseif M.CALYPSO_JEST_JSON[task.version] then
        cmds[#cmds + 1] = "./node_modules/.bin/jest --verbose -c=test/" .. pkg .. "/jest.config.json " .. squote(p)
      else
        cmds[#cmds + 1] = "npm run test-" .. pkg .. " --verbose " .. squote(p)
      end
    elseif starts(p, "test/e2e") then
      cmds[#cmds + 1] = "cd test/e2e"
      cmds[#cmds + 1] = "NODE_CONFIG_ENV=test npm run test " .. word(p)
      cmds[#cmds + 1] = "cd ../.."
    end
  end
  return cmds
end

--- Repositories whose test commands 4.1.0 makes from the test patch
--- (MAP_REPO_TO_TEST_CMDS in test_spec/javascript.py).
M.JS_TEST_CMDS = { ["Automattic/wp-calypso"] = M.calypso_test_cmds }

-- Python's PurePath(p).parent
local function parent(p)
  p = p:gsub("/+$", "")
  local d = p:match("^(.*)/[^/]*$")
  if d == nil then return "." end
  if d == "" then return "/" end
  return (d:gsub("/+$", ""))
end

--- A Multimodal row's image_assets downloads (4.1.0's
--- get_download_img_commands): for each test_patch asset, its folder made,
--- the file fetched, made writable.
function M.download_img_lines(task)
  local assets = task.image_assets
  if type(assets) == "string" then
    local ok, v = pcall(require("rock.json").decode, assets)
    assets = ok and v or nil
  end
  local out = {}
  if type(assets) ~= "table" or type(assets.test_patch) ~= "table" then return out end
  for _, a in ipairs(assets.test_patch) do
    if type(a) == "table" and type(a.path) == "string" and type(a.url) == "string" then
      out[#out + 1] = "mkdir -p " .. word(parent(a.path))
      out[#out + 1] = "curl -o " .. word(a.path) .. " " .. word(a.url)
      out[#out + 1] = "chmod 777 " .. word(a.path)
    end
  end
  return out
end

--- SWE-bench 4.1.0's eval script lines for a repo of another language
--- than Python (make_eval_script_list_common; for javascript, _js): cd,
--- the reset of the test files (or an echo when the patch changes none),
--- (javascript: a Multimodal row's image downloads), the test patch with
--- `git apply --verbose --reject`, the spec's build, the markers around
--- the test command's lines (javascript: wp-calypso's made from the
--- patch), the reset again. No env is activated, no install runs, no
--- directive is appended.
---@return string[] lines (without "#!/bin/bash" and "set -uxo pipefail")
function M.common_lines(task, family)
  local spec = swe.spec(task.repo, task.version) or {}
  local cmd = M.test_cmd(task)
  if not cmd then no_test_cmd(task) end
  local dir, base = word(task.repo_dir or "/testbed"), task.base_commit
  local files = M.modified_files(task.test_patch)
  local reset = #files > 0 and ("git checkout " .. base .. " " .. words(files))
    or 'echo "No test files to reset"'
  local l = {}
  local function add(x) l[#l + 1] = x end
  add("cd " .. dir)
  add("git config --global --add safe.directory " .. dir)
  add("cd " .. dir)
  add(reset)
  if family == "javascript" then
    for _, c in ipairs(M.download_img_lines(task)) do add(c) end
  end
  local patch = task.test_patch or ""
  local d = delimiter(patch)
  add("git apply --verbose --reject - <<'" .. d .. "'\n" .. patch .. "\n" .. d)
  for _, c in ipairs(spec.build or {}) do add(c) end
  add(": '" .. swe.START_MARKER .. "'")
  local custom = family == "javascript" and M.JS_TEST_CMDS[task.repo]
  -- the repo's own commands, unless the task brought its own test_cmd
  if custom and cmd == swe.test_cmd_of(spec) then
    for _, c in ipairs(custom(task)) do add(c) end
  else
    add(cmd)
  end
  add(": '" .. swe.END_MARKER .. "'")
  add(reset)
  return l
end

local HEAD = { "#!/bin/bash", "set -uxo pipefail" }

local function script(lines)
  return table.concat(HEAD, "\n") .. "\n" .. table.concat(lines, "\n") .. "\n"
end

--- SWE-bench 4.1.0's eval script for a task, byte for byte.
---@return string
function M.classic(task, opts) return script(M.classic_lines(task, opts)) end

--- A row's eval_script as SWE-bench 5.0.x reads it (parse_eval_script):
--- stripped, split into lines, without its "#!/bin/bash" and "set -uxo
--- pipefail" lines.
function M.parse(eval_script)
  local s = eval_script:gsub("^%s+", "")
  local e = #s
  while e > 0 and s:sub(e, e):match("%s") do e = e - 1 end
  s = s:sub(1, e)
  local out = {}
  each_line(s, function(line)
    if line ~= HEAD[1] and line ~= HEAD[2] then out[#out + 1] = line end
  end)
  return out
end

-- which lines are a heredoc's body (their text is data, not commands):
-- a line with `<<WORD`, `<<'WORD'`, `<<"WORD"` or `<<-WORD` starts one,
-- which ends at the line that is WORD (tabs first, for <<-)
local function heredoc_bodies(lines)
  local body, pending = {}, {}
  for i, line in ipairs(lines) do
    if #pending > 0 then
      body[i] = true
      local d = pending[1]
      local l = d.strip_tabs and line:gsub("^\t+", "") or line
      if l == d.word then table.remove(pending, 1) end
    else
      local from = 1
      while true do
        local a = find(line, "<<", from, true)
        if not a then break end
        from = a + 2
        if sub(line, a + 2, a + 2) ~= "<" and (a == 1 or sub(line, a - 1, a - 1) ~= "<") then
          local dash, q, w, e = line:match("^(%-?)%s*(['\"]?)([%w_%.%-]+)()", a + 2)
          if w and (q == "" or sub(line, e, e) == q) then
            pending[#pending + 1] = { word = w, strip_tabs = dash == "-" }
          end
        end
      end
    end
  end
  return body
end

--- The index of the first line holding text (a marker), outside heredoc
--- bodies, at or after from; nil if none.
local function marker_line(lines, text, from, body)
  for i = from or 1, #lines do
    if not body[i] and find(lines[i], text, 1, true) then return i end
  end
  return nil
end

--- SWE-bench 5.0.x's record_test_exit_code: before the first line holding
--- the end marker, `SWEBENCH_TEST_EXIT_CODE=$?`; after it, the echo of
--- `>>>>> Test Exit Code: N`. A script without the end marker is kept.
--- (A marker inside a heredoc, such as a test patch's text, is not the
--- script's: SWE-bench would insert into the patch there; rock skips it.)
function M.record_exit_code(lines)
  local i = marker_line(lines, swe.END_MARKER, 1, heredoc_bodies(lines))
  if not i then return lines end
  local out = table.move(lines, 1, i - 1, 1, {})
  out[#out + 1] = swe.EXIT_CODE_VAR .. "=$?"
  out[#out + 1] = lines[i]
  out[#out + 1] = 'echo "' .. swe.EXIT_CODE_MARKER .. ": $" .. swe.EXIT_CODE_VAR .. '"'
  table.move(lines, i + 1, #lines, #out + 1, out)
  return out
end

--- The script lines SWE-bench 5.0.x runs for the task.
function M.swebench_lines(task, opts)
  -- a classic row's script is read as 5.0.x reads a row's eval_script
  -- (the two are the same text for SWE-bench's Verified rows)
  return M.record_exit_code(M.parse(task.eval_script or M.classic(task, opts)))
end

--- The script SWE-bench 5.0.x runs for the task.
---@return string
function M.swebench(task, opts) return script(M.swebench_lines(task, opts)) end

-- rock's prologue: runs before the script's own first line (untraced).
-- $1 the log, $2 a global git config for the script's git commands
-- (the local backend: not the host user's) or "".
M.PROLOGUE = [==[
rock_log=$1 rock_gitcfg=${2:-} rock_root=$PPID rock_rc= rock_start= rock_end= rock_p=
exec 4>&1 >"$rock_log" 2>&1 </dev/null
shift $#
rock_pos() {
  local k v
  rock_p=
  while read -r k v; do
    if [ "$k" = "pos:" ]; then rock_p=$v; return 0; fi
  done </proc/$BASHPID/fdinfo/1
}
rock_eval_mark() {
  rock_pos
  if [ "$1" = start ]; then rock_start=$rock_p; else rock_end=$rock_p; fi
}
rock_stat() {
  rock_st=
  { IFS= read -r -d '' rock_st </proc/$1/stat; } 2>/dev/null
  [ -n "$rock_st" ] || return 1
  rock_st=${rock_st##*) }
}
rock_eval_kill() {
  local IFS=$' \t\n' p q n pass changed rock_st
  local -a f
  local -A par held
  if [ "$rock_root" = 1 ]; then
    for pass in {1..200}; do
      kill -KILL -1 2>/dev/null
      changed=0
      for p in /proc/[0-9]*; do
        p=${p#/proc/}
        if [ "$p" = 1 ] || [ "$p" = "$BASHPID" ]; then continue; fi
        rock_stat "$p" || continue
        f=($rock_st)
        if [ "${f[0]-}" != Z ] && [ "${f[0]-}" != X ]; then changed=1; break; fi
      done
      [ $changed = 0 ] && return 0
      [ $pass -gt 10 ] && command sleep 0.01 2>/dev/null
    done
    return 0
  fi
  for pass in {1..200}; do
    par=()
    for p in /proc/[0-9]*; do
      p=${p#/proc/}
      rock_stat "$p" || continue
      f=($rock_st)
      par[$p]=${f[1]-}
    done
    changed=0
    for p in "${!par[@]}"; do
      [ "$p" = "$BASHPID" ] && continue
      [ -n "${held[$p]-}" ] && continue
      q=$p n=0
      while [ $n -lt 200 ]; do
        q=${par[$q]-}
        if [ -z "$q" ] || [ "$q" = "$rock_root" ]; then break; fi
        n=$((n + 1))
      done
      if [ "$q" = "$rock_root" ]; then kill -STOP "$p" 2>/dev/null; held[$p]=1; changed=1; fi
    done
    [ $changed = 0 ] && break
  done
  for p in "${!held[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for pass in {1..200}; do
    changed=0
    for p in "${!held[@]}"; do
      if rock_stat "$p"; then
        f=($rock_st)
        [ "${f[0]-}" != Z ] && [ "${f[0]-}" != X ] && changed=1
      fi
    done
    [ $changed = 0 ] && break
    [ $pass -gt 10 ] && command sleep 0.01 2>/dev/null
  done
}
rock_eval_tests_done() {
  local rc=$?
  rock_rc=$rc
  rock_eval_kill
  return $rc
}
rock_eval_exit() {
  local rc=$?
  rock_eval_kill
  rock_pos
  printf 'rock-eval-report rc=%s start=%s end=%s size=%s\n' "$rock_rc" "$rock_start" "$rock_end" "$rock_p" >&4
  exit "${rock_rc:-$rc}"
}
git() {
  { local rock_x=$-; set +x; } 2>/dev/null
  if [ -n "$rock_gitcfg" ]; then
    GIT_CONFIG_GLOBAL=$rock_gitcfg command git -c core.hooksPath=/dev/null -c core.fsmonitor=false "$@"
  else
    command git -c core.hooksPath=/dev/null -c core.fsmonitor=false "$@"
  fi
  { local rock_grc=$?; case $rock_x in *x*) set -x ;; esac; return $rock_grc; } 2>/dev/null
}
trap '{ rock_eval_exit; } 2>/dev/null' EXIT
rock_eval_kill
]==]

--- The script rock runs: SWE-bench's (M.swebench_lines) after rock's
--- prologue, each startup_source sourced first, the test command in a
--- subshell without fd 4, the marks and kills around it. Returns the
--- script text and whether it found the markers to put its marks at.
---@return string script, boolean marked
function M.rock(task, opts)
  local lines = M.swebench_lines(task, opts)
  local body = heredoc_bodies(lines)
  local s_at = marker_line(lines, swe.START_MARKER, 1, body)
  local x_at
  for i = (s_at or #lines) + 1, #lines do
    if not body[i] and lines[i] == swe.EXIT_CODE_VAR .. "=$?" then x_at = i break end
  end
  local out = { M.PROLOGUE .. HEAD[1], HEAD[2] }
  for _, src in ipairs(task.startup_source or {}) do out[#out + 1] = "source " .. word(src) end
  local marked = s_at and x_at and x_at > s_at + 1
  for i, line in ipairs(lines) do
    if marked and i == x_at then
      out[#out + 1] = ") 4>&-"
      out[#out + 1] = "{ rock_eval_tests_done; } 2>/dev/null"
    end
    out[#out + 1] = line
    if marked and i == s_at then
      out[#out + 1] = "{ rock_eval_mark start; } 2>/dev/null"
      out[#out + 1] = "("
    end
    if marked and i == x_at then out[#out + 1] = "{ rock_eval_mark end; } 2>/dev/null" end
  end
  return table.concat(out, "\n") .. "\n", marked and true or false
end

return M
