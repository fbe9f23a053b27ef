-- test_llm.lua: rock.llm against a scripted OpenAI-compatible endpoint
-- (fake_openai.py): answers, text mode, retries, error codes, cost.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local F = dofile(arg[0]:match("(.*/)") .. "fake_openai.lua")
local llm = rock.llm
local uv = rock.uv

local USER = { { role = "user", content = "fix the bug" } }

--- Run fn(srv, client) against a server playing script; client options
--- from opts (fast retries unless given); the server is stopped after.
local function with_server(script, opts, fn)
  local srv = F.start(script)
  local o = { base_url = srv.url, model = "gpt-4o", api_key = "sk-test", backoff = 0.01, retries = 3 }
  for k, v in pairs(opts or {}) do o[k] = v end
  local ok, err = pcall(fn, srv, llm.new(o))
  srv.stop()
  if not ok then error(err, 0) end
end

local function seconds_since(t0) return (uv.hrtime() - t0) / 1e9 end

T.test("a tool-calling answer, and what the client sent", function()
  with_server({
    F.tool_call({ { "bash", { command = "ls -la" } }, { "submit", "not json {" } },
      { usage = { prompt_tokens = 120, completion_tokens = 30, total_tokens = 150 } }),
  }, { params = { temperature = 0, max_tokens = 512 } }, function(srv, c)
    local tools = { { type = "function", ["function"] = { name = "bash", parameters = { type = "object" } } } }
    local r = c:chat{ messages = USER, tools = tools }
    T.eq(r.message.role, "assistant")
    T.eq(r.message.content, nil, "no text beside the calls")
    T.eq(#r.message.tool_calls, 2)
    local call = r.message.tool_calls[1]
    T.eq(call.id, "call_1")
    T.eq(call.type, "function")
    T.eq(call["function"].name, "bash")
    T.eq(rock.json.decode(call["function"].arguments).command, "ls -la")
    -- arguments that are not JSON are the agent's business (a format error)
    T.eq(r.message.tool_calls[2]["function"].arguments, "not json {")
    T.eq(r.finish_reason, "tool_calls")
    T.eq(r.usage.prompt_tokens, 120)
    T.eq(r.usage.completion_tokens, 30)
    T.eq(r.usage.total_tokens, 150)
    T.eq(math.type(r.usage.total_tokens), "integer")
    T.eq(r.attempts, 1)
    T.ok(r.seconds >= 0, "seconds")
    local reqs = srv.requests()
    T.eq(#reqs, 1)
    local q = reqs[1]
    T.eq(q.method, "POST")
    T.eq(q.path, "/v1/chat/completions")
    T.eq(q.headers.authorization, "Bearer sk-test")
    T.match(q.headers["content-type"], "^application/json")
    T.eq(q.body.model, "gpt-4o")
    T.eq(q.body.messages[1].content, "fix the bug")
    T.eq(q.body.tools[1]["function"].name, "bash")
    T.eq(q.body.temperature, 0)
    T.eq(q.body.max_tokens, 512)
  end)
end)

T.test("a text answer; no tools field when there are none; the message feeds back", function()
  with_server({ F.reply("THOUGHT: look\n```bash\nls\n```"), F.reply("done") }, nil, function(srv, c)
    local r = c:chat{ messages = USER }
    T.eq(r.message.content, "THOUGHT: look\n```bash\nls\n```")
    T.eq(r.message.tool_calls, nil)
    T.eq(r.finish_reason, "stop")
    T.eq(llm.parse_bash_block(r.message.content), "ls")
    -- the assistant message goes back into the next request as is
    local msgs = { USER[1], r.message, { role = "user", content = "ok" } }
    c:chat{ messages = msgs, tools = {} }
    local q = srv.requests()
    T.eq(q[1].body.tools, nil, "no tools sent")
    T.eq(q[2].body.tools, nil, "an empty tools list is not sent")
    T.eq(q[2].body.messages[2].role, "assistant")
    T.eq(q[2].body.messages[2].content, r.message.content)
  end)
end)

T.test("text mode: exactly one ```bash block", function()
  local p = llm.parse_bash_block
  T.eq(p("THOUGHT: x\n\n```bash\nls -la\n```\n"), "ls -la")
  T.eq(p("```bash   \ncd /repo && make\n```"), "cd /repo && make", "trailing spaces after bash")
  T.eq(p("```bash\n  echo a\n  echo b  \n```"), "echo a\n  echo b", "stripped, inner lines kept")
  T.eq(p("```bash\r\nls\n```"), "ls", "CRLF after the fence")
  local function refused(text, count)
    local cmd, msg = p(text)
    T.eq(cmd, nil, "no command for " .. string.format("%q", tostring(text)))
    T.match(msg, "EXACTLY ONE bash code block")
    T.match(msg, "contained " .. count .. "%.")
    T.match(msg, "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    T.ok(not msg:find("{{", 1, true), "placeholders filled")
  end
  refused("I will just think.", 0)
  refused("```python\nprint(1)\n```", 0)
  refused("```\nls\n```", 0)
  refused("```sh\nls\n```", 0)
  refused("```bash\nls\n```\nand\n```bash\npwd\n```", 2)
  refused("```bash\n   \n```", 1) -- an empty command
  refused("```bash\nls", 0) -- never closed
  refused(nil, 0) -- a reply with no text at all
  T.ok(not pcall(p, 42), "a number is misuse")
end)

T.test("prompts.render fills {{name}} and names a missing one", function()
  local prompts = require "rock.agent.prompts"
  T.eq(prompts.render("a {{x}} b {{ y }} {{x}}", { x = 1, y = "%1" }), "a 1 b %1 1")
  local e = T.raises("invalid_argument", prompts.render, "hi {{who}}", {})
  T.match(e.message, "{{who}}")
  T.eq(type(prompts.format_error), "string")
end)

T.test("429 with Retry-After: waits what it says, then succeeds", function()
  with_server({
    { status = 429, headers = { ["Retry-After"] = "1" }, body = { error = { message = "Rate limit reached" } } },
    F.reply("ok"),
  }, { backoff = 0.01 }, function(srv, c)
    local t0 = uv.hrtime()
    local r = c:chat{ messages = USER }
    local s = seconds_since(t0)
    T.eq(r.message.content, "ok")
    T.eq(r.attempts, 2)
    T.eq(#srv.requests(), 2)
    T.eq(c.stats.retries, 1)
    T.ok(s >= 0.9, "waited the Retry-After second, not the 0.01 s backoff: " .. s)
    T.ok(r.seconds >= 0.9, "seconds counts the wait: " .. r.seconds)
  end)
  -- OpenAI's retry-after-ms is read first
  with_server({
    { status = 429, headers = { ["retry-after-ms"] = "300", ["Retry-After"] = "100" } },
    F.reply("ok"),
  }, {}, function(_, c)
    local t0 = uv.hrtime()
    T.eq(c:chat{ messages = USER }.attempts, 2)
    local s = seconds_since(t0)
    T.ok(s >= 0.25 and s < 50, "waited retry-after-ms: " .. s)
  end)
end)

T.test("Retry-After values: seconds and HTTP dates", function()
  local ra = llm._retry_after
  local now = 1445412480 -- Wed, 21 Oct 2015 07:28:00 GMT
  T.eq(ra("120", now), 120)
  T.eq(ra(" 2 ", now), 2)
  T.eq(ra("Wed, 21 Oct 2015 07:28:30 GMT", now), 30)
  T.eq(ra("Wednesday, 21-Oct-15 07:29:00 GMT", now), 60, "RFC 850")
  T.eq(ra("Wed, 21 Oct 2015 07:00:00 GMT", now), 0, "a date in the past")
  T.eq(ra("Thu, 29 Feb 2024 00:00:00 GMT", 1709164800 - 5), 5, "a leap day")
  T.eq(ra("soon", now), nil)
  T.eq(ra("-3", now), nil)
  T.eq(ra(nil, now), nil)
end)

T.test("429 insufficient_quota is an llm_error, not retried", function()
  with_server({
    { status = 429, body = { error = { message = "You exceeded your current quota", type = "insufficient_quota",
                                       code = "insufficient_quota" } } },
    F.reply("never"),
  }, {}, function(srv, c)
    local e = T.raises("llm_error", c.chat, c, { messages = USER })
    T.match(e.message, "exceeded your current quota")
    T.eq(e.http_status, 429)
    T.eq(#srv.requests(), 1)
  end)
end)

T.test("503 twice then success", function()
  with_server({ { status = 503, body = "upstream busy" }, { status = 502 }, F.reply("ok") }, {}, function(srv, c)
    local r = c:chat{ messages = USER }
    T.eq(r.message.content, "ok")
    T.eq(r.attempts, 3)
    T.eq(c.stats.retries, 2)
    T.eq(c.stats.calls, 1)
    T.eq(#srv.requests(), 3)
  end)
end)

T.test("5xx until the retries run out: llm_unreachable names attempts and cause", function()
  with_server({ { status = 500 }, { status = 500 }, { status = 503, body = { error = { message = "overloaded" } } } },
    { retries = 2 }, function(srv, c)
    local e = T.raises("llm_unreachable", c.chat, c, { messages = USER })
    T.match(e.message, "3 attempts")
    T.match(e.message, "HTTP 503: overloaded")
    T.eq(e.attempts, 3)
    T.eq(e.http_status, 503)
    T.eq(#srv.requests(), 3)
    T.eq(c.stats.calls, 0)
  end)
end)

T.test("a body that is not JSON, or has no choices: llm_bad_response, not retried", function()
  with_server({ { body = "<html>gateway</html>" }, F.reply("unused") }, {}, function(srv, c)
    local e = T.raises("llm_bad_response", c.chat, c, { messages = USER })
    T.match(e.message, "not a JSON object")
    T.match(e.message, "gateway")
    T.eq(#srv.requests(), 1)
  end)
  with_server({ { body = { choices = {} } }, { body = { error = { message = "model crashed" } } } }, {},
    function(_, c)
      T.match(T.raises("llm_bad_response", c.chat, c, { messages = USER }).message, "no choices")
      T.match(T.raises("llm_bad_response", c.chat, c, { messages = USER }).message, "model crashed")
    end)
  with_server({ { body = { choices = { { message = { role = "assistant", tool_calls = "ls" } } } } } }, {},
    function(_, c)
      T.match(T.raises("llm_bad_response", c.chat, c, { messages = USER }).message, "tool_calls")
    end)
end)

T.test("issue15-14: json_decode reads what Python writes: bad bytes and lone surrogates become U+FFFD", function()
  local cases = {
    { '"a\\ud800b"', "a\u{FFFD}b" },
    { '"\\udc00"', "\u{FFFD}" }, -- a lone low half, alone in the text
    { '"\\udfff x"', "\u{FFFD} x" },
    { '"\\ud83d\\ude00"', "\u{1F600}" },
    { '"\\\\ud800"', "\\ud800" }, -- an escaped backslash, then text
    { '"\\ud800\\ud800\\udc00"', "\u{FFFD}\u{10000}" },
    { '"\\ud800\\u0041"', "\u{FFFD}A" },
    { '"\\ud800\\u00"', nil }, -- not JSON either way
    { '"x\255y\195\40"', "x\u{FFFD}y\u{FFFD}(" },
  }
  for _, c in ipairs(cases) do
    local ok, v = pcall(llm.json_decode, c[1])
    if c[2] then T.eq(v, c[2], c[1]) else T.ok(not ok, c[1] .. " is refused") end
  end
  local t0 = uv.hrtime()
  local v = llm.json_decode('"' .. string.rep("\\ud800", 1 << 17) .. string.rep("\\\\", 1 << 18) .. '"')
  T.ok(seconds_since(t0) < 2, "linear")
  T.eq(#v, 3 * (1 << 17) + (1 << 18))
end)

T.test("issue15-14: an answer whose only odd text is a lone low surrogate is kept, cleaned", function()
  with_server({ F.raw('{"choices":[{"message":{"role":"assistant","content":"x \\udc00 y"}}]}'), F.reply("ok") },
    nil, function(srv, c)
    T.eq(c:chat{ messages = USER }.message.content, "x \u{FFFD} y")
  end)
end)

T.test("issue15-12: usage that is no token count is llm_bad_response, counted, not summed", function()
  local usages = { '{"prompt_tokens":1e400}', '{"completion_tokens":NaN}', '{"total_tokens":-1}',
                   '{"prompt_tokens":1000000001}', '{"cached_tokens":-Infinity}' }
  local script = {}
  for i, u in ipairs(usages) do
    script[i] = F.raw('{"choices":[{"message":{"role":"assistant","content":"hi"}}],"usage":' .. u .. '}')
  end
  with_server(script, nil, function(_, c)
    for i, u in ipairs(usages) do
      local err = T.raises("llm_bad_response", c.chat, c, { messages = USER })
      T.match(err.message, "not a token count", u)
      T.eq(c.stats.bad_responses, i, u)
    end
    T.eq(c.stats.calls, 0)
    T.eq(c.stats.prompt_tokens + c.stats.completion_tokens + c.stats.total_tokens, 0)
    T.eq(c.stats.cost, 0)
  end)
  -- the largest believable figure is fine
  with_server({ F.reply("hi", { usage = { prompt_tokens = 1e9, completion_tokens = 0 } }) }, nil, function(_, c)
    T.eq(c:chat{ messages = USER }.usage.prompt_tokens, 1000000000)
  end)
  T.raises("invalid_argument", llm.new, { base_url = "http://x", model = "m", prices = { m = { input = 0 / 0, output = 1 } } })
  T.raises("invalid_argument", llm.new, { base_url = "http://x", model = "m", prices = { m = { input = 1, output = -1 } } })
  T.raises("invalid_argument", llm.new, { base_url = "http://x", model = "m", prices = { m = { input = 1, output = math.huge } } })
end)

T.test("truncated bodies: a cut transfer is retried, cut JSON is a bad response", function()
  local full = F.reply("the whole answer")
  -- the server announces the whole length and closes after 20 bytes
  with_server({ { body = full.body, truncate = 20 }, F.reply("second try") }, {}, function(srv, c)
    local r = c:chat{ messages = USER }
    T.eq(r.message.content, "second try")
    T.eq(r.attempts, 2)
    T.eq(#srv.requests(), 2)
  end)
  -- a complete HTTP answer whose JSON stops midway
  local text = rock.json.encode(full.body)
  with_server({ { body = text:sub(1, #text // 2) }, F.reply("unused") }, {}, function(srv, c)
    T.raises("llm_bad_response", c.chat, c, { messages = USER })
    T.eq(#srv.requests(), 1)
  end)
end)

T.test("a dropped connection, then success", function()
  with_server({ { drop = true }, F.reply("back") }, {}, function(srv, c)
    local r = c:chat{ messages = USER }
    T.eq(r.message.content, "back")
    T.eq(r.attempts, 2)
    T.eq(#srv.requests(), 2)
  end)
end)

T.test("dropped every time: llm_unreachable after the retries", function()
  with_server({ { drop = true }, { drop = true }, { drop = true }, F.reply("too late") },
    { retries = 2 }, function(srv, c)
    local e = T.raises("llm_unreachable", c.chat, c, { messages = USER })
    T.match(e.message, "3 attempts")
    T.eq(e.attempts, 3)
    T.eq(#srv.requests(), 3, "exactly 1 + retries attempts")
    T.eq(c.stats.retries, 2)
  end)
  -- nothing listening at all
  local srv = F.start({})
  local url = srv.url
  srv.stop()
  local c = llm.new{ base_url = url, model = "m", retries = 1, backoff = 0.01 }
  local e = T.raises("llm_unreachable", c.chat, c, { messages = USER })
  T.match(e.message, "2 attempts")
  T.match(e.message, "connection_failed")
end)

T.test("context overflow: OpenAI's, vLLM's and SGLang's shapes", function()
  local bodies = {
    { error = { message = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
                type = "invalid_request_error", param = "messages", code = "context_length_exceeded" } },
    { object = "error", message = "This model's maximum context length is 32768 tokens. However, you requested 41648 tokens (37552 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.",
      type = "BadRequestError", param = rock.json.null, code = 400 },
    { object = "error", message = "The input (61709 tokens) is longer than the model's context length (40960 tokens).",
      type = "BadRequestError", param = rock.json.null, code = 400 },
    { error = { message = "litellm.ContextWindowExceededError: litellm.BadRequestError: prompt is too long", code = "400" } },
  }
  for i, b in ipairs(bodies) do
    with_server({ { status = 400, body = b }, F.reply("unused") }, {}, function(srv, c)
      local e = T.raises("context_overflow", c.chat, c, { messages = USER })
      T.eq(e.http_status, 400, "shape " .. i)
      T.match(e.message, "HTTP 400")
      T.eq(#srv.requests(), 1, "not retried, shape " .. i)
    end)
  end
  -- another 400 is an llm_error, never retried
  with_server({ { status = 400, body = { error = { message = "Invalid value for 'temperature'", code = "invalid_value" } } } },
    {}, function(srv, c)
      local e = T.raises("llm_error", c.chat, c, { messages = USER })
      T.match(e.message, "temperature")
      T.eq(e.error_code, "invalid_value")
      T.eq(#srv.requests(), 1)
    end)
end)

T.test("401 and 404: llm_error with the endpoint's message, not retried", function()
  with_server({
    { status = 401, body = { error = { message = "Incorrect API key provided: sk-test.", code = "invalid_api_key" } } },
    { status = 404, body = { detail = "Not Found" } },
    F.reply("unused"),
  }, {}, function(srv, c)
    local e = T.raises("llm_error", c.chat, c, { messages = USER })
    T.eq(e.http_status, 401)
    T.match(e.message, "Incorrect API key provided")
    T.eq(#srv.requests(), 1)
    e = T.raises("llm_error", c.chat, c, { messages = USER })
    T.eq(e.http_status, 404)
    T.match(e.message, "Not Found")
    T.eq(#srv.requests(), 2)
  end)
end)

T.test("a call past its timeout is retried, then llm_unreachable", function()
  with_server({ F.reply("slow", { delay = 3 }), F.reply("slow", { delay = 3 }), F.reply("unused") },
    { timeout = 0.3, retries = 1 }, function(srv, c)
    local e = T.raises("llm_unreachable", c.chat, c, { messages = USER })
    T.match(e.message, "2 attempts")
    T.match(e.message, "timeout")
    T.eq(#srv.requests(), 2)
  end)
  -- and a slow first answer followed by a quick one succeeds
  with_server({ F.reply("slow", { delay = 3 }), F.reply("quick") }, { timeout = 0.3 }, function(_, c)
    local r = c:chat{ messages = USER }
    T.eq(r.message.content, "quick")
    T.eq(r.attempts, 2)
  end)
end)

T.test("a rock.timeout around chat wins at once and is not retried", function()
  with_server({ F.reply("slow", { delay = 3 }), F.reply("unused") }, { timeout = 30 }, function(srv, c)
    local e = T.raises("timeout", rock.timeout, 0.3, c.chat, c, { messages = USER })
    T.ok(not e.attempts and not e.url, "the deadline's own error, not the client's")
    T.match(e.message, "timed out after 0.3s")
    T.eq(#srv.requests(), 1)
    T.eq(c.stats.retries, 0)
  end)
end)

T.test("usage and cost accounting", function()
  with_server({
    F.reply("a", { usage = { prompt_tokens = 1000, completion_tokens = 500, total_tokens = 1500 } }),
    F.reply("b", { usage = { prompt_tokens = 2000, completion_tokens = 100, total_tokens = 2100,
                             prompt_tokens_details = { cached_tokens = 1000 } } }),
    F.reply("c", { usage = rock.json.null }),
  }, { model = "openai/gpt-4o" }, function(_, c)
    local r1 = c:chat{ messages = USER }
    -- gpt-4o: 2.50 in, 10.00 out, 1.25 cached in (USD per 1M tokens)
    T.ok(math.abs(r1.cost - (1000 * 2.5 + 500 * 10) / 1e6) < 1e-12, "cost " .. r1.cost)
    local r2 = c:chat{ messages = USER }
    T.eq(r2.usage.cached_tokens, 1000)
    T.ok(math.abs(r2.cost - (1000 * 2.5 + 1000 * 1.25 + 100 * 10) / 1e6) < 1e-12, "cached cost " .. r2.cost)
    local r3 = c:chat{ messages = USER }
    T.eq(r3.usage.total_tokens, 0, "no usage reported")
    T.eq(r3.cost, 0)
    local s = c.stats
    T.eq(s.calls, 3)
    T.eq(s.prompt_tokens, 3000)
    T.eq(s.completion_tokens, 600)
    T.eq(s.total_tokens, 3600)
    T.ok(math.abs(s.cost - (r1.cost + r2.cost)) < 1e-12, "stats.cost")
  end)
  -- an override table wins, by exact name or with the prefix stripped
  local usd, known = llm.cost("vendor/my-model", { prompt_tokens = 1e6, completion_tokens = 2e6 },
    { ["my-model"] = { input = 1, output = 3 } })
  T.eq(known, true)
  T.eq(usd, 7)
  T.eq(select(2, llm.cost("gpt-4o-mini", nil)), true)
  T.eq(llm.cost("gpt-4o-mini", nil), 0)
  T.raises("invalid_argument", llm.cost, "m", {}, { m = { input = "1" } })
  T.raises("invalid_argument", llm.new, { base_url = "http://127.0.0.1:1/v1", model = "m",
                                          prices = { m = { input = 1 } } })
end)

T.test("an unknown model costs 0 and is warned about once, never a crash", function()
  with_server({ F.reply("a"), F.reply("b") }, { model = "no-such-model-in-prices" }, function(_, c)
    T.eq(c:chat{ messages = USER }.cost, 0)
    T.eq(c:chat{ messages = USER }.cost, 0)
    T.eq(c.stats.cost, 0)
    T.eq(c.stats.calls, 2)
  end)
  -- the warnings, counted in a child's stderr
  local out, ok = T.sh("ROCK_LOG=warn " .. T.rock_exe() .. [[ -e '
    local llm = require("rock").llm
    print(llm.cost("unknown-a", { prompt_tokens = 5 }))
    llm.cost("unknown-a", {})
    llm.cost("prefix/unknown-a", {})
    llm.cost("unknown-b", nil)
    print(llm.cost("gpt-4o", { prompt_tokens = 1e6 }))']])
  T.ok(ok, out)
  local n = select(2, out:gsub("no price known for model", ""))
  T.eq(n, 3, "one warning per model name: " .. out)
  T.match(out, "0\tfalse")
  T.match(out, "2%.5\ttrue")
end)

T.test("base_url, api_key and model default to ROCK_LLM_*", function()
  local srv = F.start({ F.reply("from env") })
  local exe = T.rock_exe()
  local out, ok = T.sh("ROCK_LLM_BASE_URL=" .. srv.url .. " ROCK_LLM_MODEL=env-model ROCK_LLM_API_KEY=env-key " ..
    exe .. [[ -e '
    local c = require("rock").llm.new{ backoff = 0.01 }
    print(c:chat{ messages = { { role = "user", content = "hi" } } }.message.content)']])
  local reqs = srv.requests()
  srv.stop()
  T.ok(ok, out)
  T.match(out, "from env")
  T.eq(#reqs, 1)
  T.eq(reqs[1].body.model, "env-model")
  T.eq(reqs[1].headers.authorization, "Bearer env-key")
  -- without them (and without options): invalid_argument naming what is missing
  out, ok = T.sh("env -u ROCK_LLM_BASE_URL -u ROCK_LLM_MODEL -u ROCK_LLM_API_KEY " .. exe .. [[ -e '
    local llm = require("rock").llm
    local _, e = pcall(llm.new)
    print(e.code, e.message)
    _, e = pcall(llm.new, { base_url = "http://127.0.0.1:1/v1" })
    print(e.code, e.message)
    local c = llm.new{ base_url = "http://127.0.0.1:1/v1", model = "m" }
    print(c.model, c.timeout, c.retries, c.backoff)']])
  T.ok(ok, out)
  T.match(out, "invalid_argument\tllm.new: no base_url")
  T.match(out, "invalid_argument\tllm.new: no model")
  T.match(out, "m\t120\t6\t1")
end)

T.test("no api key: no Authorization header", function()
  with_server({ F.reply("ok") }, { api_key = "" }, function(srv, c)
    c:chat{ messages = USER }
    T.eq(srv.requests()[1].headers.authorization, nil)
  end)
end)

T.test("bad options and requests raise invalid_argument", function()
  local base = "http://127.0.0.1:1/v1"
  T.raises("invalid_argument", llm.new, { base_url = base, model = "m", retry = 3 })
  T.raises("invalid_argument", llm.new, { base_url = base, model = "m", retries = -1 })
  T.raises("invalid_argument", llm.new, { base_url = base, model = "m", retries = 1.5 })
  T.raises("invalid_argument", llm.new, { base_url = base, model = "m", timeout = 0 })
  T.raises("invalid_argument", llm.new, { base_url = base, model = "m", timeout = "5" })
  T.raises("invalid_argument", llm.new, { base_url = base, model = "m", backoff = -1 })
  T.raises("invalid_argument", llm.new, { base_url = "localhost:8000", model = "m" })
  T.raises("invalid_argument", llm.new, { base_url = base, model = "m", params = { model = "x" } })
  T.raises("invalid_argument", llm.new, "http://x")
  local c = llm.new{ base_url = base, model = "m" }
  T.raises("invalid_argument", c.chat, c, { messages = {} })
  T.raises("invalid_argument", c.chat, c, {})
  T.raises("invalid_argument", c.chat, c, { messages = USER, tools = "bash" })
  T.raises("invalid_argument", c.chat, c, { messages = USER, tool = {} })
  T.raises("invalid_argument", c.chat, c, { messages = { { role = "user", content = print } } })
  T.eq(c.stats.calls, 0)
end)

T.done()
