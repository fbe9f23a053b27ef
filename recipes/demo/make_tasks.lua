-- make_tasks.lua: write recipes/demo/tasks.jsonl, the demo tasks in
-- SWE-bench's fields, from the repos (repos/NAME, the base state), the
-- patches (patches/NAME.gold.diff, patches/NAME.test.diff) and the lists
-- below; base_commit is what make-repo makes (fixed names and dates).
-- Also writes replay-solve.jsonl and replay-fail.jsonl (the REPLAYS below:
-- an agent's actions that solve each task, and actions that do not).
--   rock recipes/demo/make_tasks.lua [--out FILE] [--check]
-- --check compares with the files instead of writing them (exit 1 if stale).
local rock = require "rock"

local here = arg[0]:match("(.*/)") or "./"
local opts = rock.flags.parse(arg, {
  out = { default = here .. "tasks.jsonl", help = "where to write" },
  check = { type = "boolean", help = "only compare with --out" },
}, "rock recipes/demo/make_tasks.lua [--out FILE] [--check]")

local TASKS = {
  { name = "calc",
    problem_statement = [[
evaluate() rejects decimal numbers

`calc.evaluate("2.5 * 2")` raises `TokenError: unexpected character '.' at 1`
instead of returning 5.0. Decimal literals such as `0.5` should be accepted
(and give floats), while a malformed one such as `1.2.3` should raise
`ParseError`, like any other malformed expression.
]],
    FAIL_TO_PASS = { "tests/test_calc.py::test_decimals", "tests/test_calc.py::test_malformed_decimal" },
    PASS_TO_PASS = { "tests/test_calc.py::test_integers", "tests/test_calc.py::test_precedence",
      "tests/test_calc.py::test_parentheses", "tests/test_calc.py::test_unary_minus",
      "tests/test_calc.py::test_bad_character", "tests/test_calc.py::test_unbalanced" } },
  { name = "textutil",
    problem_statement = [[
slugify leaves repeated separators

`textutil.slugify("Hello, World!")` gives `"hello--world"`: every character
that is not a letter or a digit becomes a separator, so a comma followed by a
space makes two. A run of such characters should give one separator
(`"hello-world"`), with a custom `sep` too (`slugify("a  b", sep="_")` should
be `"a_b"`).
]],
    FAIL_TO_PASS = { "tests/test_slugify.py::test_punctuation_collapses",
      "tests/test_slugify.py::test_custom_separator", "tests/test_slugify.py::test_titles[release-notes-v2]" },
    PASS_TO_PASS = { "tests/test_slugify.py::test_simple_word", "tests/test_slugify.py::test_accents",
      "tests/test_slugify.py::test_titles[what-is-new]" } },
  { name = "pager",
    problem_statement = [[
The last page is lost when items do not fill it

With 10 items and 3 per page, `page_count(10, 3)` returns 3 instead of 4, and
`paginate(items, 4, 3)` raises `IndexError: page 4 out of range` instead of
returning the last item. A partly filled last page should count as a page.
]],
    FAIL_TO_PASS = { "tests/test_pages.py::test_page_count_partial[11-5-3]",
      "tests/test_pages.py::test_page_count_partial[7-3-3]", "tests/test_pages.py::test_last_partial_page" },
    PASS_TO_PASS = { "tests/test_pages.py::test_page_count_exact[0-5-1]",
      "tests/test_pages.py::test_page_count_exact[10-5-2]", "tests/test_pages.py::test_page_count_exact[1-1-1]",
      "tests/test_pages.py::test_page_count_partial[1-2-1]", "tests/test_pages.py::test_first_page",
      "tests/test_pages.py::test_bad_per_page", "tests/test_pages.py::test_negative_page" } },
}

-- actions per task: {"bash", command} or {"str_replace", path, old, new}
local REPLAYS = {
  calc = {
    solve = {
      { "bash", "cd /testbed && grep -n isdigit calc/*.py" },
      { "str_replace", "/testbed/calc/tokens.py", "        elif ch.isdigit():\n",
        "        elif ch.isdigit() or ch == \".\":\n" },
      { "str_replace", "/testbed/calc/tokens.py", "while j < len(text) and text[j].isdigit():",
        "while j < len(text) and (text[j].isdigit() or text[j] == \".\"):" },
      { "str_replace", "/testbed/calc/evaluate.py",
        "        if not tok.isdigit():\n            raise ParseError(f\"expected a number, got {tok!r}\")\n" ..
        "        return int(tok)\n",
        "        try:\n            return float(tok) if \".\" in tok else int(tok)\n" ..
        "        except ValueError:\n            raise ParseError(f\"expected a number, got {tok!r}\") from None\n" },
      { "bash", "cd /testbed && python3 -c 'from calc import evaluate; print(evaluate(\"2.5 * 2\"))'" },
    },
    fail = { -- the tokenizer alone: int("2.5") still fails
      { "str_replace", "/testbed/calc/tokens.py", "        elif ch.isdigit():\n",
        "        elif ch.isdigit() or ch == \".\":\n" },
      { "str_replace", "/testbed/calc/tokens.py", "while j < len(text) and text[j].isdigit():",
        "while j < len(text) and (text[j].isdigit() or text[j] == \".\"):" },
    },
  },
  textutil = {
    solve = {
      { "bash", "cd /testbed && python3 -c 'from textutil import slugify; print(slugify(\"Hello, World!\"))'" },
      { "str_replace", "/testbed/textutil/slug.py", "re.sub(r\"[^a-z0-9]\", sep, text.lower())",
        "re.sub(r\"[^a-z0-9]+\", sep, text.lower())" },
    },
    fail = { -- strips more, collapses nothing
      { "str_replace", "/testbed/textutil/slug.py", "return text.strip(sep)", "return text.strip(sep + \" \")" },
    },
  },
  pager = {
    solve = {
      { "bash", "cat /testbed/pager/pages.py" },
      { "str_replace", "/testbed/pager/pages.py", "return max(1, total // per_page)",
        "return max(1, -(-total // per_page))" },
    },
    fail = { -- true division: 11 items on 5 a page give 2.2 pages
      { "str_replace", "/testbed/pager/pages.py", "return max(1, total // per_page)",
        "return max(1, total / per_page)" },
    },
  },
}

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local lines = {}
for _, t in ipairs(TASKS) do
  local tmp = os.tmpname()
  os.remove(tmp)
  local p = io.popen(sh_quote(here .. "make-repo") .. " " .. t.name .. " " .. sh_quote(tmp))
  local commit = rock.text.rtrim(p:read("a"))
  local ok = p:close()
  os.execute("rm -rf " .. sh_quote(tmp))
  assert(ok and commit:match("^%x+$") and #commit == 40, "make-repo " .. t.name .. " failed")
  -- keys in a fixed order, so the file only changes when its content does
  local fields = {
    { "instance_id", "demo__" .. t.name .. "-1" }, { "repo", "demo/" .. t.name },
    { "base_commit", commit }, { "problem_statement", t.problem_statement },
    { "patch", slurp(here .. "patches/" .. t.name .. ".gold.diff") },
    { "test_patch", slurp(here .. "patches/" .. t.name .. ".test.diff") },
    { "FAIL_TO_PASS", t.FAIL_TO_PASS }, { "PASS_TO_PASS", t.PASS_TO_PASS },
    { "image", "rock-demo/" .. t.name .. ":1" },
  }
  local parts = {}
  for _, kv in ipairs(fields) do
    parts[#parts + 1] = rock.json.encode(kv[1]) .. ":" .. rock.json.encode(kv[2])
  end
  lines[#lines + 1] = "{" .. table.concat(parts, ",") .. "}\n"
end

local function replay(kind)
  local out = {}
  for _, t in ipairs(TASKS) do
    local actions = {}
    for _, a in ipairs(REPLAYS[t.name][kind]) do
      if a[1] == "bash" then
        actions[#actions + 1] = '{"tool":"bash","command":' .. rock.json.encode(a[2]) .. "}"
      else
        actions[#actions + 1] = '{"tool":"str_replace_editor","command":"str_replace","path":' ..
          rock.json.encode(a[2]) .. ',"old_str":' .. rock.json.encode(a[3]) ..
          ',"new_str":' .. rock.json.encode(a[4]) .. "}"
      end
    end
    actions[#actions + 1] = '{"tool":"submit"}'
    out[#out + 1] = '{"instance_id":"demo__' .. t.name .. '-1","actions":[' ..
      table.concat(actions, ",") .. "]}\n"
  end
  return table.concat(out)
end

local outdir = opts.out:match("(.*/)") or "./"
local files = {
  { opts.out, table.concat(lines) },
  { outdir .. "replay-solve.jsonl", replay("solve") },
  { outdir .. "replay-fail.jsonl", replay("fail") },
}
local stale = false
for _, f in ipairs(files) do
  local path, text = f[1], f[2]
  if opts.check then
    local h = io.open(path, "rb")
    local old = h and h:read("a")
    if h then h:close() end
    if old ~= text then
      io.stderr:write("make_tasks: ", path, " is stale: run rock recipes/demo/make_tasks.lua\n")
      stale = true
    end
  else
    local h = assert(io.open(path, "wb"))
    h:write(text)
    h:close()
    print("make_tasks: wrote " .. path)
  end
end
if stale then os.exit(1) end
if opts.check then print("make_tasks: up to date") end
