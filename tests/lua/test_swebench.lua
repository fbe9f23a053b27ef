-- test_swebench.lua: SWE-bench's grading pieces without a sandbox: the
-- eval script a classic row gets, byte for byte against what SWE-bench
-- 4.1.0's code writes for the same rows (tests/lua/data/swebench/*.eval.sh,
-- made once by its make_eval_script_list_py), 5.x rows, the task fields,
-- each Python parser on real output of the real runner (captured in the
-- SWE-bench-layout images by tests/images/swebench/capture-logs), 5.0.x's
-- rules, and every parser and scanner on 1 MB of hostile text.
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local json = require "rock.json"
local tasks = require "rock.agent.tasks"
local grading = require "rock.agent.grading"
local es = require "rock.agent.swebench.eval_script"
local rules = require "rock.agent.swebench.rules"
local parsers = require "rock.agent.parsers"

local here = arg[0]:match("(.*/)")
local data = here .. "data/swebench/"

local rows = {}
for line in io.lines(data .. "rows.jsonl") do rows[#rows + 1] = json.decode(line) end

local function norm(row)
  local t, why = tasks.normalize(row)
  assert(t, why)
  return t
end

T.test("a classic row's eval script is SWE-bench 4.1.0's, byte for byte", function()
  T.ok(#rows >= 10, "rows")
  for _, row in ipairs(rows) do
    local want = T.read(data .. row.instance_id .. ".eval.sh")
    T.ok(want, row.instance_id .. " reference")
    T.eq(es.classic(norm(row)), want, row.instance_id)
  end
end)

T.test("5.x: the row's eval_script as given, the exit code recorded after the end marker", function()
  for _, row in ipairs(rows) do
    local t = norm(row)
    local classic = es.classic(t)
    local s = es.swebench(t)
    -- 5.0.x's record_test_exit_code: two lines around the end marker, nothing else
    local want = classic:gsub("\n: '>>>>> End Test Output'\n",
      "\nSWEBENCH_TEST_EXIT_CODE=$?\n: '>>>>> End Test Output'\necho \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"\n", 1)
    T.eq(s, want, row.instance_id)
    -- a 5.x row carrying that script (as the datasets ship it) runs the same
    local five = {}
    for k, v in pairs(row) do five[k] = v end
    five.eval_script, five.log_parser, five.eval_type = classic, t.log_parser, "pass_and_fail"
    five.image = "example/img:1"
    local t5 = norm(five)
    T.eq(es.swebench(t5), s, row.instance_id .. " 5.x")
    T.eq(es.rock(t5), es.rock(t), row.instance_id .. " rock's script")
    T.eq(t5.image, "example/img:1")
  end
  -- a marker inside a heredoc (a test patch's text) is not the script's
  local lines = es.record_exit_code({ "cat <<'X'", ": '>>>>> End Test Output'", "X", "run",
    ": '>>>>> End Test Output'" })
  T.eq(table.concat(lines, "|"), "cat <<'X'|: '>>>>> End Test Output'|X|run|SWEBENCH_TEST_EXIT_CODE=$?|" ..
    ": '>>>>> End Test Output'|echo \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"")
  T.eq(table.concat(es.record_exit_code({ "make test" }), "|"), "make test", "no marker: kept")
end)

T.test("task fields: specs by repo and version, 5.x fields, clear errors", function()
  local base = { instance_id = "django__django-1", repo = "django/django", version = "5.0", base_commit = "abc",
                 problem_statement = "", test_patch = "", FAIL_TO_PASS = "[]", PASS_TO_PASS = "[]" }
  local t = norm(base)
  T.eq(t.test_cmd, "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1")
  T.eq(t.log_parser, "parse_log_django"); T.eq(t.eval_type, "pass_and_fail")
  T.eq(t.image, "swebench/sweb.eval.x86_64.django_1776_django-1:latest")
  local function with(over)
    local r = {}
    for k, v in pairs(base) do r[k] = v end
    for k, v in pairs(over) do r[k] = v end
    return r
  end
  T.eq(norm(with{ version = "1.9" }).test_cmd, "./tests/runtests.py --verbosity 2")
  T.eq(norm(with{ repo = "sympy/sympy", version = "1.12" }).log_parser, "parse_log_sympy")
  T.eq(norm(with{ repo = "psf/requests", version = "2.27" }).log_parser, "parse_log_requests")
  T.eq(norm(with{ repo = "chartjs/Chart.js", version = "4.0" }).eval_type, "fail_only")
  T.eq(norm(with{ test_cmd = "make check" }).test_cmd, "make check", "a task's own test_cmd wins")
  T.eq(norm(with{ log_parser = "parse_log_pytest" }).log_parser, "parse_log_pytest")
  local _, why = tasks.normalize(with{ version = "9.9" })
  T.match(why, "no spec for django/django version 9%.9")
  _, why = tasks.normalize(with{ version = 5.0 })
  T.match(why, "'version' must be a string")
  _, why = tasks.normalize(with{ log_parser = "parse_log_nonesuch" })
  T.match(why, "'log_parser' \"parse_log_nonesuch\" is no parser")
  _, why = tasks.normalize(with{ eval_type = "fail_mostly" })
  T.match(why, "'eval_type' must be")
  _, why = tasks.normalize(with{ repo = "dbt-labs/dbt-core", version = "1.7" })
  T.match(why, "has no test command")
  T.eq(norm(with{ repo = "dbt-labs/dbt-core", version = "1.7", eval_script = "make\n" }).test_cmd, nil)
  T.eq(norm(with{ repo = "o/r", version = nil }).test_cmd, tasks.DEFAULT_TEST_CMD, "not SWE-bench's: the default")
  T.eq(norm(with{ pids_limit = 64.0, memory = "2g" }).pids_limit, 64)
  _, why = tasks.normalize(with{ pids_limit = -1 })
  T.match(why, "'pids_limit'")
end)

local function log(name) return assert(T.read(data .. name .. ".log"), name) end

T.test("parse_log_django on Django's runner (--verbosity 2): names, docstrings, output between", function()
  local p = parsers.get("parse_log_django")
  local st = p(log("django-base"))
  local C = "shapes.tests.AreaTests."
  T.eq(st["test_noisy (" .. C .. "test_noisy)"], "PASSED")
  T.eq(st["test_square (" .. C .. "test_square)"], "PASSED")
  T.eq(st["test_rectangle (" .. C .. "test_rectangle)"], "FAILED")
  T.eq(st["test_skipped (" .. C .. "test_skipped)"], "SKIPPED")
  T.eq(st["test_circle"], "FAILED", "the FAIL: header")
  T.eq(st["test_rectangle"], "FAILED", "the FAIL: header")
  T.eq(st["Circles have an area of pi r squared."], "FAILED", "the docstring name, as SWE-bench reads it")
  st = p(log("django-gold"))
  T.eq(st["Circles have an area of pi r squared."], "PASSED", "the docstring name, ok on its own line")
  T.eq(st["test_rectangle (" .. C .. "test_rectangle)"], "PASSED")
  -- the shapes SWE-bench's own parser handles
  st = p(table.concat({ "test_a (m.T) ... ok", "test_b (m.T) ... OK", "test_c (m.T) ...  OK",
    "test_d (m.T) ... skipped 'x'", "test_e (m.T) ... FAIL", "test_f (m.T) ... ERROR", "ERROR: test_g (m.T)",
    "test_h (m.T) ... some output", "more output", "ok", "--version is equivalent to version",
    "test_i (m.T) ... Testing against Django installed in '/x' (0 silenced).", "ok",
    "test_j (m.T) ... Internal Server Error: /a/b/", "ok",
    "test_k (m.T) ... System check identified no issues (0 silenced)", "ok",
    "Applying sites.0002_alter_domain_unique...test_no_migrations (m.T) ... ok" }, "\n"))
  for k, v in pairs({ ["test_a (m.T)"] = "PASSED", ["test_b (m.T)"] = "PASSED", ["test_c (m.T)"] = "PASSED",
      ["test_d (m.T)"] = "SKIPPED", ["test_e (m.T)"] = "FAILED", ["test_f (m.T)"] = "ERROR",
      ["test_g"] = "ERROR", ["test_h (m.T)"] = "PASSED", ["--version is equivalent to version"] = "PASSED",
      ["test_i (m.T)"] = "PASSED", ["test_j (m.T)"] = "PASSED", ["test_k (m.T)"] = "PASSED",
      ["test_no_migrations (m.T)"] = "PASSED" }) do
    T.eq(st[k], v, k)
  end
end)

T.test("parse_log_sympy on sympy's runner: ok, F, E and the failure headers", function()
  local st = parsers.get("parse_log_sympy")(log("sympy-base"))
  T.eq(st.test_mean_ints, "PASSED"); T.eq(st.test_mean_fraction, "FAILED"); T.eq(st.test_mean_empty, "ERROR")
  T.eq(st.test_mean_zz_last, nil, "the file's last line ends in [FAIL], not ok: SWE-bench reads no status there")
  T.eq(st["ratlib/tests/test_mean.py:test_mean_empty"], "FAILED", "from the ____ header")
  T.eq(st["ratlib/tests/test_mean.py:test_mean_fraction"], "FAILED")
end)

T.test("pytest parsers on pytest -rA: statuses, SKIPPED summaries, path parameters, ANSI", function()
  local st = parsers.get("parse_log_pytest")(log("pytest-base"))
  T.eq(st["testing/test_words.py::test_one_word"], "PASSED")
  T.eq(st["testing/test_words.py::test_many_spaces"], "FAILED")
  T.eq(st["testing/test_words.py::test_tabs"], "XFAIL")
  T.eq(st["[1]"], nil, "SKIPPED [1] is a summary")
  st = parsers.get("parse_log_pytest_options")(log("requests-base"))
  T.eq(st["tests/test_paths.py::test_stem[/input.txt]"], "PASSED", "a path parameter keeps its basename")
  T.eq(st["tests/test_paths.py::test_stem[/archive.tar.gz]"], "PASSED")
  T.eq(st["tests/test_paths.py::test_stem_hidden[/.hidden]"], "FAILED")
  T.eq(st["tests/test_io.py::test_join_many[parts0]"], "PASSED")
  T.eq(parsers.get("parse_log_requests"), parsers.get("parse_log_pytest_options"))
  st = parsers.get("parse_log_pytest")(log("requests-base"))
  T.eq(st["tests/test_paths.py::test_stem[/srv/data/input.txt]"], "PASSED", "pytest's parser keeps the path")
  local v2 = log("pytest-v2")
  T.ok(v2:find("\27[32mPASSED", 1, true), "the log has ANSI colours")
  st = parsers.get("parse_log_pytest_v2")(v2)
  T.eq(st["testing/test_words.py::test_one_word"], "PASSED")
  T.eq(st["testing/test_words.py::test_many_spaces"], "FAILED")
  T.eq(st["testing/test_words.py::test_platform"], nil, "a line ending in (reason) is no result line")
  T.eq(st["testing/test_words.py::test_tabs - tabs are not spaces yet"], "XFAIL", "only FAILED loses its message")
  T.eq(st["[1] testing/test_words.py:25: only on nonesuch"], nil)
  st = parsers.get("parse_log_matplotlib")("PASSED lib/t.py::test_click[MouseButton.LEFT]\n" ..
    "FAILED lib/t.py::test_click[MouseButton.RIGHT] - boom\n")
  T.eq(st["lib/t.py::test_click[1]"], "PASSED"); T.eq(st["lib/t.py::test_click[3]"], "FAILED")
  st = parsers.get("parse_log_seaborn")("tests/a.py::t1 PASSED [ 50%]\nFAILED tests/a.py::t2 - x\n" ..
    "PASSED tests/a.py::t3\n")
  T.eq(st["tests/a.py::t1"], "PASSED"); T.eq(st["tests/a.py::t2"], "FAILED"); T.eq(st["tests/a.py::t3"], "PASSED")
  st = parsers.get("parse_log_pytest")("PASSEDx a::b\nPASSED a::c\nPASSEDx a::c\n")
  T.eq(next(st), nil, "a word that is no status records nothing (and drops the test)")
  local names = parsers.names()
  for _, n in ipairs({ "parse_log_pytest", "parse_log_pytest_options", "parse_log_pytest_v2", "parse_log_django",
      "parse_log_sympy", "parse_log_matplotlib", "parse_log_seaborn", "parse_log_astropy", "parse_log_xarray" }) do
    T.ok(parsers.get(n), n)
  end
  T.ok(#names >= 20, "every Python name SWE-bench registers")
  T.eq(parsers.get("parse_log_nonesuch"), nil)
end)

local function task_of(f2p, p2p, extra)
  local t = { instance_id = "g-1", repo = "o/r", base_commit = "c", problem_statement = "", test_patch = "",
              FAIL_TO_PASS = f2p, PASS_TO_PASS = p2p }
  for k, v in pairs(extra or {}) do t[k] = v end
  return norm(t)
end

T.test("grading rules (5.0.x): truncated ids, SKIPPED, fail_only, FULL / PARTIAL / NO", function()
  local sm = { ["t.py::a[x-1]"] = "PASSED", ["t.py::a[x-2]"] = "XFAIL", ["t.py::b[y-1]"] = "PASSED",
               ["t.py::b[y-2]"] = "FAILED", ["t.py::s"] = "SKIPPED", ["t.py::f"] = "FAILED" }
  local r = rules.grade(task_of({ "t.py::a[x" }, { "t.py::s" }), sm, {})
  T.eq(r.status, rules.FULL, "a cut id matches keys that agree; SKIPPED is kept for P2P")
  T.ok(r.resolved)
  r = rules.grade(task_of({ "t.py::b[y" }, {}), sm, {})
  T.eq(r.status, rules.NO, "keys that disagree: no match")
  r = rules.grade(task_of({ "t.py::a[x-" .. "1]" }, {}), { ["t.py::a[x-1]x"] = "PASSED" }, {})
  T.eq(r.status, rules.NO, "a whole id matches only itself")
  r = rules.grade(task_of({ "t.py::s" }, {}), sm, {})
  T.eq(r.status, rules.NO, "SKIPPED fails FAIL_TO_PASS")
  r = rules.grade(task_of({ "t.py::a[x-1]", "t.py::f" }, { "t.py::b[y-1]" }), sm, {})
  T.eq(r.status, rules.PARTIAL); T.ok(not r.resolved)
  r = rules.grade(task_of({ "t.py::a[x-1]", "t.py::f" }, { "t.py::f" }), sm, {})
  T.eq(r.status, rules.NO, "P2P broken: NO, not PARTIAL")
  r = rules.grade(task_of({ "missing", "t.py::s" }, { "t.py::f" }, { eval_type = "fail_only" }), sm, {})
  T.eq(#r.FAIL_TO_PASS.success, 2, "fail_only: only a present FAILED fails")
  T.eq(r.PASS_TO_PASS.failure[1], "t.py::f")
  T.eq(rules.grade(task_of({}, {}), {}, {}).status, rules.FULL, "empty lists count as 1")
  T.eq(json.encode(rules.grade(task_of({}, {}), {}, { found = false, reason = "x" }).FAIL_TO_PASS.success), "[]")
  T.eq(rules.grade(task_of({}, {}), {}, { found = false, reason = "x" }).reason, "x")
end)

T.test("reading a log (5.0.x): failure markers, first-end slicing, whole-log fallback, evidence, exit code", function()
  local t = task_of({ "a" }, {})
  local S, E = "+ : '>>>>> Start Test Output'\n", "+ : '>>>>> End Test Output'\n"
  local sm, ok, why = rules.log_statuses(t, S .. "PASSED a\n" .. E .. ">>>>> Test Exit Code: 0\n")
  T.ok(ok); T.eq(sm.a, "PASSED")
  sm, ok, why = rules.log_statuses(t, S .. "PASSED a\n" .. E .. ">>>>> Test Exit Code: 1\n")
  T.ok(not ok); T.match(why, "exited 1 but no test FAILED")
  sm, ok = rules.log_statuses(t, S .. "PASSED a\nFAILED b\n" .. E .. ">>>>> Test Exit Code: 1\n")
  T.ok(ok, "a real failure explains the exit code")
  sm, ok, why = rules.log_statuses(t, S .. "PASSED a\n" .. E .. ">>>>> Tests Errored\n")
  T.ok(not ok); T.match(why, "Tests Errored")
  sm, ok, why = rules.log_statuses(t, S .. "PASSED a\n")
  T.ok(not ok); T.match(why, "markers missing")
  sm = rules.log_statuses(t, S .. "PASSED a\n" .. E .. "FAILED a\n")
  T.eq(sm.a, "PASSED", "only the slice, when it gives results")
  sm = rules.log_statuses(t, "PASSED a\n" .. S .. "nothing\n" .. E)
  T.eq(sm.a, "PASSED", "the whole log when the slice gives nothing")
  sm, ok, why = rules.log_statuses(t, S .. "nothing\n" .. E)
  T.ok(not ok); T.match(why, "no sign a test suite ran")
  sm, ok = rules.log_statuses(task_of({ "a" }, {}, { log_parser = "parse_log_sympy" }), S .. "Tests: 3 passed\n" .. E)
  T.ok(ok, "a runner's summary is evidence")
  for _, s in ipairs({ "Executed 3 of 4", "TOTAL: 2 SUCCESS", "10 passing", "Tests:  7", "Test Suites: 1 failed, 2 total",
      "# tests 4", "3 specs, 0 failures", "case': ok", "Test Suites: 10 total" }) do
    T.ok(rules.suite_ran(s), s)
  end
  for _, s in ipairs({ "Executed 0 of 4", "0 passing", "Tests: 0", "00 passing", "# tests 0", " # tests 4",
      "case': okay", "Test Suites: 0 total" }) do
    T.ok(not rules.suite_ran(s), s)
  end
  T.eq(rules.recorded_exit_code("x >>>>> Test Exit Code: -3 y"), -3)
  T.eq(rules.recorded_exit_code(">>>>> Test Exit Code: x\n>>>>> Test Exit Code:  7"), 7)
  -- rock's exact region beats a marker the tests print
  local text = S .. "PASSED a\n+ : '>>>>> End Test Output'\nFAILED a\n" .. E
  local from = #S + 1
  sm = rules.log_statuses(t, text, { region = { from, #text - #E }, exit_code = 1 })
  T.eq(sm.a, "FAILED", "the region runs to the script's own end marker")
  T.eq(grading.grade(t, { a = "PASSED" }, { test_exit_code = 1 }).resolved, false)
end)

-- 1 MB of text built to make backtracking patterns explode
local function hostile()
  local pieces = { string.rep(" ", 1 << 20), string.rep(".", 1 << 20), string.rep(" ... ", 200000),
    string.rep("[", 1 << 20), string.rep("_ ", 500000) .. "x", string.rep(".py: ", 200000),
    "PASSED " .. string.rep("a - ", 250000), string.rep("\27[1", 300000),
    "x ... Testing against Django installed in " .. string.rep(" silenced).\nno", 70000),
    string.rep("x ... Internal Server Error: /a\n", 30000), string.rep("Test Suites: 1 a, ", 60000),
    string.rep("diff --git a/ b/", 60000), string.rep("Executed 1", 100000), string.rep("1", 1 << 20),
    "@@ -" .. string.rep("1", 1 << 20) .. "x\n", "+++ " .. string.rep(" ", 1 << 20) .. ".git x\n",
    "cat " .. string.rep("<<'a ", 200000) .. "\n" }
  local r, seed = {}, 7
  for _ = 1, 1 << 18 do -- 256 KiB of random bytes
    seed = (seed * 1103515245 + 12345) % 2147483648
    r[#r + 1] = string.char(seed % 256)
  end
  pieces[#pieces + 1] = table.concat(r)
  return pieces
end

T.test("every parser and scanner: 1 MB hostile inputs, linear time, never raises", function()
  local inputs = hostile()
  local seen = {}
  for _, name in ipairs(parsers.names()) do
    local p = parsers.get(name)
    if seen[p] then goto next end
    seen[p] = true
    local t0 = os.clock()
    for _, s in ipairs(inputs) do
      local ok, sm = pcall(p, s, {})
      T.ok(ok, name .. " raised: " .. tostring(sm))
      for _, st in pairs(sm) do
        T.ok(st == "PASSED" or st == "FAILED" or st == "SKIPPED" or st == "ERROR" or st == "XFAIL",
          name .. " status " .. tostring(st))
      end
    end
    T.ok(os.clock() - t0 < 10, name .. ": " .. (os.clock() - t0) .. " s for " .. #inputs .. " inputs")
    ::next::
  end
  local t0 = os.clock()
  for _, s in ipairs(inputs) do
    rules.suite_ran(s); rules.slice(s); rules.recorded_exit_code(s)
    es.directives({ repo = "django/django", test_patch = s }); es.modified_files(s)
    grading.unsafe_path(s)
  end
  T.ok(os.clock() - t0 < 10, "scanners: " .. (os.clock() - t0) .. " s")
end)

T.done()
