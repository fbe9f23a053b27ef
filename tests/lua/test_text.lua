-- test_text.lua: input a model, a task, a patch or an endpoint controls
-- never meets a pattern that backtracks (issue 15, item 13). rock.text's
-- trims, then each place that parsed such input with one (a ```bash block,
-- Retry-After, a multipart boundary, the submit marker, a size, an engine's
-- pull stream, a warmup file), fed 1 MB of adversarial text (spaces inside,
-- unclosed fences, runs of newlines): linear is milliseconds, the patterns
-- they replace took minutes to hours. Each goes through the real API.
local rock = require "rock"
local here = arg[0]:match("(.*/)")
local T = dofile(here .. "harness.lua")
local F = dofile(here .. "fake_openai.lua")
local text = rock.text
local json = rock.json
local uv = rock.uv

local MB = 1 << 20
local SP = string.rep(" ", MB)
local BOUND = 2 -- seconds: generous for linear work on 1 MB, even under ASan

local tmp = os.getenv("TMPDIR") or "/tmp"
local root = T.sh("mktemp -d " .. tmp .. "/rock-text-test.XXXXXX"):gsub("%s+$", "")

--- fn(...) within BOUND seconds; returns what it returns
local function fast(what, fn, ...)
  local t0 = uv.hrtime()
  local r = table.pack(fn(...))
  local s = (uv.hrtime() - t0) / 1e9
  T.ok(s < BOUND, string.format("%s took %.2f s", what, s))
  return table.unpack(r, 1, r.n)
end

T.test("rock.text: trims and after_last, as the usual idioms answer", function()
  T.eq(text.trim("  a b \t\n"), "a b")
  T.eq(text.trim(" \n\t "), "")
  T.eq(text.trim(""), "")
  T.eq(text.trim("x"), "x")
  T.eq(text.rtrim("  a b \r\n"), "  a b")
  T.eq(text.ltrim("  a b \r\n"), "a b \r\n")
  T.eq(text.rtrim("   "), "")
  T.eq(text.ltrim("   "), "")
  T.eq(text.rtrim("http://h:1/v1///", "/"), "http://h:1/v1")
  T.eq(text.rtrim("///", "/"), "")
  T.eq(text.trim("//a/b//", "/"), "a/b")
  T.eq(text.after_last("/a/b/c.txt", "/"), "c.txt")
  T.eq(text.after_last("c.txt", "/"), "c.txt")
  T.eq(text.after_last("a/", "/"), "")
  T.eq(text.after_last("k=v=w", "="), "w")
end)

T.test("rock.text: 1 MB of spaces, alone or inside, in linear time", function()
  local inside = "a" .. SP .. "b"
  T.eq(#fast("trim inside", text.trim, SP .. inside .. SP), #inside)
  T.eq(fast("trim spaces only", text.trim, SP), "")
  T.eq(#fast("rtrim inside", text.rtrim, inside .. SP), #inside)
  T.eq(fast("rtrim spaces only", text.rtrim, SP), "")
  T.eq(#fast("ltrim", text.ltrim, SP .. inside), #inside)
  local slashes = string.rep("/", MB)
  T.eq(#fast("rtrim of slashes", text.rtrim, slashes .. "x" .. slashes, "/"), MB + 1)
  T.eq(fast("after_last", text.after_last, string.rep("a", MB) .. "/b", "/"), "b")
  T.eq(#fast("after_last, no sep", text.after_last, string.rep("a", MB), "/"), MB)
end)

T.test("the text mode's ```bash block: 1 MB of unclosed fences, newlines, spaces", function()
  local parse = rock.llm.parse_bash_block
  local cases = {
    { "a fence, then 1 MB of newlines", "```bash" .. string.rep("\n", MB), nil, 0 },
    { "fences never closed", string.rep("```bash\nx ", MB // 10), nil, 0 },
    { "a fence and blanks between newlines", "```bash" .. string.rep(" \n", MB // 2) .. "x", nil, 0 },
    { "spaces inside the command", "```bash\n  ls" .. SP .. "-l  \n```", "ls" .. SP .. "-l", 1 },
    { "two blocks among spaces", "```bash\na\n```" .. SP .. "```bash\nb\n```", nil, 2 },
    { "1 MB of backticks", string.rep("`", MB), nil, 0 },
  }
  for _, c in ipairs(cases) do
    local cmd, err = fast(c[1], parse, c[2])
    T.eq(cmd, c[3], c[1])
    if not c[3] then T.match(err, "it contained " .. c[4], c[1]) end
  end
end)

T.test("a model reply of 1 MB of unclosed fences through the loop: a format error, at once", function()
  local t = T.git_task(root .. "/repo-fences", { ["a.py"] = "x = 1\n" },
    { instance_id = "local__fences", problem_statement = "p" })
  local srv = F.start({ F.reply(string.rep("```bash\nx ", MB // 10)), F.reply("```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```") })
  local ok, err = pcall(function()
    local _, trajs = rock.agent.run({ t }, { policy = "model", mode = "text", backend = "local", eval = "none",
      progress = false, out = root .. "/out-fences", cost_limit = 0,
      llm = rock.llm.new{ base_url = srv.url, model = "m", retries = 0, prices = { m = { input = 0, output = 0 } } } })
    local tr = trajs[1]
    T.eq(tr.termination_reason, "finish")
    T.eq(tr.steps[1].failure_reason, "format_error")
    T.ok(tr.steps[1].seconds < BOUND, "the format error took " .. tr.steps[1].seconds .. " s")
  end)
  srv.stop()
  if not ok then error(err, 0) end
end)

T.test("Retry-After: 1 MB of spaces or digits inside, directly and on a real 429", function()
  local ra = rock.llm._retry_after
  T.eq(fast("spaces around", ra, SP .. "120" .. SP), 120)
  T.eq(fast("spaces inside", ra, "1" .. SP .. "x"), nil)
  T.eq(fast("digits, then junk", ra, string.rep("1", MB) .. "x"), nil)
  T.eq(fast("digits, a dot, junk", ra, string.rep("1", MB) .. "." .. string.rep("1", MB) .. "x"), nil)
  T.eq(fast("a date among spaces", ra, SP .. "Wed, 21 Oct 2015 07:28:00 GMT" .. SP, 1445412480 - 30), 30)
  T.eq(fast("a long year", ra, "21 Oct " .. string.rep("2", MB) .. " 07:28:00 GMT"), nil)
  -- on the wire: as much as a header may carry (the HTTP parser takes 80 KiB)
  local srv = F.start({ { status = 429, headers = { ["Retry-After"] = "1" .. string.rep(" ", 60000) .. "x" },
    body = { error = { message = "slow down" } } }, F.reply("ok") })
  local ok, err = pcall(function()
    local c = rock.llm.new{ base_url = srv.url, model = "m", retries = 1, backoff = 0.01 }
    local r = fast("a 429 with 60 KB of Retry-After", c.chat, c, { messages = { { role = "user", content = "hi" } } })
    T.eq(r.message.content, "ok")
    T.eq(r.attempts, 2)
  end)
  srv.stop()
  if not ok then error(err, 0) end
end)

T.test("a base_url with 1 MB of slashes inside, and at its end", function()
  local slashes = string.rep("/", MB)
  local c = fast("llm.new", rock.llm.new, { base_url = "http://127.0.0.1:1" .. slashes .. "v1" .. slashes, model = "m" })
  T.eq(c.url, "http://127.0.0.1:1" .. slashes .. "v1/chat/completions")
end)

T.test("a multipart boundary with 60 KB of spaces inside: bad_request at once", function()
  local srv = rock.http.serve{ port = 0, handler = function(req)
    local ok, err = pcall(req.form, req)
    return { status = ok and 200 or 400, body = ok and "form" or tostring(err) }
  end }
  local ok, err = pcall(function()
    for _, ctype in ipairs({ "multipart/form-data; boundary=a" .. string.rep(" ", 60000) .. "b",
                             "multipart/form-data; boundary=" .. string.rep(" ", 60000) .. "\"ab\"" .. string.rep(" ", 2000) .. "; x=y" }) do
      local res = fast("a form with a long boundary", rock.http.request, { url = srv.url .. "/", method = "POST",
        headers = { "Content-Type: " .. ctype }, body = "--ab\r\nContent-Disposition: form-data; name=\"k\"\r\n\r\nv\r\n--ab--\r\n" })
      if ctype:find('"ab"', 1, true) then
        T.eq(res.status, 200, res.body) -- the quoted boundary, trimmed, is found
      else
        T.eq(res.status, 400)
        T.match(res.body, "bad_request")
      end
    end
  end)
  srv:stop()
  if not ok then error(err, 0) end
end)

T.test("sizes: 1 MB of spaces inside a size", function()
  local ok, err = fast("a bad size", pcall, rock.images.parse_size, "1" .. SP .. "x")
  T.ok(not ok and rock.errors.is(err, "invalid_argument"), tostring(err))
  T.eq(fast("spaces around", rock.images.parse_size, SP .. "2g" .. SP), 2 * 1024 ^ 3)
  T.eq(fast("spaces before the unit", rock.images.parse_size, "1" .. SP .. "k"), 1024)
  T.eq(rock.images.parse_size(" 1.5 MiB "), math.floor(1.5 * 1024 ^ 2))
end)

T.test("the submit marker's line with 1 MB of spaces, through the loop", function()
  local t = T.git_task(root .. "/repo-marker", { ["a.py"] = "x = 1\n" },
    { instance_id = "local__marker", problem_statement = "p" })
  local spaces = "head -c " .. MB .. " /dev/zero | tr '\\0' ' '"
  local replay = root .. "/replay-marker.jsonl"
  T.write(replay, json.encode({ instance_id = t.instance_id, actions = {
    { tool = "bash", command = "printf COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; " .. spaces .. "; printf 'x\\nnot yet\\n'" },
    { tool = "bash", command = "printf COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; " .. spaces .. "; printf '\\nmy answer\\n'" },
    { tool = "bash", command = "echo never" } } }) .. "\n")
  local _, trajs = rock.agent.run({ t }, { policy = "replay", replay = replay, backend = "local", eval = "none",
    progress = false, out = root .. "/out-marker", observation_limit = 4 * MB })
  local tr = trajs[1]
  T.eq(tr.termination_reason, "finish")
  T.eq(#tr.steps, 2, "the first is no submission (x after the spaces), the second is")
  T.eq(tr.submission, "my answer\n")
  for i = 1, 2 do T.ok(tr.steps[i].seconds < 10, "step " .. i .. " took " .. tr.steps[i].seconds .. " s") end
end)

T.test("an engine's pull stream with a 1 MB line: read at once", function()
  local sock = root .. "/engine.sock"
  local body = '{"status":"Pulling fs layer","id":"l1","progressDetail":{"current":1,"total":2}}\n'
    .. string.rep("x", MB) .. "\n" .. string.rep("y", MB) -- the last line has no newline
  local srv = rock.http.serve{ unix_socket = sock, handler = function() return { body = body } end }
  local ok, err = pcall(function()
    local seen, engine = 0, rock.engine.connect(sock)
    fast("image_pull", engine.image_pull, engine, "x:1", function() seen = seen + 1 end)
    T.eq(seen, 1, "the JSON line was read; the others are not JSON")
  end)
  srv:stop()
  if not ok then error(err, 0) end
end)

T.test("warmup's --file: a line with 1 MB of spaces inside", function()
  local file = root .. "/images.txt"
  T.write(file, "# images\n  rock-test/none:1  # a comment\nrock-test/a" .. SP .. "b\n")
  local recipe = T.sh("cd " .. here .. "../.. && pwd"):gsub("%s+$", "") .. "/recipes/warmup.lua"
  local outf = root .. "/warmup.jsonl"
  local t0 = uv.hrtime()
  local _, ok = T.sh(string.format("DOCKER_HOST=unix://%s/none.sock ROCK_PODMAN_SOCKET=%s/none.sock %s %s --file %s --pull never --out %s >/dev/null 2>&1",
    root, root, T.rock_exe(), recipe, file, outf))
  T.ok((uv.hrtime() - t0) / 1e9 < 30, "warmup ended in time")
  T.ok(not ok, "no engine: it fails")
  local images = {}
  for l in io.lines(outf) do images[#images + 1] = json.decode(l).image end
  table.sort(images)
  T.eq(#images, 2)
  T.eq(images[1], "rock-test/a" .. SP .. "b")
  T.eq(images[2], "rock-test/none:1")
end)

os.execute("rm -rf '" .. root .. "'")
T.done()
