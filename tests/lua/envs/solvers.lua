-- solvers.lua: the test solvers of the shipped games, from their texts
-- alone: GuessTheNumber by binary search over the hints, Sokoban by a
-- breadth-first search over (player, boxes) states of the board in
-- info.suffix (moves that push are the edges that change the boxes; a
-- target under the player, which GEM's board hides, is inferred).
local S = {}

--- Play GuessTheNumber to the end; returns the last step's results.
function S.guess(env, seed)
  local obs = env:reset(seed)
  local lo, hi = obs:match("between (%d+) and (%d+)")
  lo, hi = tonumber(lo), tonumber(hi)
  while true do
    local g = (lo + hi) // 2
    local o, r, term, trunc, info = env:step("my guess: \\boxed{" .. g .. "}")
    if term then return o, r, term, trunc, info end
    if o:find("higher") then lo = g + 1 else hi = g - 1 end
  end
end

local DIRS = { { "up", -1, 0 }, { "down", 1, 0 }, { "left", 0, -1 }, { "right", 0, 1 } }

--- The board of a Sokoban suffix: rows of cells.
function S.board(suffix)
  local b = suffix:match("layout:\n(.-)\n+Enter your move%.")
  local rows = {}
  for line in (b .. "\n"):gmatch("(.-)\n") do
    local row = {}
    for cell in line:gmatch("%S+") do row[#row + 1] = cell end
    rows[#rows + 1] = row
  end
  return rows
end

--- The shortest list of moves that solves the board (nil if none).
function S.sokoban_plan(rows)
  local h, w = #rows, #rows[1]
  local wall, target, boxes, pr, pc = {}, {}, {}, nil, nil
  local function k(r, c) return r * 16 + c end
  for r = 1, h do
    for c = 1, w do
      local x = rows[r][c]
      if x == "#" then wall[k(r, c)] = true end
      if x == "O" or x == "√" then target[k(r, c)] = true end
      if x == "X" or x == "√" then boxes[#boxes + 1] = k(r, c) end
      if x == "P" then pr, pc = r, c end
    end
  end
  -- GEM draws the player over a target: one target fewer than boxes shown
  -- means the player stands on it
  local ntargets = 0
  for _ in pairs(target) do ntargets = ntargets + 1 end
  if ntargets < #boxes then target[k(pr, pc)] = true end
  local function key(p, bs)
    table.sort(bs)
    return p .. ":" .. table.concat(bs, ",")
  end
  local start = { p = k(pr, pc), b = boxes }
  local seen, queue, head = { [key(start.p, boxes)] = true }, { start }, 1
  start.moves = {}
  while head <= #queue do
    local s = queue[head]; head = head + 1
    local done = true
    for _, b in ipairs(s.b) do if not target[b] then done = false end end
    if done then return s.moves end
    local set = {}
    for _, b in ipairs(s.b) do set[b] = true end
    for _, d in ipairs(DIRS) do
      local step = d[2] * 16 + d[3]
      local np = s.p + step
      local nb = nil
      if not wall[np] then
        if set[np] then
          local to = np + step
          if not wall[to] and not set[to] then
            nb = {}
            for _, b in ipairs(s.b) do nb[#nb + 1] = b == np and to or b end
          end
        else
          nb = { table.unpack(s.b) }
        end
      end
      if nb then
        local kk = key(np, nb)
        if not seen[kk] then
          seen[kk] = true
          local moves = { table.unpack(s.moves) }
          moves[#moves + 1] = d[1]
          queue[#queue + 1] = { p = np, b = nb, moves = moves }
        end
      end
    end
  end
  return nil
end

--- Play Sokoban with the plan; returns the last step's results and the plan.
function S.sokoban(env, seed)
  local _, info = env:reset(seed)
  local plan = assert(S.sokoban_plan(S.board(info.suffix)), "no plan: the room is unsolvable")
  local o, r, term, trunc, inf
  for _, m in ipairs(plan) do
    o, r, term, trunc, inf = env:step("\\boxed{" .. m .. "}")
    if term then break end
  end
  return o, r, term, trunc, inf, plan
end

return S
