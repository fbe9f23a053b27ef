-- warmup.lua: make a list of images present before a run, so sandboxes
-- start without waiting on pulls.
--   rock recipes/warmup.lua [--file images.txt] [--pull missing|always|never]
--        [--concurrency N] [--save] [--swebench] [--out results.jsonl] [image ...]
-- Images come from the arguments and/or a file (one per line, # comments).
-- --swebench reads SWE-bench instance ids instead and maps them with
-- rock.images.swebench_name. Each image goes through rock.images.ensure
-- (engine, then the tar cache, then a rate-limited pull with retries);
-- --save also keeps a tar of it in the cache. A progress bar is drawn on a
-- TTY; one JSON line per image goes to --out; the exit status is 1 if any
-- image could not be made present.
local rock = require "rock"
local cjson = require "cjson"

local opts, images = rock.flags.parse(arg, {
  file = { help = "read images from this file (one per line, # comments)" },
  pull = { default = "missing", help = "missing|always|never" },
  concurrency = { type = "number", default = 2, help = "images made present at once" },
  out = { help = "write one JSON line per image here" },
  save = { type = "boolean", help = "also keep a tar of each image in the cache" },
  swebench = { type = "boolean", help = "arguments are SWE-bench instance ids" },
}, "rock recipes/warmup.lua [flags] [image ...]")
opts.images = images
if opts.file then
  local f = assert(io.open(opts.file), "warmup: cannot open " .. opts.file)
  for line in f:lines() do
    line = rock.text.trim((line:gsub("#.*", "")))
    if line ~= "" then opts.images[#opts.images + 1] = line end
  end
  f:close()
end
if opts.swebench then
  for k, id in ipairs(opts.images) do opts.images[k] = rock.images.swebench_name(id) end
end
if #opts.images == 0 then error("warmup: no images given (arguments or --file)", 0) end

local tty = os.getenv("TERM") and os.execute("test -t 2") -- progress only for a person
local total, finished, failed = #opts.images, 0, 0
local function bar(note)
  if not tty then return end
  local width = 30
  local filled = math.floor(width * finished / total)
  io.stderr:write(string.format("\r[%s%s] %d/%d %s\27[K", string.rep("#", filled),
    string.rep(".", width - filled), finished, total, note or ""))
end

local out = opts.out and assert(io.open(opts.out, "w"))
local sem = rock.semaphore(opts.concurrency or 2)
local tasks = {}
local t0 = rock.uv.hrtime()
for _, image in ipairs(opts.images) do
  tasks[#tasks + 1] = rock.spawn(function()
    sem:with(function()
      local started = rock.uv.hrtime()
      local ok, how = pcall(rock.images.ensure, image, {
        pull = opts.pull,
        on_progress = function(p)
          if p.total and p.total > 0 then
            bar(string.format("%s %d%%", image, math.floor(100 * p.current / p.total)))
          end
        end,
      })
      if ok and opts.save then
        local sok, err = pcall(rock.images.save, image)
        if not sok then ok, how = false, err end
      end
      finished = finished + 1
      if not ok then failed = failed + 1 end
      local rec = { image = image, ok = ok, how = ok and how or nil,
                    error = (not ok) and tostring(how) or nil,
                    seconds = (rock.uv.hrtime() - started) / 1e9 }
      if out then out:write(cjson.encode(rec), "\n") end
      bar(image .. (ok and (" " .. how) or " FAILED"))
      if not ok then io.stderr:write((tty and "\n" or ""), "warmup: ", image, ": ", tostring(how), "\n") end
    end)
  end)
end
rock.wait(tasks)
if tty then io.stderr:write("\n") end
if out then out:close() end
print(string.format("warmup: %d image(s), %d ready, %d failed, %.1f s", total, total - failed,
  failed, (rock.uv.hrtime() - t0) / 1e9))
if failed > 0 then os.exit(1) end
