--- rock.report.trajectory: one task's page (t/<id>.html). A step
-- navigator (a link a step, coloured by its return code; j/k between
-- steps, h/l to the previous / next task in the index's view or the
-- file's order: the html.TRAJ_JS keys), the messages before the first step (system, task),
-- then every step: its messages coloured by role, the exact action, the
-- observation with its return code and elision marks, seconds, tokens and
-- cost; the final patch as a diff beside the gold patch when known;
-- FAIL_TO_PASS / PASS_TO_PASS per test; the eval log's test section and
-- the whole log, collapsible; the sandbox (image, backend, node, limits)
-- and the phases' timings. A torn line gets a page saying so with what
-- could be read. Every text goes through the redactor, then html.esc.
local html = require "rock.report.html"
local json = require "rock.json"
local output = require "rock.agent.output"

local esc = html.esc
local M = {}

local function num(x) return type(x) == "number" and x == x and x or nil end
-- a value as text, a whole number without ".0" (JSON numbers decode as floats)
local function str(x)
  if type(x) == "number" and x == math.floor(x) and math.abs(x) < 2^53 then return string.format("%d", x) end
  return tostring(x)
end

-- text (redacted, escaped) with elision marks highlighted
local function text_html(R, s)
  s = esc(R(tostring(s or "")))
  if s:find("elided", 1, true) then
    s = s:gsub("&lt;elided_chars&gt;(.-)&lt;/elided_chars&gt;", '<span class="elided">&lt;elided_chars&gt;%1&lt;/elided_chars&gt;</span>')
    -- an eval log cut to its head and tail (rock.agent.grading)
    s = s:gsub("(=== rock: %d+ bytes of the eval log elided[^\n]*)", '<span class="elided">%1</span>')
  end
  return s
end

--- A diff as HTML lines classed by kind (added, deleted, hunk, file).
function M.diff_html(R, patch)
  local out = {}
  for line in (R(patch or "") .. "\n"):gmatch("(.-)\n") do
    local c = ""
    if line:find("^diff %-%-git") or line:find("^%+%+%+ ") or line:find("^%-%-%- ") then c = "f"
    elseif line:find("^@@") then c = "h"
    elseif line:find("^%+") then c = "a"
    elseif line:find("^%-") then c = "d" end
    out[#out + 1] = (c ~= "" and '<span class="' .. c .. '">' or "<span>") .. esc(line) .. "</span>\n"
  end
  return '<pre class="diff">' .. table.concat(out) .. "</pre>"
end

local function content_of(m)
  local c = m.content
  if type(c) == "table" then -- content parts
    local parts = {}
    for _, p in ipairs(c) do parts[#parts + 1] = type(p) == "table" and (p.text or json.encode(p)) or tostring(p) end
    c = table.concat(parts, "\n")
  end
  return c
end

local function message_html(R, m, i)
  if type(m) ~= "table" then return "" end
  local role = tostring(m.role or "?")
  local out = { string.format('<div class="msg role-%s" id="msg-%d"><div class="role">%s</div>', esc(role:gsub("%W", "")), i, esc(role)) }
  local c = content_of(m)
  if c ~= nil and c ~= "" then out[#out + 1] = "<pre>" .. text_html(R, c) .. "</pre>" end
  if type(m.tool_calls) == "table" then
    for _, tc in ipairs(m.tool_calls) do
      local f = type(tc) == "table" and tc["function"] or {}
      out[#out + 1] = '<pre class="act">tool call ' .. esc(R(tostring(f.name or "?"))) .. ": " ..
        text_html(R, type(f.arguments) == "string" and f.arguments or json.encode(f.arguments or {})) .. "</pre>"
    end
  end
  out[#out + 1] = "</div>"
  return table.concat(out)
end

-- the exact action of a step, as a command line or an editor call
local function action_text(a)
  if a == nil then return "(no action: the model's answer could not be parsed)" end
  if type(a) ~= "table" then return tostring(a) end
  if a.tool == "bash" then return "bash: " .. tostring(a.command) end
  if a.tool == "str_replace_editor" then
    local parts = { "str_replace_editor " .. tostring(a.command) .. " " .. tostring(a.path or "") }
    for _, k in ipairs({ "old_str", "new_str", "file_text", "insert_line", "view_range" }) do
      if a[k] ~= nil then
        parts[#parts + 1] = k .. ": " .. (type(a[k]) == "table" and json.encode(a[k]) or tostring(a[k]))
      end
    end
    return table.concat(parts, "\n")
  end
  return json.encode(a)
end

-- the tests' results: expected (FAIL_TO_PASS / PASS_TO_PASS) and what ran
local function tests_html(R, ev)
  local rep = type(ev.report) == "table" and ev.report or {}
  local rows = {}
  for _, kind in ipairs({ "FAIL_TO_PASS", "PASS_TO_PASS" }) do
    local r = type(rep[kind]) == "table" and rep[kind] or {}
    for _, k in ipairs({ "success", "failure" }) do
      for _, name in ipairs(type(r[k]) == "table" and r[k] or {}) do
        local got = type(ev.tests) == "table" and ev.tests[name] or "missing"
        rows[#rows + 1] = string.format('<tr><td>%s</td><td>%s</td><td>%s</td><td class="%s">%s</td></tr>', kind, esc(R(name)),
          esc(R(tostring(got))), k == "success" and "pass" or "fail", k == "success" and "✓ as expected" or "✗ not as expected")
      end
    end
  end
  if #rows == 0 then return '<p class="mut">No FAIL_TO_PASS / PASS_TO_PASS results.</p>' end
  return '<table id="tests"><thead><tr><th>kind</th><th>test</th><th>status</th><th>result</th></tr></thead><tbody>' ..
    table.concat(rows) .. "</tbody></table>"
end

-- the test section of an eval log: from pytest's session header (or
-- SWE-bench's start marker) to the test exit code
local function test_section(log)
  local i = log:find(">>>>> Start Test Output", 1, true) or log:find("=+ test session starts =+")
  if not i then return nil end
  i = log:sub(1, i):match(".*()\n") or 1
  local j = log:find(">>>>> End Test Output", i, true) or log:find(">>>>> Test Exit Code[^\n]*", i)
  local e = j and (log:find("\n", j, true) or #log) or #log
  return log:sub(i, e)
end

local function pad_links(prev, nxt)
  return string.format('<a id="prev" %s>&larr; prev (h)</a> · <a href="../index.html">index</a> · <a id="next" %s>next (l) &rarr;</a>',
    prev and ('href="' .. esc(prev) .. '.html"') or "", nxt and ('href="' .. esc(nxt) .. '.html"') or "")
end

--- The page of task t (rock.report.run's) for the redactor R; prev and
--- next are the neighbours' file names (or nil).
function M.render(t, R, prev, nxt, read)
  local b = { '<div class="nav">', pad_links(prev, nxt), ' · <span id="pos" class="mut"></span> <span class="mut">(j/k: steps)</span></div>' }
  local count0 = R.count or 0
  local id = R(t.id)
  b[#b + 1] = "<h1>" .. esc(id) .. ' <span class="st-' .. t.status .. '">' .. t.status .. "</span></h1>"
  if t.torn then
    b[#b + 1] = '<p class="warn" id="torn">Line ' .. t.line .. " of trajectories.jsonl " .. esc(t.why) .. " (" .. t.bytes ..
      " bytes). Its beginning:</p><pre>" .. text_html(R, t.head) .. "</pre>"
    return html.page(id, table.concat(b), html.TRAJ_JS)
  end
  local tr = t.traj or {}
  -- the step navigator: a link a step, coloured by its return code
  local steps_list = type(tr.steps) == "table" and tr.steps or {}
  if #steps_list > 0 then
    local nav = { '<div class="nav stepnav" id="stepnav">steps:' }
    for i, st in ipairs(steps_list) do
      local rc = type(st) == "table" and math.tointeger(st.exit_code)
      nav[#nav + 1] = string.format(' <a href="#step-%d" class="%s">%d</a>', i, rc == 0 and "rc0" or "rcx", i)
    end
    nav[#nav + 1] = "</div>"
    b[#b + 1] = table.concat(nav)
  end
  local ms = type(tr.model_stats) == "table" and tr.model_stats or {}
  local tm = type(tr.timings) == "table" and tr.timings or {}
  local sb = type(tr.sandbox) == "table" and tr.sandbox or {}
  local ev = type(tr.eval) == "table" and tr.eval or {}
  local function secs(x) return num(x) and string.format("%.2fs", x) or "-" end
  local lim = type(sb.limits) == "table" and sb.limits or {}
  local dl = {
    { "termination", tostring(tr.termination_reason or "?") .. " (" .. tostring(tr.exit_status or "?") .. ")" },
    { "policy / model", tostring(tr.policy or "?") .. " / " .. tostring(tr.model or "?") },
    { "sandbox", tostring(sb.id or "?") .. " · image " .. tostring(sb.image or "?") .. " · backend " .. tostring(sb.backend or "?") ..
      ((sb.node or sb.node_url) and (" · node " .. tostring(sb.node or sb.node_url)) or "") ..
      (sb.slurm_job_id and (" · Slurm job " .. tostring(sb.slurm_job_id)) or "") },
    { "limits", string.format("memory %s, pids %s, disk %s", str(lim.memory or "-"), str(lim.pids_limit or "-"), str(lim.disk or "-")) },
    { "phases", string.format("setup %s · agent %s · eval %s · total %s", secs(tm.setup), secs(tm.agent), secs(tm.eval), secs(tm.total)) },
    { "model stats", string.format("%s calls · %s tokens sent · %s received · $%.4f", str(ms.api_calls or 0),
      str(ms.tokens_sent or 0), str(ms.tokens_received or 0), num(ms.instance_cost) or 0) },
    { "eval", tostring(ev.status or "none") .. (ev.resolved and " (resolved)" or "") },
  }
  if type(sb.phases) == "table" and #sb.phases > 0 then
    local ps = {}
    for _, ph in ipairs(sb.phases) do
      if type(ph) == "table" then
        ps[#ps + 1] = tostring(ph.name) .. " " .. tostring(ph.status or "?") .. (num(ph.seconds) and (" " .. str(ph.seconds) .. "s") or "") ..
          ((ph.status == "failed" or ph.status == "timeout") and ph.message and (" (" .. tostring(ph.message) .. ")") or "")
      end
    end
    table.insert(dl, 4, { "sandbox start", table.concat(ps, " · ") })
  end
  if type(tr.error) == "table" then dl[#dl + 1] = { "error", tostring(tr.error.code) .. ": " .. tostring(tr.error.message) } end
  if tr.interrupted then dl[#dl + 1] = { "interrupted", "yes (a signal cut it short)" } end
  b[#b + 1] = '<dl class="kv">'
  for _, r in ipairs(dl) do b[#b + 1] = "<dt>" .. esc(r[1]) .. "</dt><dd>" .. esc(R(r[2])) .. "</dd>" end
  b[#b + 1] = "</dl>"
  -- the messages, grouped into steps
  local msgs = type(tr.messages) == "table" and tr.messages or {}
  local steps = type(tr.steps) == "table" and tr.steps or {}
  local first = #msgs + 1
  for i, m in ipairs(msgs) do
    if type(m) == "table" and m.role == "assistant" then first = i break end
  end
  b[#b + 1] = '<details><summary>The prompt (' .. (first - 1) .. ' message(s) before the first step)</summary>'
  for i = 1, first - 1 do b[#b + 1] = message_html(R, msgs[i], i - 1) end
  b[#b + 1] = "</details><h2>Steps (" .. #steps .. ")</h2>"
  local cursor = first
  for i, st in ipairs(steps) do
    st = type(st) == "table" and st or {}
    local upto
    local k = math.tointeger(st.observation_message)
    if k and k + 1 >= cursor and msgs[k + 1] then
      upto = k + 1
    else
      upto = cursor
      while msgs[upto + 1] and not (type(msgs[upto + 1]) == "table" and msgs[upto + 1].role == "assistant") do upto = upto + 1 end
      if not msgs[cursor] then upto = cursor - 1 end
    end
    local rc = math.tointeger(st.exit_code)
    local head = string.format('<section class="step" id="step-%d"><h3>step %d · %s · <span class="%s">rc %s</span> · %s · %s tokens · $%.4f%s</h3>',
      i, i, esc(R(type(st.action) == "table" and tostring(st.action.tool or "?") or "?")), rc == 0 and "rc0" or "rcx",
      rc and str(rc) or "-", secs(st.seconds), str(num(st.tokens) or 0), num(st.cost) or 0,
      st.format_error and ' · <span class="rcx">format error</span>' or "")
    b[#b + 1] = head
    b[#b + 1] = '<pre class="act">' .. text_html(R, action_text(st.action)) .. "</pre>"
    if st.failure_reason and st.failure_reason ~= "" then
      b[#b + 1] = '<p class="rcx">' .. esc(R(tostring(st.failure_reason))) .. "</p>"
    end
    for j = cursor, upto do b[#b + 1] = message_html(R, msgs[j], j - 1) end
    if st.observation ~= nil and not st.observation_message then
      b[#b + 1] = '<div class="msg role-tool"><div class="role">observation</div><pre>' .. text_html(R, output.observation(tr, i)) .. "</pre></div>"
    end
    b[#b + 1] = "</section>"
    cursor = math.max(cursor, upto + 1)
  end
  if cursor <= #msgs then
    b[#b + 1] = "<h2>After the last step</h2>"
    for j = cursor, #msgs do b[#b + 1] = message_html(R, msgs[j], j - 1) end
  end
  -- the patch
  b[#b + 1] = "<h2>Patch</h2>"
  local patch = type(tr.patch) == "string" and tr.patch or ""
  local mine = patch == "" and '<p class="mut" id="patch">(empty patch)</p>' or '<div id="patch">' .. M.diff_html(R, patch) .. "</div>"
  if t.gold then
    b[#b + 1] = '<div class="twocol"><div><b>the agent\'s</b>' .. mine .. '</div><div id="gold"><b>gold</b>' ..
      M.diff_html(R, t.gold) .. "</div></div>"
  else
    b[#b + 1] = mine
  end
  if type(tr.submission) == "string" and tr.submission ~= "" then
    b[#b + 1] = "<details><summary>submission</summary><pre>" .. text_html(R, tr.submission) .. "</pre></details>"
  end
  -- the eval
  b[#b + 1] = "<h2>Tests</h2>" .. tests_html(R, ev)
  if type(ev.error) == "table" then
    b[#b + 1] = '<p class="warn" id="eval-error">eval error: ' .. esc(R(tostring(ev.error.code) .. ": " .. tostring(ev.error.message))) .. "</p>"
  elseif type(ev.error) == "string" then -- an in-place eval's error is its text
    b[#b + 1] = '<p class="warn" id="eval-error">eval error: ' .. esc(R(ev.error)) .. "</p>"
  end
  if t.log then
    local log = read(t.log) or ""
    local sec = test_section(log)
    if sec then b[#b + 1] = '<details open><summary>eval log: the tests</summary><pre id="test-log">' .. text_html(R, sec) .. "</pre></details>" end
    b[#b + 1] = "<details><summary>eval log: whole (" .. #log .. " bytes)</summary><pre>" .. text_html(R, log) .. "</pre></details>"
  elseif t.log_missing then
    b[#b + 1] = '<p class="warn" id="log-missing">Eval log missing: ' .. esc(R(t.log_missing)) .. "</p>"
  end
  -- the page says it was redacted, and how much of it
  b[#b + 1] = '<p class="mut" id="redacted">Redacted: API keys, bearer tokens and the run\'s secrets are shown as ' ..
    esc(require("rock.report.redact").MARK) .. " (" .. ((R.count or 0) - count0) .. " on this page).</p>"
  return html.page(id, table.concat(b), html.TRAJ_JS)
end

return M
