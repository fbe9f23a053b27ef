-- test_flags.lua: rock.flags, the recipes' --flag parser (lua/rock/flags.lua),
-- and the recipes that use it answering --help and refusing unknown flags.
local rock = require "rock"
local T = dofile(arg[0]:match("(.*/)") .. "harness.lua")
local flags = rock.flags

local SPEC = {
  backend = { default = "local", help = "where" },
  image = {},
  concurrency = { type = "number", default = 4 },
  save = { type = "boolean" },
  max_output = { type = "number" },
}

T.test("defaults, --name value, --name=value, booleans, positional", function()
  local o, args = flags.parse({ "a", "--image", "debian:12", "--concurrency=8", "--save", "b",
    "--max-output", "100" }, SPEC)
  T.eq(o.backend, "local")
  T.eq(o.image, "debian:12")
  T.eq(o.concurrency, 8)
  T.eq(math.type(o.concurrency), "integer")
  T.eq(o.save, true)
  T.eq(o.max_output, 100, "--max-output sets max_output")
  T.eq(#args, 2)
  T.eq(args[1], "a")
  T.eq(args[2], "b")
  o = flags.parse({}, SPEC)
  T.eq(o.concurrency, 4)
  T.eq(o.save, nil)
  T.eq(o.image, nil)
end)

T.test("--no-flag, --flag=false, and -- ends the flags", function()
  local o, args = flags.parse({ "--no-save", "--", "--image", "x" }, SPEC)
  T.eq(o.save, false)
  T.eq(o.image, nil)
  T.eq(args[1], "--image")
  T.eq(args[2], "x")
  T.eq(flags.parse({ "--save=false" }, SPEC).save, false)
  T.eq(flags.parse({ "--save=1" }, SPEC).save, true)
  T.eq(flags.parse({ "--image=" }, SPEC).image, "", "an empty value is a value")
  T.eq(flags.parse({ "--image=a=b" }, SPEC).image, "a=b")
end)

T.test("a list flag: each use appends, none is an empty list", function()
  local spec = { sbatch_arg = { type = "list", help = "more" }, image = {} }
  local o = flags.parse({ "--sbatch-arg", "--exclusive", "--image", "x", "--sbatch-arg=--time=5" }, spec)
  T.eq(#o.sbatch_arg, 2)
  T.eq(o.sbatch_arg[1], "--exclusive")
  T.eq(o.sbatch_arg[2], "--time=5")
  T.eq(#flags.parse({}, spec).sbatch_arg, 0)
  T.match(T.raises("invalid_argument", flags.parse, { "--sbatch-arg" }, spec).message, "needs a value")
  T.match(flags.help(spec), "%-%-sbatch%-arg STRING %(again: more%)%s+more")
end)

T.test("errors: unknown flag, missing value, bad number, bad boolean", function()
  T.match(T.raises("invalid_argument", flags.parse, { "--bogus" }, SPEC).message,
    "unknown flag %-%-bogus")
  T.match(T.raises("invalid_argument", flags.parse, { "--image" }, SPEC).message,
    "%-%-image needs a value")
  T.match(T.raises("invalid_argument", flags.parse, { "--concurrency", "many" }, SPEC).message,
    "wants a number")
  T.raises("invalid_argument", flags.parse, { "--save=maybe" }, SPEC)
  T.raises("invalid_argument", flags.parse, { "--no-image" }, SPEC)
  T.raises("invalid_argument", flags.parse, nil, SPEC)
end)

T.test("help text lists every flag with its default", function()
  local h = flags.help(SPEC, "rock x.lua [flags]")
  T.match(h, "^usage: rock x.lua %[flags%]\n")
  T.match(h, "%-%-backend STRING%s+where %(default local%)")
  T.match(h, "%-%-concurrency NUMBER%s+%(default 4%)")
  T.match(h, "%-%-max%-output NUMBER")
  T.match(h, "%-%-save ")
  T.match(h, "%-%-help")
end)

T.test("recipes: --help exits 0 with the usage, an unknown flag fails", function()
  local exe = "ROCK_NO_GC=1 " .. T.rock_exe() -- no gc pass: not this test's business
  local recipes = arg[0]:match("(.*/)") .. "../../recipes/"
  for _, r in ipairs({ "smoke.lua", "warmup.lua", "group.lua" }) do
    local out, ok = T.sh(exe .. " " .. recipes .. r .. " --help")
    T.ok(ok, r .. " --help exits 0: " .. out)
    T.match(out, "^usage: rock recipes/" .. r)
    out, ok = T.sh(exe .. " " .. recipes .. r .. " --bogus")
    T.ok(not ok, r .. " --bogus fails")
    T.match(out, "unknown flag %-%-bogus")
  end
end)

T.test("swe_agent.lua --help lists its Slurm flags", function()
  local out, ok = T.sh("ROCK_NO_GC=1 " .. T.rock_exe() .. " " .. arg[0]:match("(.*/)") .. "../../recipes/swe_agent.lua --help")
  T.ok(ok, out)
  for _, f in ipairs({ "partition", "account", "qos", "constraint", "nodelist", "shared%-dir", "node%-backend",
                       "queue%-timeout" }) do
    T.match(out, "%-%-" .. f .. " [A-Z]+%s+%-%-backend slurm: ")
  end
  T.match(out, "%-%-sbatch%-arg STRING %(again: more%)%s+%-%-backend slurm: one more sbatch argument")
end)

T.done()
