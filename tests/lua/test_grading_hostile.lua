-- test_grading_hostile.lua: hostile inputs to rock.agent.tasks,
-- rock.agent.grading and recipes/swe_eval.lua on the local backend (where
-- grading runs on this host): option-like base_commits, byte order marks,
-- tests that print SWE-bench's markers, eval logs past read_file's 32 MiB,
-- patches that write into .git or out of the repo. Everything happens in
-- git repos made here in a temp dir (recipes/demo/make-repo).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local tasks = require "rock.agent.tasks"
local grading = require "rock.agent.grading"

local here = arg[0]:match("(.*/)")
local demo = here .. "../../recipes/demo/"
local tmp = T.sh("mktemp -d /tmp/rock-grading-hostile.XXXXXX"):gsub("%s+$", "")
T.ok(tmp:match("^/tmp/rock%-grading%-hostile%."), "temp dir made")

local q = T.q
local write = T.write
local slurp = T.read
local sh = T.must

local demo_tasks = tasks.load(demo .. "tasks.jsonl")
local by_name = {}
for _, t in ipairs(demo_tasks) do by_name[t.repo:match("/(.*)")] = t end

local n_repos = 0
local function local_task(name, extra)
  n_repos = n_repos + 1
  local dir = string.format("%s/%s-%d", tmp, name, n_repos)
  sh(q(demo .. "make-repo") .. " " .. name .. " " .. q(dir))
  local t = {}
  for k, v in pairs(by_name[name]) do t[k] = v end
  t.repo_dir = dir
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

local function base(over)
  local t = { instance_id = "o__r-1", repo = "o/r", base_commit = "abc123", problem_statement = "p",
              test_patch = "", FAIL_TO_PASS = {}, PASS_TO_PASS = {} }
  for k, v in pairs(over or {}) do t[k] = v end
  return t
end

T.test("tasks: a base_commit that git would read as an option or a range is refused", function()
  for _, bc in ipairs({ "--orphan", "-b", "-q", "--hard", "HEAD..main", "a...b" }) do
    local t, why = tasks.normalize(base{ base_commit = bc })
    T.eq(t, nil, bc .. " refused")
    T.match(why or "", "'base_commit'", bc)
  end
  for _, bc in ipairs({ "abc123", "v1.2", "origin/main", "release-1.0" }) do
    T.ok(tasks.normalize(base{ base_commit = bc }), bc .. " kept")
  end
  -- grading refuses the task too: nothing reaches git
  T.raises("invalid_argument", grading.eval_script, base{ base_commit = "--orphan" })
  -- a test file named like an option reaches git and the test command as ./-t.py
  local s = grading.eval_script(base{ test_patch = "diff --git a/-t.py b/-t.py\n" })
  T.match(s, "\ngit checkout abc123 %./%-t%.py\n")
  T.match(s, "\npytest %-rA %-%-tb=no %-p no:cacheprovider %./%-t%.py\n")
end)

T.test("tasks.load and swe_eval.lua: a UTF-8 byte order mark is not a bad first line", function()
  local t = local_task("calc")
  local line = rock.json.encode(t)
  write(tmp .. "/bom-tasks.jsonl", "\239\187\191" .. line .. "\n")
  local list, errs = tasks.load(tmp .. "/bom-tasks.jsonl")
  T.eq(#errs, 0, errs[1] and errs[1].message)
  T.eq(#list, 1); T.eq(list[1] and list[1].instance_id, t.instance_id)
  write(tmp .. "/bom-tasks.json", "\239\187\191[" .. line .. "]")
  list, errs = tasks.load(tmp .. "/bom-tasks.json")
  T.eq(#errs, 0, errs[1] and errs[1].message); T.eq(#list, 1)
  -- predictions with a BOM (JSONL and JSON): the prediction is graded
  for _, form in ipairs({ "jsonl", "json" }) do
    local pred = rock.json.encode{ instance_id = t.instance_id, model_name_or_path = "m", model_patch = "" }
    write(tmp .. "/bom-preds." .. form, "\239\187\191" .. (form == "json" and ("[" .. pred .. "]") or pred) .. "\n")
    local out_dir = tmp .. "/bom-out-" .. form
    local out, ok = T.sh(q(T.rock_exe()) .. " " .. q(here .. "../../recipes/swe_eval.lua") ..
      " --instances " .. q(tmp .. "/bom-tasks.jsonl") .. " --predictions " .. q(tmp .. "/bom-preds." .. form) ..
      " --out " .. q(out_dir) .. " --backend local 2>&1")
    T.ok(ok, "swe_eval ran: " .. out)
    T.ok(not out:find("skipped", 1, true), form .. ": nothing skipped: " .. out)
    local rep = rock.json.decode(slurp(out_dir .. "/report.json"))
    T.eq(rep.submitted_instances, 1, form)
    T.eq(rep.empty_patch_ids[1], t.instance_id, form)
  end
end)

local sb = rock.sandbox.start{ backend = "local" }

T.test("a test that prints SWE-bench's markers does not hide the results after it", function()
  -- the gold fix, plus a passing test (in the test patch's file) printing
  -- the end marker and the start marker: pytest -rA shows its output
  local t = local_task("calc")
  local file = t.test_patch:match("diff %-%-git a/(%S+)")
  T.ok(file, "the test patch names a file")
  local extra = "\n\ndef test_prints_markers():\n    print('>>>>> End Test Output')\n" ..
    "    print(\"+ : '>>>>> Start Test Output'\")\n"
  -- the test patch, with the test appended to the file it touches
  write(tmp .. "/test.diff", t.test_patch)
  sh("cd " .. q(t.repo_dir) .. " && git apply " .. q(tmp .. "/test.diff"))
  local f = assert(io.open(t.repo_dir .. "/" .. file, "ab"))
  f:write(extra)
  f:close()
  t.test_patch = sh("cd " .. q(t.repo_dir) .. " && git add -A && git diff --cached --binary HEAD")
  sh("cd " .. q(t.repo_dir) .. " && git reset -q --hard && git clean -qfd")
  t.PASS_TO_PASS = { file .. "::test_prints_markers" }
  local r = grading.evaluate(sb, t, t.patch)
  T.eq(r.status, "resolved", tostring(r.report and r.report.reason) .. tostring(r.error and r.error.message))
  T.eq(r.tests[file .. "::test_prints_markers"], "PASSED")
  for _, test in ipairs(t.FAIL_TO_PASS) do T.eq(r.tests[test], "PASSED", test) end
  T.eq(r.test_exit_code, 0)
  -- a log read without rock's offsets is read as SWE-bench reads it: up to
  -- the first end marker
  local st, found = grading.parse_pytest(table.concat({ "+ : '>>>>> Start Test Output'", "PASSED a::x",
    ">>>>> End Test Output", ">>>>> Start Test Output", "PASSED a::y", "+ : '>>>>> End Test Output'",
    "PASSED a::z" }, "\n"))
  T.ok(found)
  T.eq(st["a::x"], "PASSED"); T.eq(st["a::y"], nil); T.eq(st["a::z"], nil)
  st, found = grading.parse_pytest(">>>>> End Test Output\n>>>>> Start Test Output\nPASSED a::x\n")
  T.ok(found, "both markers anywhere: SWE-bench reads what follows the start marker")
  T.eq(st["a::x"], "PASSED")
end)

T.test("an eval log past 32 MiB is graded from its head and tail, not an error", function()
  local t = local_task("calc", {
    test_cmd = "head -c 40000000 /dev/zero | tr '\\0' x; echo; pytest -rA --tb=no -p no:cacheprovider" })
  local r = grading.evaluate(sb, t, t.patch)
  T.eq(r.status, "resolved", tostring(r.report and r.report.reason) .. tostring(r.error and r.error.message))
  T.ok(#r.log < 20 << 20, "the log kept is bounded: " .. #r.log)
  T.match(r.log, "=== rock: %d+ bytes of the eval log elided")
  T.match(r.log, "%+ : '>>>>> Start Test Output'")
  T.match(r.log, "%+ : '>>>>> End Test Output'")
  -- a failing run with the same noise stays unresolved
  t = local_task("calc", { test_cmd = t.test_cmd })
  r = grading.evaluate(sb, t, "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n" ..
    "@@ -1,3 +1,3 @@\n # calc\n \n-A small arithmetic evaluator: `calc.evaluate(\"2 + 3 * 4\") == 14`.\n" ..
    "+A small evaluator: `calc.evaluate(\"2 + 3 * 4\") == 14`.\n")
  T.eq(r.status, "unresolved", tostring(r.error and r.error.message))
  T.eq(#r.report.FAIL_TO_PASS.failure, #t.FAIL_TO_PASS)
  T.eq(sh("ls " .. q(t.repo_dir) .. "/.. | grep -c rock-eval || true"), "0\n")
end)

T.test("a patch writing into .git (through patch's fallback) is not applied", function()
  local t = local_task("calc")
  local hook = tmp .. "/hook-ran"
  -- git apply refuses these paths; GNU patch would write them, and the
  -- next git command in the repo would run the command
  local evil = "--- a/.git/config\n+++ b/.git/config\n@@ -0,0 +1,2 @@\n+[core]\n+\tfsmonitor = \"touch " ..
    hook .. "; false\"\n" .. t.patch
  local cfg = slurp(t.repo_dir .. "/.git/config")
  local r = grading.evaluate(sb, t, evil)
  T.eq(r.status, "unresolved"); T.ok(not r.applied)
  T.match(r.report.reason, "^patch apply failed: .*%.git/config")
  T.eq(slurp(t.repo_dir .. "/.git/config"), cfg, ".git/config unchanged")
  sh("cd " .. q(t.repo_dir) .. " && git status >/dev/null")
  T.eq(slurp(hook), nil, "no command from the patch ran")
  -- a hook, a path out of the repo, a git-style header, a rename
  for _, p in ipairs({
    "--- a/.git/hooks/post-checkout\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+x\n",
    "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n",
    "diff --git a/.GIT/config b/.GIT/config\n--- a/.GIT/config\n+++ b/.GIT/config\n@@ -0,0 +1 @@\n+x\n",
    "diff --git a/x b/y\nrename from x\nrename to sub/../../y\n",
    "Index: .git/info/x\n--- x\n+++ x\n@@ -0,0 +1 @@\n+x\n",
  }) do
    T.ok(grading.unsafe_path(p), "unsafe: " .. p)
  end
  -- hunk lines that look like headers are content
  T.eq(grading.unsafe_path("--- a/f.sql\n+++ b/f.sql\n@@ -1,2 +1,2 @@\n--- ../.git/x\n+++ ../.git/y\n x\n"), nil)
  for _, name in ipairs({ "calc", "textutil", "pager" }) do
    T.eq(grading.unsafe_path(by_name[name].patch), nil, name .. " gold")
    T.eq(grading.unsafe_path(by_name[name].test_patch), nil, name .. " test")
  end
  T.raises("invalid_argument", grading.unsafe_path, nil)
end)

sb:stop()
sh("rm -rf " .. q(tmp))
T.done()
