-- test_editor.lua: sb:editor (the rocklet's str_replace_editor) through the
-- Lua API, in a scratch dir only. ctest runs it on the local backend and in
-- containers (docker: rock-test/debian:12, and rock-test/busybox:1, which
-- has no python and no bash); every message is checked in
-- tests/rocklet/test_editor.c, these check the wire and the sandbox: the
-- arguments as SWE-agent's argparse takes them, a 30 MB edit off the
-- rocklet's loop (/is_alive and a command do not wait on it) with a
-- bounded answer, calls at once on one path and on several, a client gone
-- mid-call, and /close while an edit runs.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local rocklet = require "rock.rocklet"
local cjson = require "cjson"

local sb = rock.sandbox.start(T.sandbox_opts())
-- made by write_file: rock-test/busybox:1 links few applets (no mkdir)
local tmp = (sb.backend == "local" and T.scratch(sb) or "/tmp") .. "/ed"
sb:write_file{ path = tmp .. "/.keep", content = "" }
-- a busybox applet that has no link of its own
local function applet(name)
  return sb:execute{ command = "command -v " .. name }.exit_code == 0 and name or "busybox " .. name
end
local function call(body) return rocklet.call(sb.socket, "/editor", body, 30) end
-- POST a JSON text as given (cjson would send 1.0 as 1); status, answer
local function post(text, timeout)
  local res = rock.http.request{ url = "http://rocklet/editor", unix_socket = sb.socket,
    method = "POST", headers = { "Content-Type: application/json" }, body = text,
    timeout = timeout or 30 }
  return res.status, cjson.decode(res.body)
end
local function seconds_since(t0) return (rock.uv.hrtime() - t0) / 1e9 end

local function view_text(path, lines, from)
  local out = { "Here's the result of running `cat -n` on " .. path .. ":\n" }
  for i, l in ipairs(lines) do out[#out + 1] = string.format("%6d\t%s\n", i + (from or 1) - 1, l) end
  return table.concat(out)
end

T.test("create, view, str_replace, insert, undo three times", function()
  local p = tmp .. "/a.py"
  local r = sb:editor{ command = "create", path = p, file_text = "def f():\n\treturn 1\n" }
  T.eq(r.output, "File created successfully at: " .. p)
  T.eq(r.error, false)
  T.eq(r.exit_code, 0)
  r = sb:editor{ command = "view", path = p }
  T.eq(r.output, view_text(p, { "def f():", "        return 1", "" }))
  r = sb:editor{ command = "str_replace", path = p, old_str = "\treturn 1", new_str = "\treturn 2" }
  T.eq(r.exit_code, 0)
  T.eq(r.output, "The file " .. p .. " has been edited. " ..
    view_text("a snippet of " .. p, { "def f():", "        return 2", "" }) ..
    "Review the changes and make sure they are as expected. Edit the file again if necessary.")
  r = sb:editor{ command = "insert", path = p, insert_line = 0, new_str = "import os" }
  T.eq(r.exit_code, 0)
  T.match(r.output, "a snippet of the edited file:\n     1\timport os\n     2\tdef f%(%):\n", "insert")
  T.eq(sb:read_file{ path = p }.content, "import os\ndef f():\n        return 2\n")
  r = sb:editor{ command = "undo_edit", path = p }
  T.eq(r.output, "Last edit to " .. p .. " undone successfully. " ..
    view_text(p, { "def f():", "        return 2", "" }))
  sb:editor{ command = "undo_edit", path = p }
  T.eq(sb:read_file{ path = p }.content, "def f():\n\treturn 1\n") -- the tab is back
  r = sb:editor{ command = "undo_edit", path = p } -- the create's own step
  T.eq(r.exit_code, 0)
  r = sb:editor{ command = "undo_edit", path = p }
  T.eq(r.output, "No edit history found for " .. p .. ".")
  T.eq(r.error, true)
  T.eq(r.exit_code, 18)
end)

T.test("tool errors are answers, with SWE-agent's codes", function()
  local r = sb:editor{ command = "view", path = tmp .. "/missing" }
  T.eq(r.output, "The path " .. tmp .. "/missing does not exist. Please provide a valid path.")
  T.eq(r.exit_code, 7)
  r = sb:editor{ command = "view", path = "x.py", cwd = "/repo" }
  T.eq(r.output, "The path x.py is not an absolute path, it should start with `/`. Maybe you meant /repo/x.py?")
  T.eq(r.exit_code, 6)
  r = sb:editor{ command = "create", path = tmp .. "/no/dir/f", file_text = "" }
  T.eq(r.exit_code, 21)
  r = sb:editor{ command = "create", path = tmp .. "/f" }
  T.eq(r.output, "Parameter `file_text` is required for command: create")
  sb:write_file{ path = tmp .. "/f", content = "1\n2\n3" }
  r = sb:editor{ command = "view", path = tmp .. "/f", view_range = { 2, -1 } }
  T.eq(r.output, view_text(tmp .. "/f", { "2", "3" }, 2))
  r = sb:editor{ command = "view", path = tmp .. "/f", view_range = {} } -- [] is no range
  T.eq(r.output, view_text(tmp .. "/f", { "1", "2", "3" }))
  r = sb:editor{ command = "view", path = tmp .. "/f", view_range = { 1 } }
  T.eq(r.output, "Invalid `view_range`. It should be a list of two integers.")
  T.eq(r.exit_code, 11)
  r = sb:editor{ command = "view", path = tmp .. "/f", view_range = { 1, 4 } }
  T.eq(r.exit_code, 13)
  r = sb:editor{ command = "insert", path = tmp .. "/f", insert_line = 4, new_str = "x" }
  T.eq(r.output, "Invalid `insert_line` parameter: 4. It should be within the range of lines of the file: [0, 3]")
  r = sb:editor{ command = "str_replace", path = tmp .. "/f", old_str = "\n" }
  T.eq(r.output, "No replacement was performed. Multiple occurrences of old_str `\n` in lines []. Please ensure it is unique")
  T.eq(sb:read_file{ path = tmp .. "/f" }.content, "1\n2\n3") -- nothing changed
  r = sb:editor{ command = "frobnicate", path = tmp .. "/f" }
  T.eq(r.exit_code, 5)
end)

T.test("malformed requests raise invalid_argument", function()
  T.raises("invalid_argument", sb.editor, sb, { path = tmp .. "/f" })
  T.raises("invalid_argument", sb.editor, sb, { command = "view" })
  T.raises("invalid_argument", sb.editor, sb, { command = 1, path = tmp .. "/f" })
  T.raises("invalid_argument", sb.editor, sb, { command = "insert", path = tmp .. "/f", insert_line = { 1 }, new_str = "" })
  T.raises("invalid_argument", sb.editor, sb, { command = "view", path = tmp .. "/f", view_range = print })
  -- the rocklet itself, with what sandbox.lua would not send
  T.raises("invalid_argument", call, { command = { "view" }, path = tmp .. "/f" })
  T.raises("invalid_argument", call, { command = "str_replace", path = tmp .. "/f", old_str = 1 })
  T.raises("invalid_argument", call, { command = "insert", path = tmp .. "/f", insert_line = { 1 }, new_str = "" })
  T.raises("invalid_argument", call, { command = "view", path = tmp .. "/f\0x" })
  local long = "/" .. string.rep("d", 5000) -- past PATH_MAX: no message quotes it
  T.match(T.raises("invalid_argument", call, { command = "view", path = long }).message, "PATH_MAX")
  local r = call({ command = "view", path = tmp .. "/f", view_range = { 1, "x" } })
  T.eq(r.exit_code, 11)
  r = call({ command = "view", path = tmp .. "/f", view_range = { 1.5, 2 } })
  T.eq(r.exit_code, 11)
  T.eq(sb:read_file{ path = tmp .. "/f" }.content, "1\n2\n3")
end)

T.test("unicode, latin-1 and clipping counted in characters", function()
  local p = tmp .. "/u.txt"
  sb:write_file{ path = p, content = "caf\u{e9} \u{2713} \u{1F680}\n" }
  local r = sb:editor{ command = "str_replace", path = p, old_str = "\u{2713} \u{1F680}", new_str = "\u{fc}" }
  T.eq(r.exit_code, 0)
  T.eq(sb:read_file{ path = p }.content, "caf\u{e9} \u{fc}\n")
  local l1 = tmp .. "/latin1.txt"
  sb:write_file{ path = l1, content = "na\xefve\n" }
  r = sb:editor{ command = "view", path = l1 }
  T.eq(r.output, view_text(l1, { "na\u{ef}ve", "" }))
  sb:editor{ command = "str_replace", path = l1, old_str = "na\u{ef}ve", new_str = "\u{e9}t\u{e9}" }
  T.eq(sb:read_file{ path = l1, binary = true }.content, "\xe9t\xe9\n") -- still latin-1
  sb:write_file{ path = p, content = string.rep("\u{e9}", 20000) }
  r = sb:editor{ command = "view", path = p }
  local note = "<response clipped><NOTE>To save on context only part of this file has been " ..
    "shown to you. You should retry this tool after you have searched inside the file with " ..
    "`grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
  T.eq(r.output, "Here's the result of running `cat -n` on " .. p .. ":\n     1\t" ..
    string.rep("\u{e9}", 16000) .. note .. "\n")
end)

T.test("a FIFO does not block the rocklet", function()
  local f = tmp .. "/fifo"
  T.eq(sb:execute{ command = applet("mkfifo") .. " " .. f }.exit_code, 0)
  local r = sb:editor{ command = "view", path = f }
  T.eq(r.exit_code, 19)
  T.match(r.output, "is not a regular file")
  r = sb:editor{ command = "create", path = f, file_text = "x" }
  T.eq(r.exit_code, 8)
  T.eq(sb:is_alive(), true)
end)

T.test("a directory view lists what find lists", function()
  local d = tmp .. "/tree"
  for _, f in ipairs{ "f1", "a/f2", "a/b/f3", "a/b/c/f4", ".env", "a/.h", ".git/x/y", "z/q r" } do
    sb:write_file{ path = d .. "/" .. f, content = "" }
  end
  local r = sb:editor{ command = "view", path = d }
  T.eq(r.exit_code, 0)
  local gnu = sb:execute{ command = "find --version" }.exit_code == 0
  if gnu then -- the listing is GNU find's (busybox's find is not the reference)
    local found = sb:execute{ command = { "find", d, "-maxdepth", "2", "-not", "-path", "*/\\.*" } }
    T.eq(found.exit_code, 0)
    T.eq(r.output, "Here's the files and directories up to 2 levels deep in " .. d ..
      ", excluding hidden items:\n" .. found.stdout .. "\n")
  end
  T.match(r.output, "\n" .. d:gsub("%p", "%%%0") .. "/a/b\n")
  T.ok(not r.output:find("/a/b/c", 1, true), "depth 3 left out")
  T.ok(not r.output:find("/.", 1, true), "hidden left out")
  r = sb:editor{ command = "view", path = d, view_range = { 1, 2 } }
  T.eq(r.exit_code, 10)
  r = sb:editor{ command = "insert", path = d, insert_line = 0, new_str = "" }
  T.eq(r.exit_code, 9)
end)

T.test("a NUL in old_str, new_str or file_text is refused, not cut", function()
  local p = tmp .. "/nul.txt"
  sb:write_file{ path = p, content = "abc\nabd\n" }
  -- cut at the NUL, old_str would be "ab" (twice) or "abc" (once: a wrong edit)
  T.raises("invalid_argument", sb.editor, sb, { command = "str_replace", path = p,
    old_str = "abc\0zzz", new_str = "X" })
  T.raises("invalid_argument", sb.editor, sb, { command = "str_replace", path = p,
    old_str = "abc", new_str = "keep\0lost" })
  T.raises("invalid_argument", sb.editor, sb, { command = "insert", path = p, insert_line = 0,
    new_str = "keep\0lost" })
  T.eq(sb:read_file{ path = p }.content, "abc\nabd\n", "unchanged")
  local err = T.raises("invalid_argument", sb.editor, sb, { command = "create", path = tmp .. "/nul2.txt",
    file_text = "keep\0lost" })
  T.match(err.message, "file_text")
  T.eq(select(2, pcall(sb.read_file, sb, { path = tmp .. "/nul2.txt" })).code, "not_found", "nothing created")
  T.raises("invalid_argument", call, { command = "view", path = p, cwd = "/\0" })
end)

local USAGE = "usage: str_replace_editor [-h] [--file_text FILE_TEXT]\n" ..
  "                          [--view_range VIEW_RANGE VIEW_RANGE]\n" ..
  "                          [--old_str OLD_STR] [--new_str NEW_STR]\n" ..
  "                          [--insert_line INSERT_LINE]\n" ..
  "                          command path\n" ..
  "str_replace_editor: error: argument --insert_line: invalid int value: "

T.test("insert_line and view_range as SWE-agent's argparse takes them", function()
  local p = tmp .. "/ap.txt"
  sb:write_file{ path = p, content = "a\nb\n" }
  local function insert(line) return sb:editor{ command = "insert", path = p, insert_line = line, new_str = "x" } end
  T.eq(insert("1").exit_code, 0) -- int("1"): SWE-agent's argparse takes it
  T.eq(insert(" +2 ").exit_code, 0)
  T.eq(insert(3.0).exit_code, 0) -- cjson reads every JSON number as a float
  T.eq(sb:read_file{ path = p }.content, "a\nx\nx\nx\nb\n")
  for v, shown in pairs{ ["1.0"] = "'1.0'", [1.5] = "'1.5'", [true] = "'True'", ["it's"] = "\"it's\"",
                          [""] = "''", ["0.1"] = "'0.1'" } do
    local r = insert(v)
    T.eq(r.output, USAGE .. shown, tostring(v))
    T.eq(r.exit_code, 2)
    T.eq(r.error, true)
  end
  T.eq(insert(0.1 + 0.2).output, USAGE .. "'0.30000000000000004'") -- Python's repr of the float
  T.eq(sb:read_file{ path = p }.content, "a\nx\nx\nx\nb\n", "unchanged")
  local r = sb:editor{ command = "view", path = p, view_range = { "2", " 3" } }
  T.eq(r.output, view_text(p, { "x", "x" }, 2))
  for _, vr in ipairs{ "1,2", 5, true, { 1, "x" }, { 1.5, 2 }, { 1, 2, 3 }, { a = 1, b = 2 } } do
    r = sb:editor{ command = "view", path = p, view_range = vr }
    T.eq(r.output, "Invalid `view_range`. It should be a list of two integers.", cjson.encode(vr))
    T.eq(r.exit_code, 11)
  end
  -- JSON numbers straight to the rocklet: 1.0 is an integer, 2.5 is not
  local body = cjson.encode{ command = "insert", path = p, new_str = "w" }:gsub("}$", ',"insert_line":%%s}')
  local status, a = post(body:format("1.0"))
  T.eq(status, 200)
  T.eq(a.exit_code, 0)
  status, a = post(body:format("2.5e0"))
  T.eq(a.output, USAGE .. "'2.5'")
  status, a = post(body:format("1e20"))
  T.eq(a.output, USAGE .. "'1e+20'")
  status, a = post(body:format('"99999999999999999999"')) -- int() has no bound
  T.eq(a.output, "Invalid `insert_line` parameter: 99999999999999999999. It should be within " ..
    "the range of lines of the file: [0, 7]")
  status, a = post(body:format("[1]"))
  T.eq(status, 400)
  T.eq(a.code, "invalid_argument")
  T.eq(sb:read_file{ path = p }.content, "a\nw\nx\nx\nx\nb\n")
end)

-- A 30 MB file of 7.5 million "foo" lines, then UNIQUE.
local function big_file(s, p)
  local yes, head = applet("yes"), applet("head")
  T.eq(s:execute{ command = yes .. " foo | " .. head .. " -n 7500000 > " .. p .. " && echo UNIQUE >> " .. p }.exit_code, 0)
end
local MANY = "No replacement was performed. Multiple occurrences of old_str `foo` in lines [" ..
  (function() local t = {} for i = 1, 100 do t[i] = tostring(i) end return table.concat(t, ", ") end)() ..
  "] and 7499900 more lines. Please ensure it is unique"

T.test("a 30 MB edit runs off the loop: /is_alive and a command never wait on it", function()
  local p = tmp .. "/big30.txt"
  big_file(sb, p)
  local done, worst, polls = false, 0, 0
  local edits = rock.spawn(function()
    local rs = {}
    for i = 1, 3 do rs[i] = sb:editor{ command = "str_replace", path = p, old_str = "foo", new_str = "bar" } end
    rs[4] = sb:editor{ command = "str_replace", path = p, old_str = "UNIQUE", new_str = "DONE" }
    done = true
    return rs
  end)
  local poll = rock.spawn(function()
    while not done do
      local t0 = rock.uv.hrtime()
      T.eq(rocklet.call(sb.socket, "/is_alive", {}, 30).is_alive, true)
      worst = math.max(worst, seconds_since(t0))
      polls = polls + 1
      rock.sleep(0.005)
    end
  end)
  local cmd = rock.spawn(function()
    local slowest = 0
    while not done do
      local t0 = rock.uv.hrtime()
      T.eq(sb:execute{ command = "echo hi" }.stdout, "hi\n")
      slowest = math.max(slowest, seconds_since(t0))
    end
    return slowest
  end)
  local rs = rock.wait(edits)
  rock.wait(poll)
  local slowest = rock.wait(cmd)
  T.ok(polls >= 3, "polled while the edits ran")
  T.ok(worst < 0.5, string.format("/is_alive waited %.3f s", worst))
  T.ok(slowest < 1, string.format("a command took %.3f s", slowest))
  for i = 1, 3 do
    T.eq(rs[i].exit_code, 16)
    T.eq(rs[i].output, MANY) -- bounded: not 7.5 million line numbers
  end
  T.eq(rs[4].exit_code, 0)
  T.match(rs[4].output, "\n7500001\tDONE\n")
  local r = sb:editor{ command = "undo_edit", path = p } -- the history holds the 30 MB step
  T.eq(r.exit_code, 0)
  T.eq(sb:execute{ command = applet("tail") .. " -n 2 " .. p }.stdout, "foo\nUNIQUE\n")
  T.eq(sb:editor{ command = "undo_edit", path = p }.exit_code, 18)
end)

T.test("calls at once: on one path one at a time, in turn; on several paths too", function()
  local p = tmp .. "/conc.txt"
  sb:write_file{ path = p, content = "base\n" }
  local tasks = {}
  for i = 1, 16 do
    tasks[i] = rock.spawn(function()
      return sb:editor{ command = "insert", path = p, insert_line = 0, new_str = "l" .. i }
    end)
  end
  local vals, errs = rock.wait(tasks)
  for i = 1, 16 do
    T.eq(errs[i], nil)
    T.eq(vals[i].exit_code, 0)
  end
  local seen, n = {}, 0
  for l in sb:read_file{ path = p }.content:gmatch("[^\n]+") do seen[l] = true; n = n + 1 end
  T.eq(n, 17, "no insert lost")
  for i = 1, 16 do T.ok(seen["l" .. i], "l" .. i) end
  for _ = 1, 16 do T.eq(sb:editor{ command = "undo_edit", path = p }.exit_code, 0) end
  T.eq(sb:read_file{ path = p }.content, "base\n")
  T.eq(sb:editor{ command = "undo_edit", path = p }.exit_code, 18)
  -- several paths, and views and errors among the edits
  for i = 1, 8 do sb:write_file{ path = tmp .. "/c" .. i, content = "v0\n" } end
  tasks = {}
  for i = 1, 8 do
    tasks[#tasks + 1] = rock.spawn(function()
      return sb:editor{ command = "str_replace", path = tmp .. "/c" .. i, old_str = "v0", new_str = "v" .. i }
    end)
    tasks[#tasks + 1] = rock.spawn(function() return sb:editor{ command = "view", path = tmp .. "/c" .. i } end)
    tasks[#tasks + 1] = rock.spawn(function() return sb:editor{ command = "view", path = tmp .. "/nope" .. i } end)
  end
  vals, errs = rock.wait(tasks)
  for i = 1, 8 do
    T.eq(vals[3 * i - 2].exit_code, 0)
    T.eq(vals[3 * i - 1].exit_code, 0)
    T.eq(vals[3 * i].exit_code, 7)
    T.eq(sb:read_file{ path = tmp .. "/c" .. i }.content, "v" .. i .. "\n")
  end
  for i = 1, 8 do
    T.eq(sb:editor{ command = "undo_edit", path = tmp .. "/c" .. i }.exit_code, 0)
    T.eq(sb:read_file{ path = tmp .. "/c" .. i }.content, "v0\n")
  end
end)

T.test("a client gone mid-call: the rocklet goes on, file and history agree", function()
  local p = tmp .. "/big30.txt"
  local body = cjson.encode{ command = "str_replace", path = p, old_str = "UNIQUE", new_str = "GONE" }
  T.eq(select(2, pcall(post, body, 0.02)).code, "timeout") -- hangs up mid-edit
  local t0 = rock.uv.hrtime()
  T.eq(rocklet.call(sb.socket, "/is_alive", {}, 30).is_alive, true)
  T.ok(seconds_since(t0) < 0.5, "answered at once")
  -- a call after it waits its turn, then sees what it did
  local last = sb:editor{ command = "view", path = p, view_range = { 7500001, 7500001 } }.output
  local undo = sb:editor{ command = "undo_edit", path = p }
  if last:find("GONE", 1, true) then T.eq(undo.exit_code, 0) else T.eq(undo.exit_code, 18) end
  T.eq(sb:execute{ command = applet("tail") .. " -n 1 " .. p }.stdout, "UNIQUE\n")
  sb:execute{ command = "rm " .. p }
end)

T.test("/close while an edit runs: its answer comes, calls waiting are told, the rocklet ends", function()
  local s2 = rock.sandbox.start(T.sandbox_opts())
  local dir = s2.backend == "local" and T.scratch(s2) or "/tmp"
  local p = dir .. "/big30.txt"
  big_file(s2, p)
  local running = rock.spawn(function()
    return s2:editor{ command = "str_replace", path = p, old_str = "foo", new_str = "bar" }
  end)
  rock.sleep(0.05)
  local waiting = rock.spawn(function() return pcall(s2.editor, s2, { command = "view", path = p }) end)
  rock.sleep(0.01)
  pcall(rocklet.call, s2.socket, "/close", {}, 30)
  local r = rock.wait(running)
  T.eq(r.exit_code, 16)
  T.eq(r.output, MANY)
  local ok, err = rock.wait(waiting)
  T.ok(not ok, "a call waiting behind it is not run")
  T.eq(err.code, "sandbox_not_alive")
  local deadline = rock.uv.hrtime() + 10e9
  while s2:is_alive() and rock.uv.hrtime() < deadline do rock.sleep(0.05) end
  T.eq(s2:is_alive(), false, "the rocklet ended")
  s2:stop()
end)

sb:stop() -- the scratch dir goes with the sandbox
T.done()
