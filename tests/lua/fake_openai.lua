-- fake_openai.lua: the Lua side of fake_openai.py, a scripted
-- OpenAI-compatible endpoint for tests.
--   local F = dofile(arg[0]:match("(.*/)") .. "fake_openai.lua")
--   local srv = F.start{ F.reply("hi"), { status = 503 }, F.tool_call("bash", { command = "ls" }) }
--   local client = rock.llm.new{ base_url = srv.url, model = "m" }
--   ... srv.requests()  -- what the client sent: {n, method, path, headers, body, raw}
--   srv.stop()          -- kills and reaps the server, removes its files (safe twice)
-- Script entries: {status=, headers=, body=, body_base64=, delay=, drop=,
-- truncate=} (see fake_openai.py); F.reply and F.tool_call build chat
-- completion answers, F.raw one of exact bytes (JSON Lua cannot write:
-- NaN, 1e400, bytes that are not UTF-8, \ud800 escapes).
local rock = require "rock"
local uv = rock.uv
local json = rock.json

local F = {}
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"

local function completion(message, opts)
  opts = opts or {}
  return {
    status = opts.status or 200, headers = opts.headers, delay = opts.delay,
    body = {
      id = "chatcmpl-fake", object = "chat.completion", created = 0,
      model = opts.model or "fake-model",
      choices = { { index = 0, message = message, finish_reason = opts.finish_reason } },
      usage = opts.usage or { prompt_tokens = 10, completion_tokens = 5, total_tokens = 15 },
    },
  }
end

--- A script entry answering with an assistant text: opts.usage,
--- opts.finish_reason (default "stop"), opts.model, opts.delay.
function F.reply(content, opts)
  opts = opts or {}
  opts.finish_reason = opts.finish_reason or "stop"
  return completion({ role = "assistant", content = content }, opts)
end

--- A script entry answering with tool calls: calls is a list of {name,
--- arguments} (arguments: a table, encoded to JSON text, or a string sent
--- as is), or one name and its arguments. opts.content is the text beside
--- them (default null), opts as F.reply's (finish_reason "tool_calls").
function F.tool_call(calls, args, opts)
  if type(calls) == "string" then calls = { { calls, args } } else opts = args end
  opts = opts or {}
  opts.finish_reason = opts.finish_reason or "tool_calls"
  local list = {}
  for i, c in ipairs(calls) do
    local a = c[2]
    if type(a) == "table" then a = json.encode(a) end
    list[i] = { id = "call_" .. i, type = "function", ["function"] = { name = c[1], arguments = a or "{}" } }
  end
  return completion({ role = "assistant", content = opts.content or json.null, tool_calls = list }, opts)
end

--- A script entry answering with exactly these bytes as the body (opts:
--- status=, headers=, delay=).
function F.raw(bytes, opts)
  opts = opts or {}
  return { status = opts.status or 200, headers = opts.headers, delay = opts.delay,
           body_base64 = rock.core.base64_encode(bytes) }
end

--- Start the server with a script (a list of entries); returns {url=
--- "http://127.0.0.1:PORT/v1", port=, requests()->list, stop()}.
function F.start(script)
  local script_path, log_path = os.tmpname(), os.tmpname()
  local f = assert(io.open(script_path, "w"))
  f:write(#script == 0 and "[]" or json.encode(script))
  f:close()
  local out = uv.new_pipe()
  local exited, on_exit = false, nil
  local proc = uv.spawn("python3", {
    args = { here .. "fake_openai.py", script_path, log_path },
    stdio = { nil, out, 2 },
  }, function()
    exited = true
    if on_exit then on_exit() end
  end)
  if not proc then
    out:close()
    os.remove(script_path); os.remove(log_path)
    error("fake_openai: cannot start python3")
  end
  local port = rock.await(function(done)
    local buf = ""
    out:read_start(function(_, data)
      if not data then out:read_stop(); done(nil); return end
      buf = buf .. data
      local line = buf:match("^(%d+)\n")
      if line then out:read_stop(); done(tonumber(line)) end
    end)
    return function() out:read_stop() end
  end)
  local srv = { port = port, url = port and string.format("http://127.0.0.1:%d/v1", port) }
  local stopped = false
  function srv.stop()
    if stopped then return end
    stopped = true
    if not exited then
      proc:kill("sigkill")
      rock.await(function(done)
        if exited then done() else on_exit = done end
        return nil
      end)
    end
    proc:close()
    out:close()
    os.remove(script_path)
    os.remove(log_path)
  end
  function srv.requests()
    local list = {}
    local lf = io.open(log_path)
    if not lf then return list end
    for line in lf:lines() do list[#list + 1] = json.decode(line) end
    lf:close()
    return list
  end
  if not port then
    srv.stop()
    error("fake_openai: the server did not print its port")
  end
  return srv
end

return F
