-- test_swebench_multilingual.lua: SWE-bench Multilingual rows (and
-- Multimodal's JS repos) graded from repo + version alone: every (repo,
-- version) of SWE-bench 4.1.0's non-Python spec maps has a spec and a
-- parser in rock (data/swebench_ml/pairs.txt, listed once from 4.1.0's
-- constants by data/swebench_ml/make.py; with SWEBENCH_SRC set to an
-- unpacked SWE-bench 4.1.0 (python3 on the PATH), the list is made
-- again from it and compared); the eval script of 21 rows across the seven
-- languages byte for byte against what 4.1.0's own make_test_spec wrote
-- for them (data/swebench_ml/*.eval.sh), and of every pair for one test
-- patch (all.jsonl); every non-Python parser on every captured runner log
-- against 4.1.0's parsers on it (parsers.json); 5.x's and rock's scripts;
-- and a Go row and a Rust row (its spec's build step) graded end to end on
-- the local backend with real `go test` and `cargo test`.
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local json = require "rock.json"
local tasks = require "rock.agent.tasks"
local swe = require "rock.agent.swebench"
local es = require "rock.agent.swebench.eval_script"
local parsers = require "rock.agent.parsers"

local here = arg[0]:match("(.*/)")
local data = here .. "data/swebench_ml/"

local function norm(row)
  local t, why = tasks.normalize(row)
  assert(t, why)
  return t
end

local rows = {}
for line in io.lines(data .. "rows.jsonl") do rows[#rows + 1] = json.decode(line) end

local function pairs_list(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local family, repo, version = line:match("^(%S+) (%S+) (%S+)$")
    assert(family, "pairs.txt line: " .. line)
    out[#out + 1] = { family = family, repo = repo, version = version }
  end
  return out
end

T.test("coverage: every (repo, version) of 4.1.0's Multilingual maps has a spec, a family and a parser", function()
  local text = assert(T.read(data .. "pairs.txt"))
  local list = pairs_list(text)
  local want = { c = 42, go = 42, java = 43, javascript = 132, php = 43, ruby = 44, rust = 43 }
  local count, repos = {}, {}
  for _, p in ipairs(list) do
    count[p.family] = (count[p.family] or 0) + 1
    local what = p.repo .. " " .. p.version
    local spec = swe.spec(p.repo, p.version)
    T.ok(spec, what .. ": a spec")
    T.eq(swe.family(p.repo), p.family, what .. ": family")
    T.ok(type(swe.test_cmd_of(spec)) == "string", what .. ": a test command")
    local name = swe.parser_for(p.repo)
    T.ok(name and parsers.get(name), what .. ": parser " .. tostring(name))
    repos[p.repo] = (repos[p.repo] or 0) + 1
  end
  for f, n in pairs(want) do T.eq(count[f], n, f .. " pairs") end
  T.eq(#list, 389, "pairs")
  -- and nothing more: rock's non-Python specs are exactly these
  local n, nrepos = 0, 0
  for repo, versions in pairs(swe.specs()) do
    if swe.family(repo) ~= "python" then
      nrepos = nrepos + 1
      for _ in pairs(versions) do n = n + 1 end
      T.ok(repos[repo], repo .. " is in 4.1.0's maps")
    end
  end
  T.eq(n, 389, "rock's non-Python pairs"); T.eq(nrepos, 46, "repos")
  -- the fields the eval script reads are what 4.1.0's code takes them for
  for repo, versions in pairs(swe.specs()) do
    if swe.family(repo) ~= "python" then
      for v, spec in pairs(versions) do
        local c = spec.test_cmd
        T.ok(type(c) == "string" or (type(c) == "table" and #c >= 1), repo .. " " .. v .. " test_cmd")
        for _, f in ipairs({ "build", "install", "pre_install" }) do
          if spec[f] ~= nil then
            T.ok(type(spec[f]) == "table" and #spec[f] >= 1, repo .. " " .. v .. " " .. f .. " is a list")
            for _, x in ipairs(spec[f]) do T.ok(type(x) == "string", repo .. " " .. v .. " " .. f) end
          end
        end
      end
    end
  end
  -- made again from SWE-bench's own constants when its source is given
  local src = os.getenv("SWEBENCH_SRC")
  if src and src ~= "" then
    local out, ok = T.sh("python3 '" .. data .. "make.py' '" .. src .. "' pairs")
    T.ok(ok, "make.py pairs: " .. out)
    T.eq(out, text, "pairs.txt is 4.1.0's")
  end
end)

T.test("a Multilingual row's eval script is SWE-bench 4.1.0's, byte for byte", function()
  T.ok(#rows >= 15, "rows")
  local seen = {}
  for _, row in ipairs(rows) do
    local want = T.read(data .. row.instance_id .. ".eval.sh")
    T.ok(want, row.instance_id .. " reference")
    local t = norm(row)
    T.eq(es.classic(t), want, row.instance_id)
    seen[swe.family(row.repo)] = true
  end
  for _, f in ipairs({ "c", "go", "java", "javascript", "php", "ruby", "rust" }) do T.ok(seen[f], f .. " rows") end
end)

T.test("every (repo, version): the eval script 4.1.0 writes for it, byte for byte", function()
  -- data/swebench_ml/all.jsonl: make.py's ALL_PATCH through 4.1.0's make_test_spec for every pair
  local patch = "diff --git a/client/x.js b/client/x.js\n--- a/client/x.js\n+++ b/client/x.js\n@@ -1 +1 @@\n-a\n+b\n"
  local n = 0
  for line in io.lines(data .. "all.jsonl") do
    local r = json.decode(line)
    local t = norm({ instance_id = "x__y-1", repo = r.repo, version = r.version, base_commit = "0123456789abcdef",
      problem_statement = "", test_patch = patch, FAIL_TO_PASS = "[]", PASS_TO_PASS = "[]" })
    T.eq(es.classic(t), r.script, r.repo .. " " .. r.version)
    n = n + 1
  end
  T.eq(n, 389, "pairs")
end)

T.test("5.x and rock's scripts of a Multilingual row: the exit code recorded, the tests marked", function()
  for _, row in ipairs(rows) do
    local t = norm(row)
    local classic = es.classic(t)
    local want = classic:gsub("\n: '>>>>> End Test Output'\n",
      "\nSWEBENCH_TEST_EXIT_CODE=$?\n: '>>>>> End Test Output'\necho \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"\n", 1)
    T.eq(es.swebench(t), want, row.instance_id)
    local script, marked = es.rock(t)
    T.ok(marked, row.instance_id .. ": rock found the markers")
    T.ok(script:find("\n: '>>>>> Start Test Output'\n{ rock_eval_mark start; } 2>/dev/null\n(\n", 1, true),
      row.instance_id .. ": the tests run in rock's subshell")
    -- a 5.x row carrying the classic script runs the same
    local five = {}
    for k, v in pairs(row) do five[k] = v end
    five.eval_script, five.log_parser = classic, t.log_parser
    T.eq(es.rock(norm(five)), script, row.instance_id .. " 5.x")
  end
end)

T.test("Multilingual task fields: the spec's command, the repo's parser, no directives, fail_only repos", function()
  local base = { instance_id = "tokio-rs__tokio-4898", repo = "tokio-rs/tokio", version = "4898", base_commit = "abc",
                 problem_statement = "", FAIL_TO_PASS = "[]", PASS_TO_PASS = "[]",
                 test_patch = "diff --git a/tokio/tests/rt_metrics.rs b/tokio/tests/rt_metrics.rs\n" }
  local function with(over)
    local r = {}
    for k, v in pairs(base) do r[k] = v end
    for k, v in pairs(over) do r[k] = v end
    return r
  end
  local t = norm(base)
  T.eq(t.test_cmd, 'RUSTFLAGS="--cfg tokio_unstable" cargo test --features full --test rt_metrics')
  T.eq(t.log_parser, "parse_log_cargo")
  T.eq(#es.directives(t), 0, "4.1.0 appends no directive for these languages")
  T.eq(#es.directives(with{ repo = "o/r" }), 1, "a repo SWE-bench does not know: pytest's paths")
  -- a list of lines is one command per line, in order
  t = norm(with{ repo = "google/gson", version = "1014" })
  T.eq(t.test_cmd, "mvnd test -B -T 1C -pl gson -Dtest=com.google.gson.internal.bind.JsonTreeReaderTest#testSkipValue_emptyJsonObject\n" ..
    "mvnd test -B -T 1C -pl gson -Dtest=com.google.gson.internal.bind.JsonTreeReaderTest#testSkipValue_filledJsonObject")
  T.eq(t.log_parser, "parse_log_maven")
  for repo, parser in pairs({ ["jqlang/jq"] = "parse_log_jq", ["vuejs/core"] = "parse_log_vitest",
      ["projectlombok/lombok"] = "parse_log_ant", ["rubocop/rubocop"] = "parse_log_rspec_transformed_json",
      ["laravel/framework"] = "parse_log_phpunit", ["caddyserver/caddy"] = "parse_log_gotest" }) do
    local v = next(swe.specs()[repo])
    T.eq(norm(with{ repo = repo, version = v }).log_parser, parser, repo)
  end
  T.eq(norm(with{ repo = "markedjs/marked", version = "4.0" }).eval_type, "fail_only")
  T.eq(norm(with{ repo = "babel/babel", version = "15649" }).eval_type, "pass_and_fail")
  local _, why = tasks.normalize(with{ version = "1" })
  T.match(why, "no spec for tokio%-rs/tokio version 1")
  -- a task's own test_cmd wins, on wp-calypso too (its commands are made from the patch otherwise)
  local cal = with{ repo = "Automattic/wp-calypso", version = "10.10.0",
    test_patch = "diff --git a/client/a/test/x.js b/client/a/test/x.js\n--- a/client/a/test/x.js\n+++ b/client/a/test/x.js\n@@ -1 +1 @@\n-a\n+b\n" }
  T.match(es.classic(norm(cal)), "\n%./node_modules/%.bin/jest %-%-verbose %-c=test/client/jest%.config%.js 'client/a/test/x%.js'\n")
  cal.test_cmd = "make calypso-test"
  local s = es.classic(norm(cal))
  T.match(s, "\n: '>>>>> Start Test Output'\nmake calypso%-test\n: '>>>>> End Test Output'\n")
  -- a quote in a calypso path stays one word
  T.eq(es.calypso_test_cmds({ version = "6.9.0", test_patch = "diff --git a/client/it's.js b/client/it's.js\n" ..
    "--- a/client/it's.js\n+++ b/client/it's.js\n@@ -1 +1 @@\n-a\n+b\n" })[1], "npm run test-client --verbose 'client/it'\\''s.js'")
end)

T.test("every non-Python parser on every captured runner log gives what 4.1.0's gives", function()
  -- data/swebench_ml/parsers.json: 4.1.0's log_parsers/{c,go,java,javascript,php,ruby,rust}.py
  -- on each log of data/parsers/logs (real go test, cargo test, Maven, PHPUnit, minitest,
  -- test-unit, RSpec, googletest, doctest, jest, vitest, mocha, TAP output)
  local want = json.decode(assert(T.read(data .. "parsers.json")))
  local n, nonempty = 0, 0
  for key, statuses in pairs(want) do
    local logname, name, iid = key:match("^(%S+) (%S+) (%S+)$")
    local fn = parsers.get(name)
    T.ok(fn, name)
    local text = assert(T.read(here .. "data/parsers/logs/" .. logname), logname)
    local got = fn(text, { instance_id = iid, repo = "x/y", version = "1" })
    for t, st in pairs(statuses) do T.eq(got[t], st, key .. ": " .. t) end
    for t, st in pairs(got) do T.eq(statuses[t], st, key .. ": " .. t .. " (4.1.0 has none)") end
    n = n + 1
    if next(statuses) then nonempty = nonempty + 1 end
  end
  T.eq(n, 406, "log x parser pairs")
  T.ok(nonempty >= 28, "pairs with statuses: " .. nonempty)
end)

T.test("unidiff's paths: modified, new, deleted and renamed files", function()
  local p = table.concat({
    "diff --git a/m.js b/m.js", "--- a/m.js", "+++ b/m.js", "@@ -1 +1 @@", "-a", "+b",
    "diff --git a/n.js b/n.js", "new file mode 100644", "--- /dev/null", "+++ b/n.js", "@@ -0,0 +1 @@", "+n",
    "diff --git a/d.js b/d.js", "deleted file mode 100644", "--- a/d.js", "+++ /dev/null", "@@ -1 +0,0 @@", "-d",
    "diff --git a/old/r.js b/new/r.js", "similarity index 90%", "rename from old/r.js", "rename to new/r.js",
    "--- a/old/r.js", "+++ b/new/r.js", "@@ -1 +1 @@", "-r", "+R", "" }, "\n")
  T.eq(table.concat(es.patch_paths(p), " "), "m.js n.js d.js new/r.js")
  T.eq(table.concat(es.modified_files(p), " "), "m.js d.js old/r.js")
end)

-- a Go module whose test SWE-bench's caddy 6411 command runs
-- (go test -v . -run "TestReplacerNew*"), graded through the spec
local function go_row(root)
  local dir = root .. "/caddy"
  local t = T.git_task(dir, {
    ["go.mod"] = "module example.com/caddy\n\ngo 1.18\n",
    ["replacer.go"] = "package caddy\n\nfunc NewReplacer() string { return \"old\" }\n",
    ["replacer_test.go"] = "package caddy\n\nimport \"testing\"\n\nfunc TestReplacerNewOld(t *testing.T) {}\n",
  }, { instance_id = "caddyserver__caddy-6411", repo = "caddyserver/caddy", version = "6411",
       problem_statement = "NewReplacer returns old" })
  t.test_patch = table.concat({
    "diff --git a/replacer_test.go b/replacer_test.go", "--- a/replacer_test.go", "+++ b/replacer_test.go",
    "@@ -3,3 +3,9 @@ package caddy", " import \"testing\"", " ", " func TestReplacerNewOld(t *testing.T) {}",
    "+", "+func TestReplacerNew(t *testing.T) {", "+\tif NewReplacer() != \"new\" {", "+\t\tt.Fatal(\"old\")",
    "+\t}", "+}", "" }, "\n")
  t.FAIL_TO_PASS = json.array({ "TestReplacerNew" })
  t.PASS_TO_PASS = json.array({ "TestReplacerNewOld" })
  local gold = table.concat({
    "diff --git a/replacer.go b/replacer.go", "--- a/replacer.go", "+++ b/replacer.go", "@@ -1,3 +1,3 @@",
    " package caddy", " ", "-func NewReplacer() string { return \"old\" }", "+func NewReplacer() string { return \"new\" }",
    "" }, "\n")
  return norm(t), gold
end

local go = T.sh("command -v go")
if go == "" then
  print("SKIP a Go row graded end to end: go is not installed (.ci/deps installs it)")
else
  T.test("a Go row graded end to end from repo + version: real go test, parse_log_gotest", function()
    local grading = require "rock.agent.grading"
    local tmp = os.getenv("TMPDIR") or "/tmp"
    local root = T.sh("mktemp -d " .. tmp .. "/rock-ml-test.XXXXXX"):gsub("%s+$", "")
    local ok, err = pcall(function()
      local t, gold = go_row(root)
      T.eq(t.test_cmd, 'go test -v . -run "TestReplacerNew*"')
      T.eq(t.log_parser, "parse_log_gotest")
      local sb = { backend = "local", env = { GOCACHE = root .. "/gocache", GOFLAGS = "-mod=mod",
        GOPATH = root .. "/gopath", HOME = root } }
      local r = grading.run(t, gold, { sandbox = sb })
      T.eq(r.status, "resolved", "gold: " .. tostring(r.log):sub(-1500))
      T.eq(r.report.FAIL_TO_PASS.success[1], "TestReplacerNew")
      T.eq(r.report.PASS_TO_PASS.success[1], "TestReplacerNewOld")
      T.eq(r.tests.TestReplacerNew, "PASSED")
      local wrong = gold:gsub('"new"', '"newer"')
      r = grading.run(t, wrong, { sandbox = sb })
      T.eq(r.status, "unresolved", "a wrong patch")
      T.eq(r.applied, true, "the wrong patch applied")
      T.eq(r.tests.TestReplacerNew, "FAILED")
      r = grading.run(t, "", { sandbox = sb })
      T.eq(r.status, "empty_patch", "no patch")
    end)
    os.execute("chmod -R u+w '" .. root .. "' 2>/dev/null; rm -rf '" .. root .. "'")
    if not ok then error(err, 0) end
  end)
end

-- a cargo workspace whose tests SWE-bench's nushell 13246 spec builds and
-- runs (build: cargo build; test: cargo test -p nu-command --no-fail-fast
-- --test main find::), graded through the spec
local function rust_row(root)
  local dir = root .. "/nushell"
  os.execute("mkdir -p '" .. dir .. "/src' '" .. dir .. "/crates/nu-command/src' '" .. dir .. "/crates/nu-command/tests'")
  local t = T.git_task(dir, {
    ["Cargo.toml"] = '[package]\nname = "nu"\nversion = "0.1.0"\nedition = "2021"\n\n' ..
      '[workspace]\nmembers = ["crates/nu-command"]\n',
    ["src/main.rs"] = "fn main() {}\n",
    ["crates/nu-command/Cargo.toml"] = '[package]\nname = "nu-command"\nversion = "0.1.0"\nedition = "2021"\n',
    ["crates/nu-command/src/lib.rs"] = 'pub fn find(s: &str) -> bool { s.contains("x") }\n',
    ["crates/nu-command/tests/main.rs"] = "mod find {\n    #[test]\n    fn finds_x() {\n" ..
      '        assert!(nu_command::find("axb"));\n    }\n}\n',
  }, { instance_id = "nushell__nushell-13246", repo = "nushell/nushell", version = "13246",
       problem_statement = "find is case sensitive" })
  t.test_patch = table.concat({
    "diff --git a/crates/nu-command/tests/main.rs b/crates/nu-command/tests/main.rs",
    "--- a/crates/nu-command/tests/main.rs", "+++ b/crates/nu-command/tests/main.rs",
    "@@ -3,4 +3,8 @@ mod find {", "     fn finds_x() {", '         assert!(nu_command::find("axb"));', "     }",
    "+    #[test]", "+    fn finds_upper_x() {", '+        assert!(nu_command::find("aXb"));', "+    }", " }", "" }, "\n")
  t.FAIL_TO_PASS = json.array({ "find::finds_upper_x" })
  t.PASS_TO_PASS = json.array({ "find::finds_x" })
  local gold = table.concat({
    "diff --git a/crates/nu-command/src/lib.rs b/crates/nu-command/src/lib.rs",
    "--- a/crates/nu-command/src/lib.rs", "+++ b/crates/nu-command/src/lib.rs", "@@ -1 +1 @@",
    '-pub fn find(s: &str) -> bool { s.contains("x") }',
    '+pub fn find(s: &str) -> bool { s.to_lowercase().contains("x") }', "" }, "\n")
  return norm(t), gold
end

local cargo = T.sh("command -v cargo || ls \"$HOME/.cargo/bin/cargo\"")
if cargo == "" then
  print("SKIP a Rust row graded end to end: cargo is not installed (.ci/deps installs it)")
else
  T.test("a Rust row graded end to end from repo + version: the spec's build, real cargo test", function()
    local grading = require "rock.agent.grading"
    local tmp = os.getenv("TMPDIR") or "/tmp"
    local root = T.sh("mktemp -d " .. tmp .. "/rock-ml-test.XXXXXX"):gsub("%s+$", "")
    local ok, err = pcall(function()
      local t, gold = rust_row(root)
      T.eq(t.log_parser, "parse_log_cargo")
      local bin = cargo:match("^(.*)/cargo%s*$")
      local sb = { backend = "local", env = { PATH = bin .. ":/usr/bin:/bin", CARGO_TARGET_DIR = root .. "/target",
        CARGO_NET_OFFLINE = "true", CARGO_HOME = os.getenv("CARGO_HOME") or (os.getenv("HOME") .. "/.cargo"),
        RUSTUP_HOME = os.getenv("RUSTUP_HOME") or (os.getenv("HOME") .. "/.rustup") } }
      local r = grading.run(t, gold, { sandbox = sb })
      T.eq(r.status, "resolved", "gold: " .. tostring(r.log):sub(-1500))
      T.match(r.test_output, "\n%+ cargo build\n.*: '>>>>> Start Test Output'", "the spec's build ran before the tests")
      T.eq(r.tests["find::finds_upper_x"], "PASSED")
      r = grading.run(t, gold:gsub("to_lowercase%(%)", "to_string()"), { sandbox = sb })
      T.eq(r.status, "unresolved", "a wrong patch: " .. tostring(r.log):sub(-800))
      T.eq(r.tests["find::finds_upper_x"], "FAILED")
      T.eq(r.tests["find::finds_x"], "PASSED")
    end)
    os.execute("chmod -R u+w '" .. root .. "' 2>/dev/null; rm -rf '" .. root .. "'")
    if not ok then error(err, 0) end
  end)
end

T.done()
