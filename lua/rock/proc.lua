--- rock.proc: run a host command without blocking the loop (Slurm's
-- commands, runc, tar), its output collected whole or appended to a file.
local uv = require "luv"
local task = require "rock.task"

local M = {}

--- Run argv; opts: stdin (bytes fed to it), env (a list "K=V": the whole
--- environment; nil: this process's), null_stdio (stdout and stderr go to
--- /dev/null, for a command that leaves a process holding them: runc run
--- --detach), output (a path: stdout and stderr are appended to it as
--- they come, for one that runs long and is read meanwhile: srun),
--- detached (in a session of its own: a terminal's signals are not its),
--- on_pid (fn(pid) once it runs). Returns its stdout, stderr and exit
--- code (127: not found, 128 + n: killed by signal n); with null_stdio or
--- output, "" for both. A cut task kills it.
function M.run(argv, opts)
  opts = opts or {}
  return task.await(function(done)
    local null
    if opts.output then
      local err
      null, err = uv.fs_open(opts.output, "a", 384)
      if not null then done("", argv[1] .. ": " .. tostring(err), 127); return nil end
    elseif opts.null_stdio then
      null = uv.fs_open("/dev/null", "r+", 0)
    end
    local out = not null and uv.new_pipe() or nil
    local err = not null and uv.new_pipe() or nil
    local inp = opts.stdin and uv.new_pipe() or nil
    local o, e, code, open = {}, {}, nil, null and 1 or 3
    local proc
    local function fin()
      open = open - 1
      if open > 0 then return end
      if out then out:close(); err:close() end
      if null then uv.fs_close(null) end
      done(table.concat(o), table.concat(e), code)
    end
    local perr
    proc, perr = uv.spawn(argv[1], { args = { table.unpack(argv, 2) },
      -- (an output file is not its stdin: none, /dev/null)
      stdio = { inp or (not opts.output and null or nil), out or null, err or null }, env = opts.env,
      detached = opts.detached or nil }, function(c, sig)
      code = sig ~= 0 and 128 + sig or c
      proc:close()
      fin()
    end)
    if not proc then
      if out then out:close(); err:close() end
      if inp then inp:close() end
      if null then uv.fs_close(null) end
      done("", argv[1] .. ": " .. tostring(perr), 127)
      return nil
    end
    if opts.on_pid then opts.on_pid(proc:get_pid()) end
    if out then
      out:read_start(function(_, d) if d then o[#o + 1] = d else fin() end end)
      err:read_start(function(_, d) if d then e[#e + 1] = d else fin() end end)
    end
    if inp then
      inp:write(opts.stdin)
      inp:shutdown(function() inp:close() end)
    end
    return function() if not proc:is_closing() then proc:kill("sigkill") end end
  end)
end

return M
