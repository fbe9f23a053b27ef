-- test_grading_hostile2.lua: a patch whose hunks target .git in any
-- header shape GNU patch honours (indented by spaces, tabs or 'X's, RFC
-- 934 "- " encapsulation, a context diff's ***/--- pair, `Index:` with or
-- without a blank, names ending at a tab or a timestamp) is refused. Each
-- shape is first run through the real `patch --dry-run` (SWE-bench's
-- command line) to prove it WOULD write under .git; then rock refuses it,
-- and one of them is graded end to end on the local backend (no hook).
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local tasks = require "rock.agent.tasks"
local grading = require "rock.agent.grading"
local spatch = require "rock.agent.swebench.patch"

local here = arg[0]:match("(.*/)")
local demo = here .. "../../recipes/demo/"
local tmp = T.sh("mktemp -d /tmp/rock-grading-hostile2.XXXXXX"):gsub("%s+$", "")
T.ok(tmp:match("^/tmp/rock%-grading%-hostile2%."), "temp dir made")

local q = T.q
local sh = T.must

-- a git repo with its sample hooks, for patch --dry-run to look into
local repo = tmp .. "/repo"
sh("git init -q " .. q(repo) .. " && printf 'x\\n' > " .. q(repo .. "/x.txt"))
local hook = ".git/hooks/post-checkout"
local sample = ".git/hooks/pre-commit.sample"
T.ok(T.read(repo .. "/" .. sample), "git made its sample hooks")

-- the file GNU patch would write: SWE-bench's own command line, dry run
local function patch_target(p)
  T.write(tmp .. "/p.diff", p)
  local out = T.sh("cd " .. q(repo) .. " && patch --dry-run --batch --forward --fuzz=5 -p1 -i " ..
    q(tmp .. "/p.diff") .. " 2>&1")
  return out:match("checking file ([^\n]*)"), out
end

local ADD = "@@ -0,0 +1 @@\n+echo hooked\n"
local EDIT = "@@ -1 +1 @@\n-#!/bin/sh\n+echo hooked\n"
local function indent(p, by) return (p:gsub("[^\n]+", function(l) return by .. l end)) end
local plain_new = "--- /dev/null\n+++ b/" .. hook .. "\n" .. ADD
local plain_old = "--- a/" .. sample .. "\n+++ b/nonexistent\n" .. EDIT

local SHAPES = {
  { "indented by spaces", indent(plain_new, "  "), hook },
  { "indented by a tab", indent(plain_new, "\t"), hook },
  { "indented by 'X'", indent(plain_new, "X"), hook },
  { "RFC 934 '- ' on the --- line", "- --- a/" .. sample .. "\n+++ b/nonexistent\n" .. EDIT, sample },
  { "indented, then RFC 934", indent("- --- a/" .. sample .. "\n+++ b/nonexistent\n" .. EDIT, "  "), sample },
  { "the old name only", plain_old, sample },
  { "a context diff's ***/--- pair", "*** /dev/null\n--- b/" .. hook ..
    "\n***************\n*** 0 ****\n--- 1 ----\n+ echo hooked\n", hook },
  { "Index: with a blank", "Index: x/" .. hook .. "\n" .. ADD, hook },
  { "Index: without a blank", "Index:x/" .. hook .. "\n" .. ADD, hook },
  { "names with tabs and timestamps", "--- /dev/null\t2020-01-01 00:00:00\n+++ b/" .. hook ..
    "\t2020-01-01 00:00:00.000000000 +0000\n" .. ADD, hook },
  { "a name ending at a carriage return", "--- /dev/null\n+++ b/" .. hook .. "\r\n" .. ADD, hook },
  { "-p1 stripping a first component that is .git itself", "--- /dev/null\n+++ .git/" .. hook .. "\n" .. ADD, hook },
  { "doubled slashes", "--- /dev/null\n+++ b//.git//hooks/post-checkout\n" .. ADD, ".git//hooks/post-checkout" },
}

T.test("every header shape GNU patch would write under .git is refused", function()
  for _, s in ipairs(SHAPES) do
    local what, p, want = s[1], s[2], s[3]
    local target, out = patch_target(p)
    T.eq(target, want, what .. ": GNU patch would write under .git\n" .. out)
    T.ok(spatch.unsafe_path(p), what .. ": rock refuses it")
  end
  -- what patch writes inside the repo stays allowed, in the same shapes
  for _, p in ipairs({ indent("--- /dev/null\n+++ b/new.txt\n" .. ADD, "  "),
    "- --- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-x\n+y\n",
    "Index: x.txt\n--- a/x.txt\t2020-01-01\n+++ b/x.txt\t2020-01-01\n@@ -1 +1 @@\n-x\n+y\n",
    "*** a/x.txt\n--- b/x.txt\n***************\n*** 1 ****\n! x\n--- 1 ----\n! y\n" }) do
    T.eq(spatch.unsafe_path(p), nil, "allowed: " .. p)
    T.ok(patch_target(p), "GNU patch reads it: " .. p)
  end
  -- a symlink made by an indented git header is seen too
  T.ok(spatch.has_symlink(indent("diff --git a/l b/l\nnew file mode 120000\n", "  ")))
  -- still linear: 1 MB of indent and encapsulation
  local t0 = os.clock()
  spatch.unsafe_path(string.rep(" ", 500000) .. string.rep("- ", 250000) .. "+++ x\n")
  spatch.unsafe_path(string.rep("X- \t--- a\n", 100000))
  T.ok(os.clock() - t0 < 2, "1 MB of indents read in " .. (os.clock() - t0) .. " s")
end)

T.test("an indented hook patch is graded unresolved and installs nothing", function()
  local calc
  for _, t in ipairs(tasks.load(demo .. "tasks.jsonl")) do
    if t.repo == "demo/calc" then calc = t end
  end
  local t = {}
  for k, v in pairs(calc) do t[k] = v end
  t.repo_dir = tmp .. "/calc"
  sh(q(demo .. "make-repo") .. " calc " .. q(t.repo_dir))
  local ran = tmp .. "/hook-ran"
  local evil = indent("--- /dev/null\n+++ b/" .. hook .. "\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+touch " .. ran .. "\n", "  ")
  local sb = rock.sandbox.start{ backend = "local" }
  local r = grading.evaluate(sb, t, evil)
  sb:stop()
  T.eq(r.status, "unresolved", tostring(r.report and r.report.reason))
  T.ok(not r.applied, "not applied")
  T.match(r.apply_output, "a path inside %.git")
  T.eq(T.read(t.repo_dir .. "/" .. hook), nil, "no hook installed")
  T.eq(T.read(ran), nil, "no hook ran")
end)

sh("rm -rf " .. q(tmp))
T.done()
