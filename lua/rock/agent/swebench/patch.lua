--- rock.agent.swebench.patch: what a patch may touch, read the way git and
-- GNU patch read its file headers.
--   patch.unquote('"b/\\056git/x"')   -- "b/.git/x" (git's C quoting)
--   patch.unsafe_path(text)           -- the first path inside .git or out of the repo, or nil
--   patch.has_symlink(text)           -- whether it makes or changes a symlink
-- git apply refuses paths in .git and beyond symlinks itself; GNU patch,
-- SWE-bench's last apply attempt, decodes git's quoted names and writes
-- where they point, so a hook in .git/hooks, or a config that runs a
-- command, would be installed, and every later git command would run it.
-- rock checks every name a header gives (decoded), in every header shape
-- GNU patch honours (indented, RFC 934 "- ", context `***`/`---`, `Index:`,
-- names ending at a tab or a timestamp), and never hands a patch with a
-- symlink to GNU patch (which follows one into .git). Linear time:
-- plain finds and anchored matches only.
local errors = require "rock.errors"

local M = {}

local ESC = { a = "\a", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", v = "\v", ['"'] = '"', ["\\"] = "\\" }

--- Decode a name in git's C-style quotes ("a/\\303\\251.py", octal and C
--- escapes). A name that does not start with a quote is returned as is.
--- Returns the name and the rest of the text after the closing quote, or
--- nil and a message for a malformed quoted name.
---@param s string
---@return string|nil name, string rest_or_error
function M.unquote(s)
  if s:sub(1, 1) ~= '"' then return s, "" end
  local out, i, n = {}, 2, #s
  while i <= n do
    local c = s:sub(i, i)
    if c == '"' then return table.concat(out), s:sub(i + 1) end
    if c == "\\" then
      local d = s:sub(i + 1, i + 1)
      local oct = s:match("^[0-7][0-7]?[0-7]?", i + 1)
      if oct then
        local v = tonumber(oct, 8)
        if v > 255 then return nil, "bad octal escape in " .. s end
        out[#out + 1] = string.char(v)
        i = i + 1 + #oct
      elseif ESC[d] then
        out[#out + 1] = ESC[d]
        i = i + 2
      else
        return nil, "bad escape \\" .. d .. " in a quoted name"
      end
    else
      local j = s:find('["\\]', i)
      if not j then break end
      out[#out + 1] = s:sub(i, j - 1)
      i = j
    end
  end
  return nil, "unterminated quoted name"
end

-- does this name have a ".git" or ".." component? Unquoted names are split
-- on white space too: GNU patch ends a name at any (isspace), git at " b/".
local function bad_name(name, quoted)
  local sep = quoted and "[^/]+" or "[^/%s]+"
  for part in name:gmatch(sep) do
    if part == ".." or part:lower() == ".git" then return true end
  end
  return false
end

-- every name on a header line's rest: quoted ones decoded
local function check_names(rest)
  while true do
    local b = rest:find("[^ \t]")
    if not b then return nil end
    rest = rest:sub(b)
    if rest:sub(1, 1) == '"' then
      local name, more = M.unquote(rest)
      if not name then return rest, more end
      if name ~= "/dev/null" and bad_name(name, true) then return name end
      rest = more
    else
      local q = rest:find('"', 1, true)
      local plain = q and rest:sub(1, q - 1) or rest
      plain = plain:gsub("\t.*", "")
      if plain ~= "/dev/null" and bad_name(plain, false) then
        local e = #plain
        while e > 0 and (plain:byte(e) == 32 or plain:byte(e) == 9) do e = e - 1 end
        return plain:sub(1, e)
      end
      if not q then return nil end
      rest = rest:sub(q)
    end
  end
end

--- The line counts of a unified hunk header "@@ -a[,b] +c[,d] @@", or nil
--- (a count left out is 1). Read by hand: a pattern with two digit runs
--- would backtrack over a long one.
function M.hunk_counts(line)
  if line:sub(1, 4) ~= "@@ -" then return nil end
  local i, n = 5, #line
  local function num()
    local j = i
    while j <= n and line:byte(j) >= 48 and line:byte(j) <= 57 do j = j + 1 end
    if j == i then return nil end
    local v = line:sub(i, j - 1)
    i = j
    return v
  end
  local function count()
    if not num() then return nil end
    if line:sub(i, i) == "," then
      i = i + 1
      return num()
    end
    return "1"
  end
  local old = count()
  if not old or line:sub(i, i + 1) ~= " +" then return nil end
  i = i + 2
  local new = count()
  if not new or line:sub(i, i + 2) ~= " @@" then return nil end
  return tonumber(old) or 1, tonumber(new) or 1
end

local HEADERS = { "diff --git ", "--- ", "+++ ", "*** ", "Index:", "rename from ", "rename to ",
  "copy from ", "copy to ", "Prereq:" }

-- a line as GNU patch reads a header in it: without the indent it allows
-- (spaces, tabs and 'X's: "Patch is indented N spaces") and RFC 934's
-- "- " encapsulation, in any order and number (more than patch takes:
-- a refusal too many is safe, a header missed is not)
local function unindent(line)
  local i, n = 1, #line
  while i <= n do
    local c = line:byte(i)
    if c == 32 or c == 9 or c == 88 then i = i + 1 -- ' ', '\t', 'X'
    elseif c == 45 and line:byte(i + 1) == 32 then i = i + 2 -- "- "
    else break end
  end
  return i == 1 and line or line:sub(i)
end

-- walk the header lines of a patch (hunk bodies skipped by their counts);
-- fn(line) returns a value to stop with
local function each_header(patch, fn)
  local old, new = 0, 0 -- lines left in the current unified hunk
  local pos, n = 1, #patch
  while pos <= n do
    local nl = patch:find("\n", pos, true) or n + 1
    local line = patch:sub(pos, nl - 1)
    pos = nl + 1
    if line:sub(-1) == "\r" then line = line:sub(1, -2) end
    local c = line:sub(1, 1)
    if (old > 0 or new > 0) and (c == " " or c == "" or c == "-" or c == "+" or c == "\\") then
      if c == "-" then old = old - 1
      elseif c == "+" then new = new - 1
      elseif c ~= "\\" then old, new = old - 1, new - 1 end
    else
      old, new = 0, 0
      local a, b = M.hunk_counts(line)
      if a then
        old, new = a, b
      else
        local r = fn(line)
        if r then return r end
      end
    end
  end
  return nil
end

--- The first name a patch's headers give (`diff --git`, `---`, `+++`,
--- `***`, `Index:`, `rename`/`copy from`/`to`, `Prereq:`; git's quoted
--- names decoded; indented or RFC 934 "- " headers read as GNU patch
--- reads them; unified hunk lines skipped by their counts, as both tools
--- do) with a `.git` component (any case) or a `..` component, or nil.
--- Every blank-separated word of an unquoted name is checked (GNU patch
--- ends a name at white space, git at " b/", and a timestamp follows a
--- tab). A quoted name that does not decode is returned too (no tool
--- could be trusted to read it as rock does).
---@param patch string
---@return string|nil path
function M.unsafe_path(patch)
  if type(patch) ~= "string" then
    errors.raise("invalid_argument", "unsafe_path: 'patch' must be a string")
  end
  return each_header(patch, function(line)
    line = unindent(line)
    for _, h in ipairs(HEADERS) do
      if line:sub(1, #h) == h then return check_names(line:sub(#h + 1)) end
    end
    return nil
  end)
end

--- Whether the patch makes, changes or removes a symlink (mode 120000 in
--- a git header): GNU patch follows a symlink the same patch made, into
--- .git or anywhere, so such a patch is only ever given to git apply.
---@param patch string
---@return boolean
function M.has_symlink(patch)
  return each_header(patch, function(line)
    line = unindent(line)
    if line:match("^new file mode 120000") or line:match("^deleted file mode 120000")
      or line:match("^new mode 120000") or line:match("^old mode 120000")
      or line:match("^index %x+%.%.%x+ 120000") then
      return true
    end
    return nil
  end) == true
end

return M
