-- test_editor.lua: sb:editor (the rocklet's str_replace_editor) through the
-- Lua API, in a scratch dir only. ctest runs it on the local backend and in
-- containers (docker: rock-test/debian:12, and rock-test/busybox:1, which
-- has no python and no bash); every message is checked in
-- tests/rocklet/test_editor.c, these check the wire and the sandbox.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local rocklet = require "rock.rocklet"

local sb = rock.sandbox.start(T.sandbox_opts())
-- made by write_file: rock-test/busybox:1 links few applets (no mkdir)
local tmp = (sb.backend == "local" and T.scratch(sb) or "/tmp") .. "/ed"
sb:write_file{ path = tmp .. "/.keep", content = "" }
-- a busybox applet that has no link of its own
local function applet(name)
  return sb:execute{ command = "command -v " .. name }.exit_code == 0 and name or "busybox " .. name
end
local function call(body) return rocklet.call(sb.socket, "/editor", body, 30) end

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
  T.raises("invalid_argument", sb.editor, sb, { command = "insert", path = tmp .. "/f", insert_line = 1.5, new_str = "" })
  T.raises("invalid_argument", sb.editor, sb, { command = "insert", path = tmp .. "/f", insert_line = "1", new_str = "" })
  T.raises("invalid_argument", sb.editor, sb, { command = "view", path = tmp .. "/f", view_range = "1,2" })
  -- the rocklet itself, with what sandbox.lua would not send
  T.raises("invalid_argument", call, { command = { "view" }, path = tmp .. "/f" })
  T.raises("invalid_argument", call, { command = "str_replace", path = tmp .. "/f", old_str = 1 })
  T.raises("invalid_argument", call, { command = "insert", path = tmp .. "/f", insert_line = "1", new_str = "" })
  T.raises("invalid_argument", call, { command = "view", path = tmp .. "/f\0x" })
  local r = call({ command = "view", path = tmp .. "/f", view_range = { 1, "2" } })
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

sb:stop() -- the scratch dir goes with the sandbox
T.done()
