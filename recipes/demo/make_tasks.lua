-- make_tasks.lua: write recipes/demo/tasks.jsonl, the demo tasks in
-- SWE-bench's fields, from the repos (repos/NAME, the base state), the
-- patches (patches/NAME.gold.diff, patches/NAME.test.diff) and the lists
-- below. base_commit is what make-repo makes (fixed names and dates).
--   rock recipes/demo/make_tasks.lua [--out FILE] [--check]
-- --check compares with the file instead of writing it (exit 1 if stale).
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
  local commit = p:read("a"):gsub("%s+$", "")
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
local text = table.concat(lines)

if opts.check then
  local f = io.open(opts.out, "rb")
  local old = f and f:read("a")
  if f then f:close() end
  if old ~= text then
    io.stderr:write("make_tasks: ", opts.out, " is stale: run rock recipes/demo/make_tasks.lua\n")
    os.exit(1)
  end
  print("make_tasks: " .. opts.out .. " is up to date")
else
  local f = assert(io.open(opts.out, "wb"))
  f:write(text)
  f:close()
  print(string.format("make_tasks: wrote %d tasks to %s", #TASKS, opts.out))
end
