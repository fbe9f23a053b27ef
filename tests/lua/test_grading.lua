-- test_grading.lua: rock.agent.tasks and rock.agent.grading on the local
-- backend: task files, test files, the eval script, the pytest parser on
-- real pytest output, grade()'s rules, evaluate() and diff() against git
-- repos made here in a temp dir (the demo repos: recipes/demo/make-repo).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local tasks = require "rock.agent.tasks"
local grading = require "rock.agent.grading"
local ajson = require "rock.json"

local here = arg[0]:match("(.*/)")
local root = here .. "../../"
local demo = root .. "recipes/demo/"
local tmp = T.sh("mktemp -d /tmp/rock-grading.XXXXXX"):gsub("%s+$", "")
T.ok(tmp:match("^/tmp/rock%-grading%."), "temp dir made")

local q = T.q
local write = T.write
local slurp = T.read
local sh = T.must

local demo_tasks, demo_errs = tasks.load(demo .. "tasks.jsonl")
local by_name = {}
for _, t in ipairs(demo_tasks) do by_name[t.repo:match("/(.*)")] = t end

-- a copy of a demo task whose repo is a fresh git repo under tmp
local n_repos = 0
local function local_task(name, extra)
  n_repos = n_repos + 1
  local dir = string.format("%s/%s-%d", tmp, name, n_repos)
  local commit = sh(q(demo .. "make-repo") .. " " .. name .. " " .. q(dir)):gsub("%s+$", "")
  local t = {}
  for k, v in pairs(by_name[name]) do t[k] = v end
  T.eq(commit, t.base_commit, "make-repo gives tasks.jsonl's base_commit")
  t.repo_dir = dir
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end

T.test("tasks.load: good lines load, malformed lines are named", function()
  local good = { instance_id = "o__r-1", repo = "o/r", base_commit = "abc123", problem_statement = "p",
                 test_patch = "", FAIL_TO_PASS = { "a" }, PASS_TO_PASS = {}, custom = 7 }
  local function line(over)
    local t = {}
    for k, v in pairs(good) do t[k] = v end
    for k, v in pairs(over or {}) do t[k] = v end
    return rock.json.encode(t)
  end
  write(tmp .. "/tasks.jsonl", table.concat({
    line(),                                                       -- 1
    "",                                                           -- 2 blank
    "{not json",                                                  -- 3
    line{ instance_id = "o__r-2", FAIL_TO_PASS = '["t1", "t2"]', PASS_TO_PASS = "[]",
          startup_source = "/env.sh", eval_timeout = 30, image = "img:1" }, -- 4
    line{ instance_id = "o__r-3", base_commit = 5 },              -- 5 mistyped
    '{"instance_id": "o__r-4", "repo": "o/r"}',                   -- 6 missing
    line{ instance_id = "o__r-5", FAIL_TO_PASS = "not a list" },  -- 7
    line(),                                                       -- 8 repeated id
    line{ instance_id = "../etc" },                               -- 9 unsafe id
    "   ",                                                        -- 10 blank
    line{ instance_id = "o__r-6", PASS_TO_PASS = { 1 } },         -- 11
  }, "\n") .. "\n")
  local list, errs = tasks.load(tmp .. "/tasks.jsonl")
  T.eq(#list, 2, "two tasks load")
  local lines = {}
  for _, e in ipairs(errs) do lines[#lines + 1] = e.line .. ": " .. e.message end
  T.eq(#errs, 7, "errors: " .. table.concat(lines, "; "))
  T.eq(errs[1].line, 3); T.match(errs[1].message, "^bad JSON")
  T.eq(errs[2].line, 5); T.match(errs[2].message, "'base_commit' must be a string")
  T.eq(errs[3].line, 6); T.match(errs[3].message, "missing required field 'base_commit'")
  T.eq(errs[4].line, 7); T.match(errs[4].message, "'FAIL_TO_PASS' is a string that does not hold a JSON list")
  T.eq(errs[5].line, 8); T.match(errs[5].message, "instance_id o__r%-1 repeats line 1")
  T.eq(errs[6].line, 9); T.match(errs[6].message, "'instance_id'")
  T.eq(errs[7].line, 11); T.match(errs[7].message, "'PASS_TO_PASS'%[1%] must be a string")
  local a, b = list[1], list[2]
  T.eq(a.image, rock.images.swebench_name("o__r-1"), "default image")
  T.eq(a.repo_dir, "/testbed"); T.eq(a.test_cmd, "pytest -rA --tb=no -p no:cacheprovider")
  T.eq(a.eval_timeout, 1800); T.eq(#a.startup_source, 0); T.eq(a.custom, 7, "unknown fields kept")
  T.eq(b.FAIL_TO_PASS[2], "t2", "a string holding a list becomes a list")
  T.eq(#b.PASS_TO_PASS, 0); T.eq(ajson.encode(b.PASS_TO_PASS), "[]", "an empty list stays a list")
  T.eq(b.startup_source[1], "/env.sh", "one path becomes a list of one")
  T.eq(b.eval_timeout, 30); T.eq(b.image, "img:1")
  local t, why = tasks.normalize{ instance_id = "x" }
  T.eq(t, nil); T.match(why, "missing required field 'repo'")
  T.raises("io_error", tasks.load, tmp .. "/no-such-file.jsonl")
  T.raises("invalid_argument", tasks.load, 42)
end)

T.test("tasks.load: a JSON list, and the demo tasks", function()
  write(tmp .. "/tasks.json", rock.json.encode{
    { instance_id = "a-1", repo = "o/r", base_commit = "c", problem_statement = "p", test_patch = "",
      FAIL_TO_PASS = {}, PASS_TO_PASS = {} }, { instance_id = "a-2" } })
  local list, errs = tasks.load(tmp .. "/tasks.json")
  T.eq(#list, 1); T.eq(#errs, 1); T.eq(errs[1].line, 2)
  T.eq(#demo_tasks, 3); T.eq(#demo_errs, 0)
  for _, t in ipairs(demo_tasks) do
    T.ok(#t.FAIL_TO_PASS > 0 and #t.PASS_TO_PASS > 0, t.instance_id .. " has F2P and P2P tests")
    T.match(t.image, "^rock%-demo/")
  end
end)

T.test("demo files are up to date (make_tasks.lua --check)", function()
  local out, ok = T.sh(q(T.rock_exe()) .. " " .. q(demo .. "make_tasks.lua") .. " --check")
  T.ok(ok, "make_tasks --check: " .. out)
end)

T.test("test_files: SWE-bench's directives (b/ paths of any diff --git text, minus non-test suffixes)", function()
  local p = table.concat({
    "diff --git a/tests/test_a.py b/tests/test_a.py", "--- a/tests/test_a.py", "+++ b/tests/test_a.py",
    "diff --git a/tests/data.json b/tests/data.json",
    "diff --git a/old/name.py b/new/name.py",
    "diff --git a/tests/fixtures/A.TXT b/tests/fixtures/A.TXT",
    "diff --git a/docs/x.rst b/docs/x.rst",
    "diff --git a/tests/test_a.py b/tests/test_a.py",
    " diff --git a/not/a/header.py b/not/a/header.py",
    "diff --git a/c.yaml b/c.yaml", "diff --git a/d.toml b/d.toml", "diff --git a/e.pkl b/e.pkl",
  }, "\n")
  local files = grading.test_files(p)
  -- as `diff --git a/.* b/(.*)` finds them: in any line, each time, the
  -- suffixes matched as they are (A.TXT is a test file to SWE-bench)
  T.eq(table.concat(files, ","), "tests/test_a.py,new/name.py,tests/fixtures/A.TXT,docs/x.rst," ..
    "tests/test_a.py,not/a/header.py")
  T.eq(#grading.test_files(""), 0)
  T.eq(table.concat(grading.test_files(by_name.textutil.test_patch), ","), "tests/test_slugify.py",
    "the demo's titles.txt is no test file")
  T.raises("invalid_argument", grading.test_files, nil)
end)

T.test("eval_script: SWE-bench's steps and markers", function()
  local t = by_name.pager
  local task = { instance_id = "x-1", repo = "o/r", base_commit = "abc", problem_statement = "",
    test_patch = t.test_patch, FAIL_TO_PASS = {}, PASS_TO_PASS = {}, startup_source = { "/opt/env/activate" },
    repo_dir = "/work dir", test_cmd = "pytest -x" }
  local want = table.concat({
    "#!/bin/bash",
    "set -uxo pipefail",
    "cd '/work dir'",
    "git config --global --add safe.directory '/work dir'",
    "cd '/work dir'",
    "git status",
    "git show",
    "git -c core.fileMode=false diff abc",
    "git checkout abc tests/test_pages.py",
    "git apply -v - <<'EOF_114329324912'",
  }, "\n") .. "\n" .. t.test_patch .. "\n" .. table.concat({
    "EOF_114329324912",
    ": '>>>>> Start Test Output'",
    "pytest -x tests/test_pages.py",
    "SWEBENCH_TEST_EXIT_CODE=$?",
    ": '>>>>> End Test Output'",
    'echo ">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE"',
    "git checkout abc tests/test_pages.py",
  }, "\n") .. "\n"
  T.eq(grading.swebench_script(task), want)
  -- rock's script: the same lines, rock's own (untraced) around the test command
  local s = grading.eval_script(task)
  local plain = s:gsub("^.-\n#!/bin/bash\n", "#!/bin/bash\n"):gsub("{ rock_[%w_ ]+; } 2>/dev/null\n", "")
    :gsub("\n%(\n", "\n"):gsub("\n%) 4>&%-\n", "\n"):gsub("\nsource /opt/env/activate\n", "\n")
  T.eq(plain, want)
  T.match(s, "\n: '>>>>> Start Test Output'\n{ rock_eval_mark start; } 2>/dev/null\n%(\npytest %-x tests/test_pages%.py\n" ..
    "%) 4>&%-\n{ rock_eval_tests_done; } 2>/dev/null\nSWEBENCH_TEST_EXIT_CODE=%$%?\n{ rock_eval_mark end; } 2>/dev/null\n")
  T.match(s, "\nset %-uxo pipefail\nsource /opt/env/activate\n")
  -- a patch holding the delimiter gets another one
  local s2 = grading.swebench_script{ instance_id = "x-1", repo = "o/r", base_commit = "abc",
    problem_statement = "", test_patch = "EOF_114329324912\n", FAIL_TO_PASS = {}, PASS_TO_PASS = {} }
  T.match(s2, "<<'EOF_114329324912_'\nEOF_114329324912\n\nEOF_114329324912_\n")
  T.match(s2, "\ngit checkout abc \n", "no test files: SWE-bench's bare checkout of the commit")
  T.raises("invalid_argument", grading.eval_script, { instance_id = "x" })
end)

local function real_pytest_log(dir)
  sh("cp " .. q(here .. "data/test_mix.py") .. " " .. q(dir .. "/test_mix.py"))
  return sh("cd " .. q(dir) .. " && bash -c \"set -x; : '>>>>> Start Test Output'; " ..
    "pytest -rA --tb=no -p no:cacheprovider test_mix.py; : '>>>>> End Test Output'\"")
end

local function check_mix(st, what)
  T.eq(st["test_mix.py::test_ok"], "PASSED", what)
  T.eq(st["test_mix.py::test_bad"], "FAILED", what)
  T.eq(st["test_mix.py::test_xfail"], "XFAIL", what)
  T.eq(st["test_mix.py::test_param[1]"], "PASSED", what)
  T.eq(st["test_mix.py::test_param[2]"], "FAILED", what)
  T.eq(st["test_mix.py::test_error"], "ERROR", what)
  T.eq(st["test_mix.py::test_skip"], nil, what .. ": SKIPPED [1] summary lines name no test")
  T.eq(st["test_mix.py::test_xpass"], nil, what .. ": XPASS is no status")
  T.eq(st["[1]"], nil, what)
  local n = 0
  for _ in pairs(st) do n = n + 1 end
  T.eq(n, 6, what .. ": statuses")
end

T.test("parse_pytest: real pytest -rA output (captured and fresh)", function()
  local captured = slurp(here .. "data/pytest-rA.log")
  local st, found = grading.parse_pytest(captured)
  T.ok(found, "markers found")
  check_mix(st, "captured")
  -- lines outside the markers do not count
  st = grading.parse_pytest("PASSED test_mix.py::before\n" .. captured .. "FAILED test_mix.py::test_ok\n")
  check_mix(st, "outside")
  local dir = tmp .. "/pytest-run"
  sh("mkdir -p " .. q(dir))
  st, found = grading.parse_pytest(real_pytest_log(dir))
  T.ok(found, "markers found in a fresh run")
  check_mix(st, "fresh")
end)

T.test("parse_pytest: markers, later lines win, odd bytes", function()
  local st, found = grading.parse_pytest("PASSED a::b\n")
  T.ok(not found); T.eq(next(st), nil)
  st, found = grading.parse_pytest("+ : '>>>>> Start Test Output'\nPASSED a::b\n")
  T.ok(not found, "no end marker")
  st = grading.parse_pytest(table.concat({ "+ : '>>>>> Start Test Output'", "PASSED a::b", "FAILED a::b - x",
    "\255\0 binary junk", "PASSED", "ERROR a::c\r", "FAILED a::d - AssertionError - x - y",
    "+ : '>>>>> End Test Output'", "PASSED a::e" }, "\n"))
  T.eq(st["a::b"], "FAILED", "later lines win")
  T.eq(st["a::c"], "ERROR", "CR stripped with the whitespace")
  T.eq(st["a::d"], "FAILED")
  T.eq(st["a::e"], nil)
end)

local function task_of(f2p, p2p)
  return { instance_id = "g-1", repo = "o/r", base_commit = "c", problem_statement = "",
           test_patch = "", FAIL_TO_PASS = f2p, PASS_TO_PASS = p2p }
end

T.test("grade: SWE-bench's rules", function()
  local t = task_of({ "f1", "f2" }, { "p1", "p2" })
  local r = grading.grade(t, { f1 = "PASSED", f2 = "XFAIL", p1 = "PASSED", p2 = "SKIPPED" },
    { test_exit_code = 0 })
  T.ok(r.resolved, "XFAIL passes, SKIPPED is fine for P2P"); T.eq(r.reason, nil)
  T.eq(#r.FAIL_TO_PASS.success, 2); T.eq(#r.PASS_TO_PASS.success, 2)
  r = grading.grade(t, { f1 = "PASSED", f2 = "SKIPPED", p1 = "PASSED", p2 = "PASSED" }, {})
  T.ok(not r.resolved, "SKIPPED is no pass for F2P"); T.eq(r.FAIL_TO_PASS.failure[1], "f2")
  r = grading.grade(t, { f1 = "PASSED", f2 = "PASSED", p1 = "PASSED" }, {})
  T.ok(not r.resolved, "a missing test failed"); T.eq(r.PASS_TO_PASS.failure[1], "p2")
  T.match(r.reason, "0 of 2 FAIL_TO_PASS and 1 of 2 PASS_TO_PASS tests failed")
  r = grading.grade(t, { f1 = "PASSED", f2 = "PASSED", p1 = "ERROR", p2 = "PASSED" }, {})
  T.ok(not r.resolved, "ERROR failed")
  local all = { f1 = "PASSED", f2 = "PASSED", p1 = "PASSED", p2 = "PASSED" }
  r = grading.grade(t, all, { test_exit_code = 1 })
  T.ok(not r.resolved, "non-zero exit with no FAILED: not trusted")
  T.match(r.reason, "exited 1 but no test FAILED or ERROR")
  all.other = "FAILED"
  T.ok(grading.grade(t, all, { test_exit_code = 1 }).resolved, "non-zero exit explained by a FAILED test")
  r = grading.grade(t, all, { applied = false })
  T.ok(not r.resolved); T.eq(r.reason, "patch apply failed")
  r = grading.grade(t, all, { markers = false })
  T.ok(not r.resolved); T.match(r.reason, "markers missing")
  r = grading.grade(t, {}, { empty_patch = true })
  T.ok(not r.resolved); T.eq(r.reason, "empty patch")
  T.eq(ajson.encode(r.PASS_TO_PASS.success), "[]")
  T.ok(grading.grade(task_of({}, {}), {}, {}).resolved, "no tests to pass: resolved, as SWE-bench")
  T.raises("invalid_argument", grading.grade, t, nil)
end)

local sb = rock.sandbox.start{ backend = "local" }

T.test("evaluate: gold patches resolve every demo task", function()
  for _, name in ipairs({ "calc", "textutil", "pager" }) do
    local t = local_task(name)
    local r = grading.evaluate(sb, t, t.patch)
    T.eq(r.status, "resolved", name .. ": " .. tostring(r.report and r.report.reason) ..
      tostring(r.error and r.error.message))
    T.ok(r.resolved and r.applied, name)
    T.eq(r.apply_method, "git apply --verbose")
    T.eq(r.test_exit_code, 0)
    T.eq(#r.report.FAIL_TO_PASS.failure + #r.report.PASS_TO_PASS.failure, 0)
    for _, test in ipairs(t.FAIL_TO_PASS) do T.eq(r.tests[test], "PASSED", test) end
    T.match(r.log, "\n%+ : '>>>>> Start Test Output'\n")
    T.match(r.log, "\n%+ : '>>>>> End Test Output'\n")
    T.ok(r.log:find("=== rock: apply attempt 1", 1, true) < r.log:find(">>>>> Start Test Output", 1, true),
      "apply attempts come first")
    T.eq(sh("cd " .. q(t.repo_dir) .. " && git diff --stat -- tests"), "", "test files restored")
    T.ok(r.seconds > 0)
  end
end)

T.test("evaluate: no fix, a breaking patch, a patch that does not apply", function()
  local t = local_task("calc")
  -- the base state with the test patch alone: F2P fail
  local r = grading.evaluate(sb, t, "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n" ..
    "@@ -1,3 +1,3 @@\n # calc\n \n-A small arithmetic evaluator: `calc.evaluate(\"2 + 3 * 4\") == 14`.\n" ..
    "+A small evaluator: `calc.evaluate(\"2 + 3 * 4\") == 14`.\n")
  T.eq(r.status, "unresolved", tostring(r.error and r.error.message))
  T.ok(r.applied); T.eq(r.test_exit_code, 1)
  T.eq(#r.report.FAIL_TO_PASS.failure, 2); T.eq(#r.report.PASS_TO_PASS.failure, 0)
  -- the gold fix and a broken addition: P2P fail
  sh("cd " .. q(t.repo_dir) .. " && git apply " .. q(demo .. "patches/calc.gold.diff") ..
    " && sed -i 's/value += self.term()/value -= self.term()/' calc/evaluate.py")
  local breaking = sh("cd " .. q(t.repo_dir) .. " && git diff")
  sh("cd " .. q(t.repo_dir) .. " && git checkout -q . && echo junk > stray.py")
  r = grading.evaluate(sb, t, breaking)
  T.eq(r.status, "unresolved")
  T.eq(table.concat(r.report.FAIL_TO_PASS.failure, ","), "tests/test_calc.py::test_decimals")
  T.eq(r.report.PASS_TO_PASS.failure[1], "tests/test_calc.py::test_integers")
  T.eq(r.tests["tests/test_calc.py::test_integers"], "FAILED")
  T.ok(not io.open(t.repo_dir .. "/stray.py"), "the reset removed the untracked file")
  -- a patch against text that is not there
  local bad = "diff --git a/calc/tokens.py b/calc/tokens.py\n--- a/calc/tokens.py\n+++ b/calc/tokens.py\n" ..
    "@@ -1,2 +1,2 @@\n-no such line\n-nor this one\n+x\n+y\n"
  r = grading.evaluate(sb, t, bad)
  T.eq(r.status, "unresolved"); T.ok(not r.applied); T.eq(r.apply_method, nil)
  T.match(r.report.reason, "^patch apply failed: ")
  T.match(r.report.reason, "hunk")
  T.match(r.apply_output, "apply attempt 1: git apply %-%-verbose")
  T.match(r.apply_output, "apply attempt 3: git apply %-%-verbose %-%-reject")
  T.match(r.apply_output, "apply attempt 4: patch %-%-batch %-%-forward %-%-fuzz=5 %-p1 %-i")
  T.match(r.log, ">>>>> Patch Apply Failed")
  T.ok(not r.log:find(">>>>> Start Test Output", 1, true), "no tests ran")
  T.eq(sh("cd " .. q(t.repo_dir) .. " && git status --porcelain"), "", "the repo is left at base_commit")
  -- empty
  r = grading.evaluate(sb, t, "  \n")
  T.eq(r.status, "empty_patch"); T.eq(r.report.reason, "empty patch")
  T.raises("invalid_argument", grading.evaluate, sb, t, 42)
  T.raises("invalid_argument", grading.evaluate, nil, t, "x")
end)

T.test("evaluate: a fuzzy patch applies through patch --fuzz", function()
  local t = local_task("pager")
  -- gold patch with a stale context line: git apply refuses, patch fuzzes
  local fuzzy = slurp(demo .. "patches/pager.gold.diff"):gsub(
    ' """The number of pages total items fill, per_page on each %(at least 1%)."""',
    ' """Pages needed for total items."""')
  T.ok(fuzzy ~= t.patch, "the context changed")
  local r = grading.evaluate(sb, t, fuzzy)
  T.eq(r.status, "resolved", tostring(r.report and r.report.reason))
  T.eq(r.apply_method, "patch --batch --forward --fuzz=5 -p1 -i")
end)

T.test("evaluate: a hanging test command is an error (timeout), not a grade", function()
  local t = local_task("calc", { test_cmd = "sleep 600; true", eval_timeout = 1 })
  local r = grading.evaluate(sb, t, t.patch)
  T.eq(r.status, "error"); T.ok(not r.resolved)
  T.eq(r.error.code, "timeout"); T.eq(r.report, nil)
  T.match(r.log, ">>>>> Tests Timed Out")
  T.match(r.log, "%+ sleep 600")
  -- opts.timeout overrides the task's
  t.eval_timeout = 1800
  r = grading.evaluate(sb, t, t.patch, { timeout = 1 })
  T.eq(r.error and r.error.code, "timeout")
  local left = sb:execute{ command = "ps -eo args= | grep -c '^sleep 600$'" }.stdout
  T.eq(left, "0\n", "the test command was killed")
end)

T.test("evaluate: a test command that runs no test is unresolved; no repo is an error", function()
  local t = local_task("calc", { test_cmd = "exit 3;" })
  local r = grading.evaluate(sb, t, t.patch)
  T.eq(r.status, "unresolved"); T.eq(r.test_exit_code, 3)
  T.match(r.report.reason, "no test results in the log and no sign a test suite ran")
  t = local_task("calc", { repo_dir = tmp .. "/not-a-repo" })
  r = grading.evaluate(sb, t, t.patch)
  T.eq(r.status, "error"); T.eq(r.error.code, "git_failed")
end)

T.test("diff: new, binary and non-UTF-8 files, byte for byte", function()
  local t = local_task("textutil")
  local d = t.repo_dir
  local bin = {}
  for i = 0, 255 do bin[#bin + 1] = string.char(i) end
  bin = table.concat(bin) .. "\0\0\255"
  write(d .. "/textutil/data.bin", bin)
  write(d .. "/textutil/latin1.txt", "caf\233 \255\n")
  write(d .. "/textutil/new_module.py", "VALUE = 1\n")
  sh("cd " .. q(d) .. " && sed -i 's/\\[^a-z0-9\\]/[^a-z0-9]+/' textutil/slug.py")
  local patch = grading.diff(sb, t)
  T.match(patch, "diff %-%-git a/textutil/data%.bin b/textutil/data%.bin\nnew file mode 100644")
  T.match(patch, "GIT binary patch")
  -- a text file that is not UTF-8 makes the whole patch binary hunks: valid
  -- UTF-8 for preds.jsonl, the bytes exact once applied (below)
  T.ok(utf8.len(patch), "the patch is UTF-8")
  T.match(patch, "diff %-%-git a/textutil/new_module%.py b/textutil/new_module%.py")
  -- it applies on a fresh repo and gives the same bytes
  local t2 = local_task("textutil")
  write(t2.repo_dir .. "/agent.patch", patch)
  sh("cd " .. q(t2.repo_dir) .. " && git apply agent.patch && rm agent.patch")
  T.eq(slurp(t2.repo_dir .. "/textutil/data.bin"), bin)
  T.eq(slurp(t2.repo_dir .. "/textutil/latin1.txt"), "caf\233 \255\n")
  T.eq(slurp(t2.repo_dir .. "/textutil/slug.py"), slurp(d .. "/textutil/slug.py"))
  -- and grades as the fix it holds
  local r = grading.evaluate(sb, t2, patch)
  T.eq(r.status, "resolved", tostring(r.report and r.report.reason))
  -- nothing changed: an empty patch
  local t3 = local_task("pager")
  T.eq(grading.diff(sb, t3), "")
  local function diff_files() return T.sh("ls /tmp | grep -c '^rock-diff\\.' || true") end
  local before = diff_files()
  T.raises("git_failed", grading.diff, sb, local_task("pager", { base_commit = "0000000" }))
  T.eq(diff_files(), before, "a failed diff leaves no file behind")
end)

-- the replay files: their edits, made here the way the editor makes them
-- (old_str exactly once), then diff and evaluate
local function replay(kind, name)
  local t = local_task(name)
  local f = assert(io.open(demo .. "replay-" .. kind .. ".jsonl"))
  local actions
  for line in f:lines() do
    local r = rock.json.decode(line)
    if r.instance_id == t.instance_id then actions = r.actions end
  end
  f:close()
  T.ok(actions, "a replay for " .. t.instance_id)
  T.eq(actions[#actions].tool, "submit", "it ends with submit")
  for _, a in ipairs(actions) do
    if a.tool == "bash" then
      local r = sb:execute{ command = (a.command:gsub("/testbed", t.repo_dir)), timeout = 60 }
      T.eq(r.exit_code, 0, a.command .. ": " .. r.stdout .. r.stderr)
    elseif a.tool == "str_replace_editor" then
      T.eq(a.command, "str_replace")
      local path = a.path:gsub("^/testbed", t.repo_dir)
      local text = slurp(path)
      local s, e = text:find(a.old_str, 1, true)
      T.ok(s, "old_str found in " .. a.path)
      T.ok(not text:find(a.old_str, e + 1, true), "old_str unique in " .. a.path)
      write(path, text:sub(1, s - 1) .. a.new_str .. text:sub(e + 1))
    end
  end
  return grading.evaluate(sb, t, grading.diff(sb, t))
end

T.test("replays: solve resolves, fail does not", function()
  for _, name in ipairs({ "calc", "textutil", "pager" }) do
    T.eq(replay("solve", name).status, "resolved", "solve " .. name)
    local r = replay("fail", name)
    T.eq(r.status, "unresolved", "fail " .. name)
    T.ok(r.applied, "fail " .. name .. " applied")
  end
end)

T.test("run: an empty patch starts nothing; a log_path gets the log", function()
  local t = by_name.calc
  local before = rock.sandbox.live_count()
  local r = grading.run(t, nil, { log_path = tmp .. "/empty.log" })
  T.eq(r.status, "empty_patch"); T.eq(rock.sandbox.live_count(), before)
  T.eq(r.log_path, tmp .. "/empty.log"); T.match(slurp(tmp .. "/empty.log"), "empty patch")
  -- on the local backend the task's repo_dir is on this host
  local lt = local_task("calc")
  r = grading.run(lt, lt.patch, { sandbox = { backend = "local" }, log_path = tmp .. "/calc.log" })
  T.eq(r.status, "resolved"); T.eq(rock.sandbox.live_count(), before, "its sandbox is stopped")
  T.eq(slurp(tmp .. "/calc.log"), r.log)
  r = grading.run(lt, lt.patch, { sandbox = { backend = "no-such" } })
  T.eq(r.status, "error"); T.eq(r.error.code, "invalid_argument")
  T.raises("invalid_argument", grading.run, lt, lt.patch, { sandbox = 3 })
end)

T.test("a rock.timeout around evaluate passes through", function()
  local t = local_task("calc", { test_cmd = "sleep 600; true" })
  local err = T.raises("timeout", rock.timeout, 0.5, grading.evaluate, sb, t, t.patch)
  T.match(err.message, "timed out after 0.5s")
end)

sb:stop()
sh("rm -rf " .. q(tmp))
T.done()
