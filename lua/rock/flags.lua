--- rock.flags: the --flag parser recipes share.
--   local opts, args = rock.flags.parse(arg, {
--     backend = { default = "local", help = "auto|docker|podman|local" },
--     image = { help = "image to run" },
--     concurrency = { type = "number", default = 4 },
--     save = { type = "boolean", help = "also keep a tar" },
--   }, "rock recipe.lua [flags] [image ...]")
-- Accepts --name value, --name=value, --flag / --no-flag (booleans) and
-- "--" (the rest is positional); --max-output is the same as --max_output.
-- A flag of type "list" may be given again: each value is appended (its
-- default: an empty list).
-- --help prints the usage and the flags, then exits 0. An unknown flag, a
-- missing value or a bad number raises invalid_argument. Returns the
-- options (defaults filled in) and the positional arguments, in order.
local errors = require "rock.errors"

local M = {}

---@class rock.FlagSpec
---@field type "string"|"number"|"boolean"|"list"|nil  default: the default's type, else string
---@field default any|nil
---@field help string|nil

local function kind(s)
  return s.type or (s.default ~= nil and type(s.default)) or "string"
end

local function fail(msg) errors.raise("invalid_argument", msg) end

--- The text --help prints: usage, then one line per flag.
---@param spec table<string, rock.FlagSpec>
---@param usage string|nil
---@return string
function M.help(spec, usage)
  local names, lines = {}, { "usage: " .. (usage or "rock recipe.lua [flags]"), "flags:" }
  for name in pairs(spec) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local s, flag = spec[name], "--" .. name:gsub("_", "-")
    local k = kind(s)
    if k == "list" then flag = flag .. " STRING (again: more)"
    elseif k ~= "boolean" then flag = flag .. " " .. k:upper() end
    local dflt = s.default ~= nil and k ~= "list" and string.format(" (default %s)", tostring(s.default)) or ""
    lines[#lines + 1] = string.format("  %-28s %s%s", flag, s.help or "", dflt)
  end
  lines[#lines + 1] = string.format("  %-28s %s", "--help", "print this and exit")
  return table.concat(lines, "\n") .. "\n"
end

local function convert(name, k, v)
  if k == "number" then
    local n = tonumber(v)
    if not n then fail(string.format("--%s wants a number, got %q", name, v)) end
    return n
  elseif k == "boolean" then
    if v == "true" or v == "1" or v == "yes" then return true end
    if v == "false" or v == "0" or v == "no" then return false end
    fail(string.format("--%s wants true or false, got %q", name, v))
  end
  return v
end

--- Parse argv (a recipe's arg table) against spec. usage is the first
--- line of --help. Returns opts (every flag of spec, default filled in, or
--- nil) and the positional arguments.
---@param argv table
---@param spec table<string, rock.FlagSpec>
---@param usage string|nil
---@return table opts
---@return string[] args
function M.parse(argv, spec, usage)
  if type(argv) ~= "table" or type(spec) ~= "table" then
    fail("rock.flags.parse(argv, spec, usage): argv and spec must be tables")
  end
  local opts, args = {}, {}
  for name, s in pairs(spec) do
    if type(s) ~= "table" then fail("flag spec for " .. name .. " must be a table") end
    opts[name] = s.default
    if kind(s) == "list" then opts[name] = {} end
  end
  local i, n = 1, #argv
  while i <= n do
    local a = argv[i]
    if type(a) ~= "string" then fail(string.format("argv[%d] must be a string, got %s", i, type(a))) end
    if a == "--" then
      table.move(argv, i + 1, n, #args + 1, args)
      break
    elseif a == "--help" or a == "-h" then
      io.stdout:write(M.help(spec, usage))
      os.exit(0)
    elseif a:sub(1, 2) == "--" and #a > 2 then
      local name, value = a:sub(3):match("^([^=]+)=(.*)$")
      name = (name or a:sub(3)):gsub("-", "_")
      local negated = false
      if not spec[name] and name:sub(1, 3) == "no_" and spec[name:sub(4)]
          and kind(spec[name:sub(4)]) == "boolean" and not value then
        name, negated = name:sub(4), true
      end
      local s = spec[name]
      if not s then fail(string.format("unknown flag %s (see --help)", a)) end
      local k = kind(s)
      if k == "boolean" and not value then
        opts[name] = not negated
      else
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then fail(string.format("--%s needs a value", name:gsub("_", "-"))) end
        end
        if k == "list" then
          local l = opts[name]
          l[#l + 1] = value
        else
          opts[name] = convert(name:gsub("_", "-"), k, value)
        end
      end
    else
      args[#args + 1] = a
    end
    i = i + 1
  end
  return opts, args
end

return M
