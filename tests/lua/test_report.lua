-- test_report.lua: rock report on crafted run directories, checked in
-- headless Chromium (browser.lua): a trajectory holding <script>, an
-- <img onerror>, a fake sk- key, a bearer token and a secret of the
-- environment renders escaped (nothing runs) and redacted (no file of the
-- report holds them); the counts by reason and by exit status; a torn
-- last line and a missing eval log render
-- marked; a start failure is listed with its error and its sandbox's
-- phases; --instances adds the gold patch and the tasks not run yet; the
-- table sorts and filters, h/l follow its view; no page fetches anything but itself, from
-- file:// and from a static HTTP host, and none renders blank; a DAgger
-- run's rounds are tabled and plotted; numbers that are not whole or not
-- finite render; the redaction count is exact (run.json's marked flag and
-- text already redacted are not counted again).
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local B = dofile(arg[0]:match("(.*/)") .. "browser.lua")
local json = require "rock.json"

local tmp = T.sh("mktemp -d /tmp/rock-report-test.XXXXXX"):gsub("%s+$", "")
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local run = tmp .. "/run"
os.execute("mkdir -p " .. q(run .. "/eval"))

local KEY = "sk-live0123456789abcdefghijKLMN"
local BEARER = "tok_abcdefgh1234567890"
local ENV_SECRET = "envSecret-9f8e7d6c5b4a"
local SCRIPT = "<script>window.__pwned=1</script>"
local IMG = '<img src=x onerror="window.__pwned=2">'
local ENV_LINE = "GITHUB_TOKEN=ghp_envAssigned0123456789" -- as `env` in the sandbox prints it

local function traj(id, fields)
  local t = { instance_id = id, policy = "replay", model = "replay", termination_reason = "finish",
    exit_status = "Submitted", messages = json.array(), steps = json.array(), patch = "",
    model_stats = { instance_cost = 0.5, api_calls = 2, tokens_sent = 100, tokens_received = 20 },
    timings = { setup = 1, agent = 2, eval = 3, total = 6 }, sandbox = { id = "rk-1", image = "img:1", backend = "docker" } }
  for k, v in pairs(fields) do t[k] = v end
  return json.encode(t)
end

local evil_patch = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old = 1\n+new = '" .. SCRIPT .. "'\n"
local lines = {
  traj("evil-1", {
    messages = { { role = "system", content = "sys" }, { role = "user", content = "fix it " .. IMG },
      { role = "assistant", content = "I will print " .. SCRIPT, tool_calls = { { id = "c1", type = "function",
        ["function"] = { name = "bash", arguments = json.encode({ command = "curl -H 'Authorization: Bearer " .. BEARER .. "' x" }) } } } },
      { role = "tool", tool_call_id = "c1", content = "<returncode>0</returncode><output>key " .. KEY ..
        " env " .. ENV_SECRET .. "\n" .. ENV_LINE .. "\nPATH=/usr/bin\n<elided_chars>42 characters elided</elided_chars></output>" },
      { role = "assistant", content = "", tool_calls = { { id = "c2", type = "function", ["function"] = { name = "submit", arguments = "{}" } } } },
      { role = "tool", tool_call_id = "c2", content = "submitted" } },
    steps = { { action = { tool = "bash", command = "curl -H 'Authorization: Bearer " .. BEARER .. "' x" }, observation_message = 3,
                exit_code = 0, seconds = 0.5, tokens = 60, cost = 0.25 },
              { action = { tool = "submit" }, observation_message = 5, exit_code = 0, seconds = 0.1, tokens = 60, cost = 0.25 } },
    patch = evil_patch,
    sandbox = { id = "rk-1", image = "img:1", backend = "docker", node = "http://node-a:8080", slurm_job_id = "61",
      phases = { { name = "image_pull", status = "success", seconds = 3 }, { name = "container_create", status = "success", seconds = 0 },
                 { name = "container_start", status = "success", seconds = 1 }, { name = "rocklet_ready", status = "success", seconds = 2 } } },
    eval = { status = "resolved", resolved = true, tests = { ["t::a"] = "PASSED", ["t::b"] = "PASSED" },
      report = { FAIL_TO_PASS = { success = { "t::a" }, failure = {} }, PASS_TO_PASS = { success = { "t::b" }, failure = {} } },
      log_path = "/nonexistent/moved/evil-1.log" } }),
  traj("lost-1", { patch = "diff --git a/y b/y\n+y\n", steps = { { format_error = true, failure_reason = "format_error",
      observation = "Please answer with one <b>tool call</b>.", seconds = 0.1 }, { action = { tool = "submit" }, exit_code = 0 } },
    eval = { status = "unresolved", resolved = false, log_path = tmp .. "/nowhere/lost-1.log" },
    model_stats = { instance_cost = 2.5, api_calls = 9, tokens_sent = 5000, tokens_received = 900 } }),
  traj("nostart-1", { termination_reason = "aborted", exit_status = "sandbox_start_failed", model_stats = { instance_cost = 0 },
    error = { code = "sandbox_start_failed", message = "image <b>not</b> found" },
    sandbox = { backend = "docker", image = "gone:1", phases = { { name = "image_pull", status = "failed", seconds = 0,
      message = "pull access denied" }, { name = "container_create", status = "waiting" } } } }),
  traj("inplace-1", { patch = "diff --git a/z b/z\n+z\n", steps = { { action = { tool = "submit" }, exit_code = 0 } },
    eval = { status = "error", resolved = false, error = "grading: the sandbox died <i>mid-run</i>" } }),
}
T.write(run .. "/trajectories.jsonl", table.concat(lines, "\n") .. "\n" .. '{"instance_id":"torn-1","messages":[{"ro')
T.write(run .. "/eval/evil-1.log", "=== rock: eval\n============================= test session starts ==============\n" ..
  "t::a PASSED <b>bold</b>\n>>>>> Test Exit Code: 0\n=== rock: 512 bytes of the eval log elided (it has 9000; the first and last 4096 are kept) ===\n=== rock: done\n")
T.write(tmp .. "/instances.jsonl", json.encode({ instance_id = "evil-1", patch = "diff --git a/x.py b/x.py\n+gold = 1\n" }) .. "\n" ..
  json.encode({ instance_id = "later-1" }) .. "\n")

local out, ok = T.sh("REPORT_TEST_API_KEY=" .. ENV_SECRET .. " " .. q(T.rock_exe()) .. " report " .. q(run) ..
  " --instances " .. q(tmp .. "/instances.jsonl"))
local site = run .. "/report"

T.test("rock report writes the site and says what it did", function()
  T.ok(ok, out)
  T.match(out, "rock report: 6 task%(s%) %(1 torn line%(s%)%), %d+ redaction%(s%), [%d.]+s: .*/report/index.html")
  for _, f in ipairs({ "index.html", "t/evil-1.html", "t/lost-1.html", "t/nostart-1.html", "t/inplace-1.html", "t/_line_5_.html" }) do
    T.ok(T.read(site .. "/" .. f), f .. " written")
  end
  T.ok(not io.open(site .. "/t/later-1.html"), "a pending task has no page")
end)

T.test("rock report refuses what is not a run directory, and makes nothing", function()
  local o, good = T.sh(q(T.rock_exe()) .. " report " .. q(tmp .. "/no/such") .. " 2>&1")
  T.ok(not good, o)
  T.match(o, "is not a run directory %(no such directory%)")
  T.ok(not io.open(tmp .. "/no"), "nothing made")
  os.execute("mkdir -p " .. q(tmp .. "/empty"))
  o, good = T.sh(q(T.rock_exe()) .. " report " .. q(tmp .. "/empty") .. " --instances " .. q(tmp .. "/none.jsonl") .. " 2>&1")
  T.ok(not good, o)
  T.eq(o, "rock report: cannot read " .. tmp .. "/none.jsonl\n")
  T.ok(not io.open(tmp .. "/empty/report"), "nothing made")
end)

T.test("no file of the report holds a secret, and no raw script", function()
  local all = T.sh("cat " .. q(site) .. "/index.html " .. q(site) .. "/t/*.html")
  for _, s in ipairs({ KEY, BEARER, ENV_SECRET, "ghp_envAssigned", "<script>window", "<img src=x", "<b>not</b>", "<b>bold", "<i>mid-run" }) do
    T.ok(not all:find(s, 1, true), "the report holds " .. s)
  end
  T.ok(all:find("&lt;script&gt;window.__pwned=1&lt;/script&gt;", 1, true), "the script is shown as text")
  T.ok(all:find("sk-[REDACTED]", 1, true) and all:find("Authorization: [REDACTED]", 1, true), "keys are marked")
  T.ok(all:find("GITHUB_TOKEN=[REDACTED]", 1, true) and all:find("PATH=/usr/bin", 1, true), "a secret assignment only")
end)

T.test("in the browser: escaped, redacted, and nothing injected runs", function()
  local r = B.run{
    { ["goto"] = B.url(site .. "/t/evil-1.html") },
    { eval = "[String(window.__pwned), document.scripts.length, document.images.length, document.querySelectorAll('.step').length]" },
    { eval = "document.body.textContent" },
    { eval = "[!!document.querySelector('#patch .a'), !!document.querySelector('#gold'), !!document.querySelector('#test-log'), " ..
             "document.querySelectorAll('#tests tbody tr').length, document.querySelectorAll('.elided').length]" },
    { ["goto"] = B.url(site .. "/index.html") },
    { eval = "[String(window.__pwned), document.getElementById('redactions').textContent]" },
    { ["goto"] = B.url(site .. "/t/evil-1.html") },
    { eval = "document.getElementById('redacted').innerText" },
  }
  T.eq(r[2][1], "undefined", "no injected script ran")
  T.eq(r[2][2], 1, "the page's own script only")
  T.eq(r[2][3], 0, "no injected image")
  T.eq(r[2][4], 2, "every step")
  local text = r[3]
  T.ok(text:find(SCRIPT, 1, true), "the script is visible as text")
  T.ok(text:find(IMG, 1, true), "the img is visible as text")
  T.ok(not text:find(KEY, 1, true) and not text:find(BEARER, 1, true) and not text:find(ENV_SECRET, 1, true), "redacted")
  T.ok(text:find("[REDACTED]", 1, true))
  T.eq(r[4][1], true, "the patch is a diff with added lines")
  T.eq(r[4][2], true, "the gold patch beside it")
  T.eq(r[4][3], true, "the eval log's test section")
  T.eq(r[4][4], 2, "FAIL_TO_PASS and PASS_TO_PASS rows")
  T.eq(r[4][5], 2, "the elision marks: the observation's, the eval log's")
  T.eq(r[6][1], "undefined")
  T.ok(tonumber(r[6][2]) >= 3, "the index counts the redactions: " .. tostring(r[6][2]))
  local n = tonumber(r[8]:match("%((%d+) on this page%)"))
  T.ok(n and n >= 5, "the page says it was redacted: " .. r[8])
end)

T.test("in the browser: were the escaping broken, the page's CSP still runs no injected script", function()
  -- the evil page with its escaped <script> and <img onerror> put back raw
  local page = T.read(site .. "/t/evil-1.html")
  local raw = page:gsub("&lt;script&gt;window%.__pwned=1&lt;/script&gt;", SCRIPT)
    :gsub("&lt;img src=x onerror=&quot;window%.__pwned=2&quot;&gt;", IMG)
  T.ok(raw ~= page and raw:find(SCRIPT, 1, true) and raw:find(IMG, 1, true), "the raw injection is in the copy")
  T.write(tmp .. "/broken.html", raw)
  local r = B.run{
    { ["goto"] = B.url(tmp .. "/broken.html") }, { sleep = 200 },
    { eval = "[String(window.__pwned), document.scripts.length, document.images.length, document.querySelectorAll('.step').length]" },
    { key = "j" }, { eval = "location.hash" },
  }
  T.eq(r[3][1], "undefined", "the injected script and handler were blocked")
  T.ok(r[3][2] >= 2 and r[3][3] >= 1, "they are in the page: " .. json.encode(r[3]))
  T.eq(r[5], "#step-1", "the page's own script (its nonce) runs")
end)

T.test("in the browser: torn line, missing log, start failure, pending task", function()
  local r = B.run{
    { ["goto"] = B.url(site .. "/index.html") },
    { eval = "Array.from(document.querySelectorAll('#tasks tbody tr')).map(function(r){return r.dataset.id+'='+r.dataset.status+(r.className?'/'+r.className:'')}).join(' ')" },
    { eval = "[!!document.getElementById('torn-note'), document.getElementById('start-failures').innerText, " ..
             "document.querySelector('tr[data-id=\"lost-1\"]').innerText]" },
    { ["goto"] = B.url(site .. "/t/_line_5_.html") },
    { eval = "document.getElementById('torn').innerText" },
    { ["goto"] = B.url(site .. "/t/lost-1.html") },
    { eval = "document.getElementById('log-missing') && document.getElementById('log-missing').innerText" },
    { eval = "document.getElementById('step-1').innerText" },
    { ["goto"] = B.url(site .. "/t/evil-1.html") },
    { eval = "!!document.getElementById('test-log')" },
    { ["goto"] = B.url(site .. "/index.html") },
    { eval = "['by-reason', 'by-exit'].map(function(id){return Array.from(document.querySelectorAll('#'+id+' tbody tr'))" ..
             ".map(function(r){return Array.from(r.cells).map(function(c){return c.innerText}).join(' ')}).join(' | ')})" },
  }
  -- the two count tables: the four trajectories (not the torn line, not the pending task) by their end
  T.eq(r[12][1], "aborted 1 25.0% | finish 3 75.0%", "by termination reason")
  T.eq(r[12][2], "Submitted 3 75.0% | sandbox_start_failed 1 25.0%", "by exit status")
  T.eq(r[2], "evil-1=resolved lost-1=unresolved nostart-1=error inplace-1=error (line 5)=torn/torn later-1=pending")
  T.eq(r[3][1], true, "the torn note")
  T.match(r[3][2], "nostart%-1: sandbox_start_failed image <b>not</b> found")
  T.match(r[3][3], "eval log missing")
  T.match(r[5], "torn: the last line has no newline")
  T.match(r[7], "Eval log missing")
  T.match(r[8], "step 1 · %? · rc %- · 0%.10s · 0 tokens · %$0%.0000 · format error")
  T.match(r[8], "%(no action: the model's answer could not be parsed%)")
  T.match(r[8], "Please answer with one <b>tool call</b>%.")
  T.eq(r[10], true, "a moved run dir still finds eval/<id>.log")
end)

T.test("in the browser: the table sorts and filters, by clicks and by deep link", function()
  local ids = "Array.from(document.querySelectorAll('#tasks tbody tr:not([hidden])')).map(function(r){return r.dataset.id}).join(' ')"
  local r = B.run{
    { ["goto"] = B.url(site .. "/index.html") },
    { eval = ids },
    { click = "th[data-k=cost]" }, { eval = ids },
    { click = "th[data-k=cost]" }, { eval = "[location.hash, " .. ids .. "]" },
    { click = "#f-q" }, { type = "lost" }, { eval = "[" .. ids .. ", document.getElementById('shown').textContent]" },
    { ["goto"] = B.url(site .. "/index.html", "#status=error") }, { eval = ids },
    { ["goto"] = B.url(site .. "/index.html", "#sort=tokens&dir=desc&status=") }, { eval = ids },
    { ["goto"] = B.url(site .. "/index.html", "#sort=%22%5D%3Cx&q=evil") }, { eval = ids },
  }
  T.eq(r[2], "evil-1 lost-1 nostart-1 inplace-1 (line 5) later-1", "as written")
  T.eq(r[4], "(line 5) later-1 nostart-1 evil-1 inplace-1 lost-1", "cost ascending, unknown first")
  T.eq(r[6][1], "#sort=cost&dir=desc")
  T.eq(r[6][2], "lost-1 evil-1 inplace-1 nostart-1 (line 5) later-1", "cost descending")
  T.eq(r[9][1], "lost-1", "text filter")
  T.eq(r[9][2], "1 of 6 shown")
  T.eq(r[11], "nostart-1 inplace-1", "status filter from the URL")
  T.eq(r[13], "lost-1 evil-1 inplace-1 nostart-1 (line 5) later-1", "tokens descending from the URL")
  T.eq(r[15], "evil-1", "a hostile sort key in the URL is ignored, the rest applies")
end)

T.test("trajectory pages: j/k move between steps, h/l between tasks", function()
  local r = B.run{
    { ["goto"] = B.url(site .. "/t/evil-1.html") },
    { key = "j" }, { key = "j" }, { key = "j" }, { eval = "[location.hash, document.getElementById('pos').textContent]" },
    { key = "k" }, { eval = "location.hash" },
    { key = "l", nav = "location.pathname.indexOf('/t/') >= 0" }, { eval = "location.pathname.replace(/.*\\//, '')" },
    { key = "h", nav = "location.pathname.indexOf('/t/') >= 0" }, { eval = "location.pathname.replace(/.*\\//, '')" },
    { click = "#stepnav a[href='#step-2']" }, { sleep = 100 },
    { eval = "[location.hash, document.querySelector('.step.cur').id, document.getElementById('pos').textContent, " ..
             "Array.from(document.querySelectorAll('#stepnav a')).map(function(a){return a.className}).join(' ')]" },
  }
  T.eq(r[5][1], "#step-2", "j stops at the last step")
  T.eq(r[5][2], "step 2 of 2")
  T.eq(r[7], "#step-1")
  T.eq(r[9], "lost-1.html", "l: the next in the file's order (the page was not opened from a view)")
  T.eq(r[11], "evil-1.html")
  T.eq(json.encode(r[14]), json.encode({ "#step-2", "step-2", "step 2 of 2", "rc0 rc0" }), "the navigator's link to step 2")
end)

T.test("h/l follow the index's view a page was opened from: its sort, its filter; at the end they stay", function()
  local here = "location.pathname.replace(/.*\\//, '')"
  local function nav(k) return { key = k, nav = "location.pathname.indexOf('/t/') >= 0" } end
  local r = B.run{
    -- cost descending: lost-1 evil-1 inplace-1 nostart-1 (line 5) later-1 (pending: no page)
    { ["goto"] = B.url(site .. "/index.html", "#sort=cost&dir=desc") },
    { click = "#tasks a[href^='t/evil-1.html']", nav = "location.pathname.indexOf('/t/') >= 0" }, { eval = "[" .. here .. ", location.hash]" },
    nav("l"), { eval = here },
    { key = "j" }, { eval = "location.hash" },
    nav("l"), { eval = here },
    nav("l"), { eval = here },
    nav("l"), { eval = here },
    nav("h"), nav("h"), nav("h"), nav("h"), { eval = here },
    nav("h"), { eval = here },
    -- a filter: status error is nostart-1 inplace-1, in file order
    { ["goto"] = B.url(site .. "/index.html", "#status=error") },
    { click = "#tasks a[href^='t/nostart-1.html']", nav = "location.pathname.indexOf('/t/') >= 0" },
    nav("l"), { eval = here },
    nav("l"), { eval = here },
    nav("h"), { eval = here },
    { ["goto"] = B.url(site .. "/index.html", "#status=error") }, { eval = "document.getElementById('shown').textContent" },
  }
  T.eq(r[3][1], "evil-1.html")
  T.eq(r[3][2], "#view=" .. "sort%3Dcost%26dir%3Ddesc", "the link carries the view")
  T.eq(r[5], "inplace-1.html", "l: the next in cost order (the file's would be lost-1)")
  T.eq(r[7], "#step-1&view=sort%3Dcost%26dir%3Ddesc", "j keeps the view")
  T.eq(r[9], "nostart-1.html")
  T.eq(r[11], "_line_5_.html", "a torn line's page is in the order too")
  T.eq(r[13], "_line_5_.html", "at the end (later-1 has no page): it stays")
  T.eq(r[18], "lost-1.html", "h back to the first")
  T.eq(r[20], "lost-1.html", "before the first: it stays")
  T.eq(r[24], "inplace-1.html", "l in the filtered view")
  T.eq(r[26], "inplace-1.html", "the filtered view's end")
  T.eq(r[28], "nostart-1.html")
  T.eq(r[30], "2 of 6 shown", "the index's view is as it was")
end)

T.test("from a static host (python3's http.server): the same pages work, fetching only themselves", function()
  local rock = require "rock"
  local log = tmp .. "/http.log"
  local pid = T.sh(string.format("cd %s && { python3 -u -m http.server 0 --bind 127.0.0.1 >%s 2>&1 & echo $!; }", q(site), q(log)))
    :gsub("%s+$", "")
  local port
  for _ = 1, 600 do -- python3 starting on a loaded machine: up to 30 s
    port = (T.read(log) or ""):match("port (%d+)")
    if port then break end
    rock.sleep(0.05)
  end
  local ok, err = pcall(function()
    T.ok(port, "the server said its port: " .. tostring(T.read(log)))
    local base = "http://127.0.0.1:" .. port
    local r = B.run{
      { ["goto"] = base .. "/index.html#status=resolved" },
      { requests = true },
      { eval = "Array.from(document.querySelectorAll('#tasks tbody tr:not([hidden])')).map(function(r){return r.dataset.id}).join(' ')" },
      { click = "#tasks a[href^='t/evil-1.html']", nav = "location.pathname.indexOf('/t/') >= 0" },
      { requests = true },
      { eval = "[location.pathname, document.querySelectorAll('.step').length]" },
      { key = "l", nav = "location.pathname.indexOf('/t/') >= 0" }, { eval = "location.pathname" },
      { ["goto"] = base .. "/index.html#status=error" },
      { click = "#tasks a[href^='t/nostart-1.html']", nav = "location.pathname.indexOf('/t/') >= 0" },
      { key = "l", nav = "location.pathname.indexOf('/t/') >= 0" }, { eval = "location.pathname" },
    }
    T.eq(json.encode(r[2]), json.encode({ base .. "/index.html" }), "the index fetched only itself")
    T.eq(r[3], "evil-1", "the deep link's filter")
    T.eq(json.encode(r[5]), json.encode({ base .. "/index.html", base .. "/t/evil-1.html" }), "the page fetched only itself")
    T.eq(json.encode(r[6]), json.encode({ "/t/evil-1.html", 2 }))
    T.eq(r[8], "/t/evil-1.html", "l: the only resolved task, the view's end: it stays")
    T.eq(r[12], "/t/inplace-1.html", "l: the next error task")
  end)
  T.sh("kill " .. pid)
  if not ok then error(err, 0) end
end)

T.test("in the browser: sandbox phases, an in-place eval's error, nothing fetched, not blank", function()
  local r = B.run{
    { ["goto"] = B.url(site .. "/t/evil-1.html") },
    { eval = "document.querySelector('dl.kv').innerText" },
    { requests = true },
    { screenshot = tmp .. "/evil.png" },
    { ["goto"] = B.url(site .. "/t/nostart-1.html") },
    { eval = "document.querySelector('dl.kv').innerText" },
    { ["goto"] = B.url(site .. "/t/inplace-1.html") },
    { eval = "document.getElementById('eval-error').innerText" },
    { ["goto"] = B.url(site .. "/index.html") },
    { requests = true },
    { screenshot = tmp .. "/index.png" },
    { eval = "[document.querySelectorAll('svg').length, document.querySelectorAll('svg rect').length]" },
  }
  T.match(r[2], "image_pull success 3s · container_create success 0s · container_start success 1s · rocklet_ready success 2s")
  T.match(r[2], "node http://node%-a:8080 · Slurm job 61")
  T.match(r[2], "setup 1%.00s · agent 2%.00s · eval 3%.00s · total 6%.00s")
  -- the only request a page makes is for itself (CSS, scripts, plots inline)
  T.eq(json.encode(r[3]), json.encode({ B.url(site .. "/t/evil-1.html") }), "the trajectory page fetched nothing")
  T.eq(json.encode(r[10]), json.encode({ B.url(site .. "/index.html") }), "the index fetched nothing")
  T.match(r[6], "image_pull failed 0s %(pull access denied%) · container_create waiting")
  T.match(r[8], "eval error: grading: the sandbox died <i>mid%-run</i>")
  for _, shot in ipairs({ r[4], r[11] }) do
    T.ok(shot.width == 1280 and shot.bytes > 10000, "a screenshot: " .. json.encode(shot))
    T.ok(shot.colors >= 8 and shot.nonwhite > 0.03, "not blank: " .. json.encode(shot))
  end
  T.eq(r[12][1], 5, "five plots")
  T.ok(r[12][2] >= 5, "plots have bars: " .. r[12][2])
end)

-- a DAgger run (recipes/dagger_eval.lua's layout): rounds/<r>/ holds a
-- round's trajectories.jsonl, then its dataset.jsonl (a line a turn) and
-- summary.json when the round ends; no trajectories.jsonl of its own, so
-- the tasks are the latest round's
T.test("a DAgger run: per-round resolved, agreement and intervention; a round still running", function()
  local d = tmp .. "/dagger"
  os.execute("mkdir -p " .. q(d .. "/rounds/1") .. " " .. q(d .. "/rounds/2") .. " " .. q(d .. "/rounds/3/eval"))
  local function turns(round, beta, spec) -- spec: {episode, resolved, {executed_by, agree}...}
    local out = {}
    for _, ep in ipairs(spec) do
      for i, tt in ipairs(ep[3]) do
        out[#out + 1] = json.encode({ task_id = ep[1], episode_id = ep[1] .. "-r" .. round, round = round, beta = beta, turn = i,
          executed_by = tt[1], agree = tt[2], termination_reason = "finish", resolved = ep[2] })
      end
    end
    return table.concat(out, "\n") .. "\n"
  end
  -- round 1 (beta 1), ended: its summary.json counts 3 trajectories (one
  -- aborted before a turn, so not in the dataset), 1 resolved, 4 turns all
  -- by the teacher, 1 agreeing
  T.write(d .. "/rounds/1/dataset.jsonl", turns(1, 1, { { "a", true, { { "teacher", true }, { "teacher", false } } },
    { "b", false, { { "teacher", false }, { "teacher", false } } } }))
  T.write(d .. "/rounds/1/summary.json", json.encode({ round = 1, beta = 1, total = 3, resolved = 1, turns = 4, agreed = 1,
    executed_by = { teacher = 4, student = 0 }, records = { added = 2, dropped = 2 }, seconds_wall = 12.5, complete = true }) .. "\n")
  T.write(d .. "/rounds/1/trajectories.jsonl", traj("a", {}) .. "\n")
  -- round 2 (beta 0.5): a dataset without its summary, counted here: 1 of
  -- 4 turns by the teacher, 3 agree, 2 of 2 episodes resolved; a torn line
  T.write(d .. "/rounds/2/dataset.jsonl", turns(2, 0.5, { { "a", true, { { "student", true }, { "teacher", true } } },
    { "b", true, { { "student", true }, { "student", false } } } }) .. '{"task_id":"b","tu')
  T.write(d .. "/rounds/2/trajectories.jsonl", traj("a", {}) .. "\n")
  -- round 3: running, its trajectories so far and the agent's summary.json of them (not the round's: no `complete`)
  T.write(d .. "/rounds/3/trajectories.jsonl", traj("a", { patch = "diff --git a/a b/a\n+a\n", eval = { status = "resolved", resolved = true } }) .. "\n" ..
    traj("b", { patch = "diff --git a/b b/b\n+b\n", eval = { status = "unresolved", resolved = false } }) .. "\n")
  T.write(d .. "/rounds/3/summary.json", json.encode({ total = 2, resolved = 1, by_reason = { finish = 2 } }) .. "\n")
  local o, good = T.sh(q(T.rock_exe()) .. " report " .. q(d))
  T.ok(good, o)
  local r = B.run{
    { ["goto"] = B.url(d .. "/report/index.html") },
    { eval = "Array.from(document.querySelectorAll('#rounds tbody tr')).map(function(r){return r.innerText.replace(/\\s+/g,' ').trim()})" },
    { eval = "Array.from(document.querySelectorAll('#tasks tbody tr')).map(function(r){return r.dataset.id+'='+r.dataset.status}).join(' ')" },
    { eval = "document.body.innerText.indexOf(\"round 3's\") >= 0" },
    { eval = "Array.from(document.querySelectorAll('svg rect title')).map(function(t){return t.textContent}).filter(function(t){return /^round/.test(t)})" },
  }
  T.eq(r[2][1], "1 1 3 1 (33.3%) 4 25.0% 100.0% 2 2 12.5 0", "round 1: its summary.json")
  T.eq(r[2][2], "2 0.5 2 2 (100.0%) 4 75.0% 25.0% - - - 1", "round 2: counted from its dataset")
  T.eq(r[2][3], "3 running (2 task(s) done, no dataset yet)", "the agent's summary.json is not the round's")
  T.eq(r[3], "a=resolved b=unresolved", "the latest round's tasks")
  T.eq(r[4], true, "says whose tasks they are")
  T.eq(#r[5], 6, "three bars a finished round: " .. json.encode(r[5]))
  T.eq(r[5][1], "round 1 resolved: 33.3%")
  T.eq(r[5][6], "round 2 intervention (teacher executed): 25.0%")
end)

T.test("numbers that are not whole (tokens 1.5, a round's counts), or not finite (1e400), render: the report is not stopped", function()
  local d = tmp .. "/odd"
  os.execute("mkdir -p " .. q(d .. "/rounds/1"))
  -- 1e400 is JSON: it decodes to infinity
  T.write(d .. "/trajectories.jsonl", traj("odd-1", { steps = { { action = { tool = "submit" }, exit_code = 0, tokens = 2.5 } },
    model_stats = { tokens_sent = 1.5, tokens_received = 2, instance_cost = 0.25, api_calls = 1.5 } }):gsub('"total":6', '"total":1e400') .. "\n" ..
    traj("odd-2", { model_stats = { tokens_sent = 1e20, tokens_received = 0 } }) .. "\n")
  T.write(d .. "/run.json", json.encode({ recipe = "x.lua", started = 1.5e300, flags = { workers = 2.5 } }) .. "\n")
  T.write(d .. "/rounds/1/summary.json", json.encode({ round = 1, beta = 0.5, total = 2.5, resolved = 1.5, turns = 7.25, agreed = 1,
    executed_by = { teacher = 3.5 }, records = { added = 3.5, dropped = 0.5 }, seconds_wall = 2, complete = true }) .. "\n")
  local o, good = T.sh(q(T.rock_exe()) .. " report " .. q(d) .. " 2>&1")
  T.ok(good, o)
  local index = T.read(d .. "/report/index.html")
  T.match(index, 'data%-id="odd%-1"[^>]* data%-tokens="3%.5"', "tokens 1.5 + 2")
  T.match(index, '<td class="n">3%.5</td>', "and its cell")
  T.match(index, 'data%-id="odd%-2"[^>]* data%-tokens="1e%+20"', "a whole number past 2^63")
  T.match(index, 'data%-id="odd%-1"[^>]* data%-secs=""', "infinite seconds: no value")
  T.match(index, '<tr data%-round="1"><td>1</td><td class="n">0%.5</td><td class="n">2%.5</td><td class="n">1%.5 %(60%.0%%%)</td>' ..
    '<td class="n">7%.25</td>', "the round's counts as they are")
  T.match(index, '<td class="n">3%.5</td><td class="n">0%.5</td><td class="n">2%.0</td>', "records added and dropped, seconds")
  local page = T.read(d .. "/report/t/odd-1.html")
  T.match(page, "2%.5 tokens", "the step's tokens")
  T.match(page, "1%.5 calls", "the calls")
end)

T.test("the redaction count: run.json's marked secret flag is no secret, a value already redacted is not counted again, the index's own are", function()
  local d = tmp .. "/count"
  os.execute("mkdir -p " .. q(d))
  T.write(d .. "/trajectories.jsonl", traj("red-1", { messages = { { role = "user", content =
    "key " .. KEY .. "; already [REDACTED] here; Authorization: [REDACTED]; sk-[REDACTED] too; GITHUB_TOKEN=[REDACTED]; Bearer [REDACTED]" } } }) .. "\n")
  -- a recipe's run.json: a secret flag by its name only; another flag holding a key shape (shown in the index, redacted there)
  T.write(d .. "/run.json", json.encode({ recipe = "x.lua", flags = { api_key = "[REDACTED]", workers = 2, note = "sk-index0123456789abcdef" } }) .. "\n")
  local o, good = T.sh(q(T.rock_exe()) .. " report " .. q(d) .. " 2>&1")
  T.ok(good, o)
  T.match(o, " 2 redaction%(s%)", "the key on the page, the flag in the index")
  T.match(T.read(d .. "/report/t/red-1.html"), "%(1 on this page%)")
  local index = T.read(d .. "/report/index.html")
  T.match(index, '<span id="redactions">2</span>', "the index counts its own too")
  T.ok(not index:find("sk-index0123", 1, true), "the flag's key redacted in the index")
  T.match(T.read(d .. "/report/t/red-1.html"), "already %[REDACTED%] here; Authorization: %[REDACTED%]; sk%-%[REDACTED%] too", "kept as it was")
end)

T.test("live: a task's page at once, the next within the window, by the timer", function()
  local rock = require "rock"
  local report = require "rock.report"
  local d = tmp .. "/live"
  os.execute("mkdir -p " .. q(d))
  T.write(d .. "/trajectories.jsonl", traj("one", {}) .. "\n")
  local l = report.live(d, { every = 1 })
  l:task_done({ instance_id = "one" })
  T.ok(T.read(d .. "/report/t/one.html"), "the first task's page at once")
  T.match(T.read(d .. "/report/index.html"), "The run is still going")
  T.match(T.read(d .. "/report/index.html"), "replaced in the pages written last")
  local f = assert(io.open(d .. "/trajectories.jsonl", "ab"))
  f:write(traj("two", {}) .. "\n")
  f:close()
  l:task_done({ instance_id = "two" })
  T.ok(not io.open(d .. "/report/t/two.html"), "within the window: not yet")
  rock.sleep(1.5) -- no other task ends: the timer writes it
  T.ok(T.read(d .. "/report/t/two.html"), "written when the window ended")
  T.match(T.read(d .. "/report/index.html"), 'data%-id="two"')
  l:finish()
  T.ok(not T.read(d .. "/report/index.html"):find("still going", 1, true), "the final index")
  T.ok(not T.read(d .. "/report/index.html"):find("written last", 1, true), "the final count is over every page")
end)

T.test("live: the loader reads only what the run added (a line rewritten in place is not read again), as a whole load would otherwise", function()
  local run_mod = require "rock.report.run"
  local d = tmp .. "/incr"
  os.execute("mkdir -p " .. q(d))
  local path = d .. "/trajectories.jsonl"
  local function append(s) local f = assert(io.open(path, "ab")); f:write(s); f:close() end
  local function ids(r)
    local out = {}
    for _, t in ipairs(r.tasks) do out[#out + 1] = t.id .. "=" .. t.status end
    return table.concat(out, " ") .. " torn " .. r.torn
  end
  T.write(tmp .. "/incr-inst.jsonl", json.encode({ instance_id = "one" }) .. "\n" .. json.encode({ instance_id = "three", patch = "g" }) .. "\n")
  local l = run_mod.loader(d, { instances = tmp .. "/incr-inst.jsonl" })
  local function both() -- the loader's view, and a whole load's
    return ids(l:load()), ids(run_mod.load(d, { instances = tmp .. "/incr-inst.jsonl" }))
  end
  append(traj("one", { eval = { status = "resolved", resolved = true }, patch = "x" }) .. "\n")
  local a, b = both()
  T.eq(a, "one=resolved three=pending torn 0"); T.eq(a, b)
  -- a line being written: torn for now, a task once it is whole
  local two = traj("two", {})
  append(two:sub(1, 40))
  a, b = both()
  T.eq(a, "one=resolved (line 2)=torn three=pending torn 1"); T.eq(a, b)
  append(two:sub(41) .. "\n" .. traj("three", { patch = "y", eval = { status = "unresolved" } }) .. "\n")
  a, b = both()
  T.eq(a, "one=resolved two=empty three=unresolved torn 0"); T.eq(a, b)
  T.eq(l:load().by_id.three.gold, "g", "the gold patch of a task that was pending")
  -- a task run again (--resume after an interrupt): the last line counts
  append(traj("one", { termination_reason = "aborted" }) .. "\n")
  a, b = both()
  T.eq(a, "two=empty three=unresolved one=error torn 0"); T.eq(a, b)
  -- the first line rewritten in place (same size, same file): the loader does not read it again
  local f = assert(io.open(path, "r+b"))
  local first = f:read("l")
  f:seek("set", 0)
  f:write(("x"):rep(#first))
  f:close()
  a, b = both()
  T.eq(a, "two=empty three=unresolved one=error torn 0", "what was read is kept")
  T.eq(b, "(line 1)=torn two=empty three=unresolved one=error torn 1", "a whole load reads it")
  -- the file replaced (a --resume rewrites it): read again whole
  T.write(path, traj("two", {}) .. "\n")
  a, b = both()
  T.eq(a, "two=empty one=pending three=pending torn 0"); T.eq(a, b)
end)

T.test("a real start failure (local backend, no rocklet): its phases, listed, in the recipe's own report", function()
  local t = T.git_task(tmp .. "/repo", { ["calc.py"] = "def add(a, b):\n    return a - b\n" },
    { instance_id = "local__nostart-1", problem_statement = "add() subtracts." })
  T.write(tmp .. "/tasks.jsonl", json.encode(t) .. "\n")
  T.write(tmp .. "/replay.jsonl", json.encode({ instance_id = t.instance_id, actions = { { tool = "submit" } } }) .. "\n")
  local d = tmp .. "/nostart"
  local recipe = arg[0]:match("(.*/)") .. "../../recipes/swe_agent.lua"
  local o = T.sh("ROCK_ROCKLET=" .. q(tmp .. "/no-rocklet") .. " " .. q(T.rock_exe()) .. " " .. q(recipe) .. " --instances " ..
    q(tmp .. "/tasks.jsonl") .. " --policy replay --replay " .. q(tmp .. "/replay.jsonl") .. " --out " .. q(d) ..
    " --backend local --no-eval 2>&1")
  local tr = json.decode(T.read(d .. "/trajectories.jsonl"))
  T.eq(tr.termination_reason, "aborted", o)
  local ph = {}
  for _, p in ipairs(tr.sandbox and tr.sandbox.phases or {}) do ph[#ph + 1] = p.name .. "=" .. p.status end
  T.eq(table.concat(ph, " "), "image_pull=success container_create=success container_start=failed rocklet_ready=waiting",
    json.encode(tr.sandbox))
  local r = B.run{
    { ["goto"] = B.url(d .. "/report/index.html") },
    { eval = "document.getElementById('start-failures').innerText" },
    { ["goto"] = B.url(d .. "/report/t/local__nostart-1.html") },
    { eval = "document.querySelector('dl.kv').innerText" },
  }
  T.match(r[2], "local__nostart%-1: spawn_failed cannot start rocklet")
  T.match(r[4], "container_start failed %d+s %(cannot start rocklet")
end)

os.execute("rm -rf " .. q(tmp))
T.done()
