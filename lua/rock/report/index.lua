--- rock.report.index: the run's index.html. Provenance (run.json, and
-- what the trajectories say: policies, models, backends, nodes), counts
-- and rates, inline SVG plots, DAgger's rounds when the run has them
-- (resolved rate, teacher agreement and intervention rate per round), the
-- start failures, and one table row per task that sorts and filters
-- (html.INDEX_JS; the view is in the URL's hash, a deep link). Rows are
-- plain HTML; the trajectories' own pages are separate files, loaded
-- only when a row's link is followed.
local html = require "rock.report.html"
local svg = require "rock.report.svg"

local esc = html.esc
local M = {}

local MARK = { resolved = "✓", unresolved = "✗", empty = "✗", error = "?", ungraded = "?", torn = "?", pending = "…" }
M.STATUSES = { "resolved", "unresolved", "empty", "error", "ungraded", "torn", "pending" }

-- a finite number, or nil (NaN, and the infinities JSON's 1e400 decodes to)
local function num(x) return type(x) == "number" and x == x and x > -math.huge and x < math.huge and x or nil end
--- A number as text: a whole one without a fraction (JSON's numbers decode
--- as floats: 3.0 is "3"), any other as %.6g ("1.5"). Never raises, as
--- string.format's %d does on 1.5: a run's odd value cannot stop its report.
function M.whole(x)
  local i = math.type(x) == "integer" and x or math.tointeger(x)
  if i then return string.format("%d", i) end
  return type(x) == "number" and string.format("%.6g", x) or tostring(x)
end
local whole = M.whole
local function tokens_of(t)
  local ms = type(t.model_stats) == "table" and t.model_stats or {}
  local a, b = num(ms.tokens_sent), num(ms.tokens_received)
  if a or b then return (a or 0) + (b or 0) end
end
local function fmt_n(x, f)
  if x == nil then return "" end
  return f and string.format(f, x) or whole(x)
end
local function fmt_secs(s)
  if not s then return "-" end
  if s < 120 then return string.format("%.1fs", s) end
  if s < 7200 then return string.format("%.1fm", s / 60) end
  return string.format("%.1fh", s / 3600)
end
local function pct(n, total) return total > 0 and string.format("%.1f%%", 100 * n / total) or "-" end

-- the values a row shows and sorts by
function M.row_values(t)
  local tr = t.traj or {}
  local st = num(tr.nsteps)
  local ms = type(tr.model_stats) == "table" and tr.model_stats or {}
  local tm = type(tr.timings) == "table" and tr.timings or {}
  local sb = type(tr.sandbox) == "table" and tr.sandbox or {}
  return { steps = t.traj and st, tokens = t.traj and tokens_of(tr), cost = t.traj and num(ms.instance_cost),
    secs = num(tm.total), reason = tr.termination_reason, exit = tr.exit_status,
    node = sb.node or sb.node_url or sb.backend }
end

local function kv(rows, R)
  local out = { '<dl class="kv">' }
  for _, r in ipairs(rows) do
    if r[2] ~= nil and r[2] ~= "" then out[#out + 1] = "<dt>" .. esc(r[1]) .. "</dt><dd>" .. esc(R(tostring(r[2]))) .. "</dd>" end
  end
  out[#out + 1] = "</dl>"
  return table.concat(out)
end

local function set_of(tasks, f)
  local seen, list = {}, {}
  for _, t in ipairs(tasks) do
    local v = t.traj and f(t.traj)
    if type(v) == "string" and v ~= "" and not seen[v] then seen[v] = true; list[#list + 1] = v end
  end
  table.sort(list)
  return table.concat(list, ", ")
end

--- The index page's HTML for a loaded run (rock.report.run) and a redactor.
function M.render(run, R, opts)
  opts = opts or {}
  local tasks, info = run.tasks, run.info or {}
  local counts, by_reason, by_exit = {}, {}, {}
  for _, s in ipairs(M.STATUSES) do counts[s] = 0 end
  local steps, costs, toks, secs = {}, {}, {}, {}
  local total, wall_from, wall_to = 0, nil, nil
  for _, t in ipairs(tasks) do
    counts[t.status] = counts[t.status] + 1
    if t.traj then
      total = total + 1
      local v = M.row_values(t)
      local reason = v.reason or "aborted"
      local b = by_reason[reason] or { resolved = 0, other = 0 }
      by_reason[reason] = b
      if t.status == "resolved" then b.resolved = b.resolved + 1 else b.other = b.other + 1 end
      if v.exit then by_exit[v.exit] = (by_exit[v.exit] or 0) + 1 end
      if v.steps then steps[#steps + 1] = v.steps end
      if v.cost then costs[#costs + 1] = v.cost end
      if v.tokens then toks[#toks + 1] = v.tokens end
      if v.secs then secs[#secs + 1] = v.secs end
    end
  end
  local title = "rock run " .. (info.name or run.dir:match("([^/]+)/*$") or run.dir)
  local b = { "<h1>", esc(R(title)), "</h1>" }
  b[#b + 1] = '<p class="note">Redacted: API keys, bearer tokens and the run\'s secret flags and environment values are shown as ' ..
    esc(require("rock.report.redact").MARK) .. ' on every page (' .. '<span id="redactions">' ..
    (opts.redactions and tostring(opts.redactions) or "0") .. '</span> replaced' ..
    (opts.partial and " in the pages written last; counted over all of them at the end of the run" or "") .. ").</p>"
  if opts.running then b[#b + 1] = '<p class="note">The run is still going: this page is refreshed as tasks finish (reload it).</p>' end
  if run.missing_trajectories then b[#b + 1] = '<p class="warn">No trajectories.jsonl in this run directory.</p>' end
  if run.torn > 0 then
    b[#b + 1] = '<p class="warn" id="torn-note">' .. run.torn .. " line(s) of trajectories.jsonl could not be read (torn or malformed): marked <b>torn</b> below.</p>"
  end
  -- provenance
  local flags = {}
  if type(info.flags) == "table" then
    local ks = {}
    for k in pairs(info.flags) do ks[#ks + 1] = k end
    table.sort(ks)
    for _, k in ipairs(ks) do flags[#flags + 1] = "--" .. tostring(k):gsub("_", "-") .. "=" .. tostring(info.flags[k]) end
  end
  local wall = num(info.finished) and num(info.started) and info.finished - info.started
  b[#b + 1] = "<h2>Run</h2>"
  b[#b + 1] = kv({
    { "rock", info.rock_version }, { "git revision", info.git_revision }, { "recipe", info.recipe },
    { "policy", set_of(tasks, function(t) return t.policy end) },
    { "model", set_of(tasks, function(t) return t.model end) },
    { "backend", set_of(tasks, function(t) return type(t.sandbox) == "table" and t.sandbox.backend end) },
    { "nodes", set_of(tasks, function(t) return type(t.sandbox) == "table" and (t.sandbox.node or t.sandbox.node_url) end) },
    { "flags", table.concat(flags, " ") },
    { "started", num(info.started) and select(2, pcall(os.date, "!%Y-%m-%d %H:%M:%S UTC", math.tointeger(math.floor(info.started)) or 0)) },
    { "wall time", wall and fmt_secs(wall) or (info.started and "running" or nil) },
    { "report written", os.date("!%Y-%m-%d %H:%M:%S UTC") .. " by rock " .. require("rock.core").version() },
  }, R)
  -- counts
  b[#b + 1] = '<h2>Outcomes</h2><div class="cards">'
  local function card(label, n, cls)
    b[#b + 1] = string.format('<div class="card %s"><b id="n-%s">%s</b>%s <span class="mut">%s</span></div>', cls or "",
      esc(label), whole(n), esc(label), pct(n, total))
  end
  b[#b + 1] = string.format('<div class="card"><b id="n-tasks">%s</b>tasks</div>', whole(#tasks))
  for _, s in ipairs(M.STATUSES) do
    if counts[s] > 0 or s == "resolved" or s == "unresolved" then card(s, counts[s], "st-" .. s) end
  end
  b[#b + 1] = "</div>"
  local function count_table(title, t, id)
    local ks = {}
    for k in pairs(t) do ks[#ks + 1] = k end
    table.sort(ks)
    local out = { '<table id="' .. id .. '" style="width:auto"><thead><tr><th>' .. esc(title) .. "</th><th>tasks</th><th>rate</th></tr></thead><tbody>" }
    for _, k in ipairs(ks) do
      local n = type(t[k]) == "table" and t[k].resolved + t[k].other or t[k]
      out[#out + 1] = "<tr><td>" .. esc(R(k)) .. '</td><td class="n">' .. n .. '</td><td class="n">' .. pct(n, total) .. "</td></tr>"
    end
    out[#out + 1] = "</tbody></table>"
    return table.concat(out)
  end
  b[#b + 1] = '<div class="twocol" style="max-width:700px">' .. count_table("termination reason", by_reason, "by-reason") ..
    count_table("exit status", by_exit, "by-exit") .. "</div>"
  -- plots
  local bars, ks = {}, {}
  for k in pairs(by_reason) do ks[#ks + 1] = k end
  table.sort(ks)
  for _, k in ipairs(ks) do
    bars[#bars + 1] = { label = R(k), parts = { { n = by_reason[k].resolved, color = "#15803d", name = "resolved" },
      { n = by_reason[k].other, color = "#b91c1c", name = "not resolved" } } }
  end
  b[#b + 1] = '<h2>Plots</h2><div class="plots">'
  b[#b + 1] = svg.bars("resolved (green) by termination reason", bars)
  b[#b + 1] = svg.histogram("steps", steps, "#2563eb")
  b[#b + 1] = svg.histogram("cost (USD)", costs, "#7c3aed")
  b[#b + 1] = svg.histogram("tokens", toks, "#0891b2")
  b[#b + 1] = svg.histogram("wall time (s)", secs, "#d97706")
  b[#b + 1] = "</div>"
  -- DAgger's rounds (rock.report.run.rounds)
  if run.rounds then
    local groups = {}
    local rows = { '<h2>DAgger rounds</h2><table id="rounds" style="width:auto"><thead><tr><th>round</th><th>β</th>' ..
      '<th>episodes</th><th>resolved</th><th>turns</th><th>agreement</th><th>intervention</th><th>records added</th>' ..
      '<th>dropped</th><th>seconds</th><th>unreadable lines</th></tr></thead><tbody>' }
    local function rate(a, n) return n > 0 and a / n or nil end
    local function p(x) return x and string.format("%.1f%%", 100 * x) or "-" end
    local function opt(x, f) return x and (f and string.format(f, x) or whole(x)) or "-" end
    for _, e in ipairs(run.rounds) do
      if e.running then
        rows[#rows + 1] = string.format('<tr data-round="%d"><td>%d</td><td colspan="10" class="mut">running (%sno dataset yet)</td></tr>',
          e.round, e.round, e.done and (whole(e.done) .. " task(s) done, ") or "")
      else
        local res, agr, int = rate(e.resolved, e.episodes), rate(e.agree, e.turns), rate(e.teacher, e.turns)
        groups[#groups + 1] = { label = "round " .. e.round, values = { res, agr, int } }
        rows[#rows + 1] = string.format('<tr data-round="%d"><td>%d</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s (%s)</td>' ..
          '<td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td>' ..
          '<td class="n">%s</td></tr>', e.round, e.round, e.beta and string.format("%.4g", e.beta) or "-", whole(e.episodes),
          whole(e.resolved), p(res), whole(e.turns), p(agr), p(int), opt(e.added), opt(e.dropped), opt(e.seconds, "%.1f"), whole(e.bad))
      end
    end
    rows[#rows + 1] = "</tbody></table>"
    if run.tasks_round then
      rows[#rows + 1] = '<p class="note">The tasks below are round ' .. run.tasks_round .. "'s (rounds/" .. run.tasks_round ..
        "/trajectories.jsonl): this run directory has no trajectories.jsonl of its own.</p>"
    end
    b[#b + 1] = table.concat(rows)
    b[#b + 1] = '<div class="plots">' .. svg.rates("per round", groups, { { name = "resolved", color = "#15803d" },
      { name = "teacher agreement", color = "#2563eb" }, { name = "intervention (teacher executed)", color = "#d97706" } }) .. "</div>"
  end
  -- start failures: aborted before a step, with their error
  local fails = {}
  for _, t in ipairs(tasks) do
    local tr = t.traj
    if tr and t.status == "error" and (tr.nsteps or 0) == 0 and type(tr.error) == "table" then
      fails[#fails + 1] = string.format('<li><a href="t/%s.html">%s</a>: <code>%s</code> %s</li>', esc(t.file), esc(R(t.id)),
        esc(R(tostring(tr.error.code or tr.exit_status or "error"))), esc(R(tostring(tr.error.message or ""))))
    end
  end
  if #fails > 0 then
    b[#b + 1] = '<h2>Failed before any step</h2><ul id="start-failures">' .. table.concat(fails) .. "</ul>"
  end
  -- the table
  b[#b + 1] = '<h2>Tasks</h2><div class="filters"><label>status <select id="f-status"><option value="">all</option>'
  for _, s in ipairs(M.STATUSES) do b[#b + 1] = '<option value="' .. s .. '">' .. s .. "</option>" end
  b[#b + 1] = '</select></label><label>text <input id="f-q" type="search" placeholder="instance, reason, node"></label>' ..
    '<span id="shown" class="mut"></span></div>'
  b[#b + 1] = '<table id="tasks"><thead><tr><th data-k="id">instance</th><th data-k="status">resolved</th>' ..
    '<th data-k="reason">reason</th><th data-k="exit">exit status</th><th data-k="steps" data-t="n">steps</th>' ..
    '<th data-k="tokens" data-t="n">tokens</th><th data-k="cost" data-t="n">cost</th><th data-k="secs" data-t="n">seconds</th>' ..
    '<th data-k="node">node</th></tr></thead><tbody>'
  for _, t in ipairs(tasks) do
    local v = M.row_values(t)
    local id = R(t.id)
    local reason, exit, node = R(v.reason or ""), R(v.exit or ""), R(v.node or "")
    local text = (id .. " " .. t.status .. " " .. reason .. " " .. exit .. " " .. node):lower()
    local link = t.traj and string.format('<a href="t/%s.html">%s</a>', esc(t.file), esc(id)) or esc(id)
    local mark = MARK[t.status]
    local extra = ""
    if t.torn then extra = ' <span class="mut">' .. esc(t.why) .. "</span>"
    elseif t.log_missing then extra = ' <span class="mut" title="' .. esc(R(t.log_missing)) .. '">(eval log missing)</span>' end
    -- data-file: the task's page (a trajectory's or a torn line's), for h/l in the view's order
    local file = (t.traj or t.torn) and ' data-file="' .. esc(t.file) .. '"' or ""
    b[#b + 1] = string.format('<tr class="%s" data-id="%s"%s data-status="%s" data-reason="%s" data-exit="%s" data-steps="%s" ' ..
      'data-tokens="%s" data-cost="%s" data-secs="%s" data-node="%s" data-text="%s"><td>%s%s</td><td class="st-%s">%s %s</td>' ..
      '<td>%s</td><td>%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td>%s</td></tr>\n',
      t.torn and "torn" or "", esc(id), file, t.status, esc(reason), esc(exit), fmt_n(v.steps), fmt_n(v.tokens), fmt_n(v.cost, "%.6g"),
      fmt_n(v.secs, "%.3f"), esc(node), esc(text), link, extra, t.status, mark, t.status, esc(reason), esc(exit),
      fmt_n(v.steps), fmt_n(v.tokens), v.cost and string.format("$%.4f", v.cost) or "", v.secs and string.format("%.1f", v.secs) or "",
      esc(node))
  end
  b[#b + 1] = "</tbody></table>"
  return html.page(title, table.concat(b), html.INDEX_JS)
end

return M
