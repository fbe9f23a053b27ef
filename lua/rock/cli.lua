--- rock.cli: the `rock gc`, `rock ps`, `rock serve` and `rock report`
-- commands (c/cli/main.c runs them as the main task with
-- arg = {"gc"|"ps"|"serve"|"report", flags...}).
local cjson = require "cjson"
local gc = require "rock.gc"
local log = require "rock.log"

local M = {}

local function fmt_secs(s)
  if not s then return "-" end
  s = math.floor(s)
  if s < 120 then return s .. "s" end
  if s < 7200 then return math.floor(s / 60) .. "m" end
  return math.floor(s / 3600) .. "h"
end

function M.gc()
  gc.once() -- the pass every host start makes: wait for it, report it too
  local report = gc.run()
  for _, r in ipairs(gc.once_report and gc.once_report.removed or {}) do
    table.insert(report.removed, 1, r)
  end
  for _, e in ipairs(gc.once_report and gc.once_report.errors or {}) do
    table.insert(report.errors, 1, e)
  end
  for _, r in ipairs(report.removed) do
    print(string.format("removed %s (%s): %s", r.id, r.backend, r.why))
  end
  for _, e in ipairs(report.errors) do log.error("gc", "%s", e) end
  print(string.format("gc: %d removed, %d error(s)", #report.removed, #report.errors))
  if #report.errors > 0 then error("gc: some sandboxes could not be removed", 0) end
end

function M.ps(json)
  local rows = gc.ps()
  if json then
    for _, r in ipairs(rows) do print(cjson.encode(r)) end
    return
  end
  print(string.format("%-16s %-7s %-12s %-28s %-6s %-6s %s", "SANDBOX", "BACKEND", "STATE",
    "OWNER", "AGE", "LEASE", "IMAGE"))
  for _, r in ipairs(rows) do
    print(string.format("%-16s %-7s %-12s %-28s %-6s %-6s %s", r.id, r.backend, r.state or "?",
      (r.owner or "?") .. (r.owner_alive and "" or " (dead)"), fmt_secs(r.age),
      fmt_secs(r.lease_left), r.image or ""))
  end
end

--- rock serve: ROCK's sandbox API until SIGINT/SIGTERM, which finishes
--- the requests in flight and stops the sandboxes (exit 128+signal).
function M.serve(argv)
  local rest = {}
  for i = 2, #argv do rest[#rest + 1] = argv[i] end
  local o = require("rock.flags").parse(rest, {
    host = { default = "127.0.0.1", help = "address to bind (anything but 127.0.0.1 needs --token)" },
    port = { type = "number", default = 8080, help = "TCP port (0: any free one, printed)" },
    unix_socket = { help = "serve on this unix socket (owner-only) instead of TCP" },
    backend = { default = "auto", help = "auto (docker, else podman; no engine: starts fail)|docker|podman|" ..
      "local (on this host as this user, unconfined)" },
    token = { help = "API token (default $ROCK_API_TOKEN): Authorization: Bearer T or X-Key: T" },
    lease = { type = "number", help = "default idle lease in seconds (ROCK: 1800)" },
    budget_cpu = { type = "number", help = "CPUs the sandboxes may reserve (default: this machine's)" },
    budget_memory_gb = { type = "number", help = "GB of memory they may reserve (default: this machine's)" },
    budget_gpu = { type = "number", help = "GPUs they may reserve (default 0)" },
    max_starting = { type = "number", help = "starts in flight at once (default $ROCK_ENV_CONCURRENCY, else 4)" },
    nodes = { help = "a front: place every sandbox onto these `rock serve` nodes, URL,URL,... or @FILE " ..
      "(default $ROCK_NODES; backend and budget are then the nodes')" },
    strategy = { default = "spread", help = "with --nodes: spread (least used node) | pack (most used that fits)" },
    pool = { help = "warm sandboxes: IMAGE=N,... kept started; a start of that image with ROCK's default " ..
      "memory and cpus is answered by one at once" },
    once = { type = "number", help = "serve one sandbox: exit once it is gone (stopped, deleted, its lease " ..
      "over), or when none starts in this many seconds (a Slurm job's server: backends/slurm.lua)" },
  }, "rock serve [--host 127.0.0.1] [--port 8080] [--backend auto|docker|podman|local] [--token T]" ..
    " [--unix-socket PATH] [--lease S] [--budget-cpu N] [--budget-memory-gb N] [--budget-gpu N] [--max-starting N]" ..
    " [--nodes URL,...|@FILE] [--strategy spread|pack] [--pool IMAGE=N,...] [--once S]")
  local nodes = o.nodes or os.getenv("ROCK_NODES")
  if nodes == "" then nodes = nil end
  local task = require "rock.task"
  log.set_default("info") -- a line per request (docs/http-api.md) unless ROCK_LOG says otherwise
  local srv = require("rock.serve").start{ host = o.host, port = o.port, unix_socket = o.unix_socket,
    backend = o.backend, token = o.token, lease = o.lease, nodes = nodes, strategy = o.strategy, pool = o.pool,
    budget = { cpus = o.budget_cpu,
      memory_gb = o.budget_memory_gb, gpus = o.budget_gpu, max_starting = o.max_starting } }
  io.stdout:write("rock serve: listening on ", srv.url or o.unix_socket,
    srv.pool and string.format(" (a front of %d node(s))", #srv.pool.nodes) or "", "\n")
  io.stdout:flush()
  task.await(function(wake) -- until SIGINT/SIGTERM (or --once's end): finish what runs, then exit
    local woken = false
    local function finish()
      if woken then return end
      woken = true
      srv:stop()
      wake()
    end
    require("rock._main").on_signal(finish)
    if o.once then -- one sandbox: gone once an entry was seen and none is pending or running
      local uv, t0, seen = require "luv", require("luv").now(), false
      local timer = uv.new_timer()
      timer:start(200, 200, function()
        local live = false
        for _, e in pairs(srv.registry.entries) do
          seen = true
          if e.state == "pending" or e.state == "running" then live = true end
        end
        if (seen and not live) or (not seen and uv.now() - t0 > o.once * 1000) then
          timer:stop(); timer:close()
          task.spawn(finish)
        end
      end)
      timer:unref()
    end
    return nil
  end)
end

--- rock report RUN_DIR [--out DIR] [--instances FILE]: the run's static
--- site (rock.report, docs/report.md); prints where index.html is.
function M.report(argv)
  local usage = "rock report RUN_DIR [--out DIR] [--instances FILE]"
  local rest = {}
  for i = 2, #argv do rest[#rest + 1] = argv[i] end
  local o, pos = require("rock.flags").parse(rest, {
    out = { help = "where to write the site (default RUN_DIR/report)" },
    instances = { help = "the run's tasks file: gold patches, and tasks without a trajectory (pending)" },
  }, usage)
  local dir = pos[1]
  if not dir then
    io.stderr:write("rock report: RUN_DIR is required\nusage: ", usage, "\n")
    os.exit(2)
  end
  dir = dir:gsub("(.)/+$", "%1")
  local st = require("luv").fs_stat(dir)
  if not st or st.type ~= "directory" then
    io.stderr:write("rock report: ", dir, " is not a run directory (", st and "not a directory" or "no such directory", ")\n")
    os.exit(2)
  end
  local ok, r = pcall(require("rock.report").write, dir, { out = o.out, instances = o.instances })
  if not ok then
    io.stderr:write("rock report: ", tostring(type(r) == "table" and r.message or r):gsub("^report: ", ""), "\n")
    os.exit(1)
  end
  print(string.format("rock report: %d task(s)%s, %d redaction(s), %.2fs: %s/index.html", r.tasks,
    r.torn > 0 and string.format(" (%d torn line(s))", r.torn) or "", r.redactions, r.seconds, r.out))
end

function M.main(arg)
  local cmd = arg[1]
  if cmd == "serve" then return M.serve(arg) end
  if cmd == "gc" then return M.gc() end
  if cmd == "ps" then return M.ps(arg[2] == "--json") end
  if cmd == "report" then return M.report(arg) end
  error("rock: unknown command " .. tostring(cmd), 0)
end

return M
