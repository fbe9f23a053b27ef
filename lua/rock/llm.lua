--- rock.llm: a client of OpenAI-compatible chat completions (OpenAI, vLLM,
-- SGLang, LiteLLM...), over rock.http: retries with backoff (honouring
-- Retry-After), errors sorted into stable codes, token and cost accounting,
-- and the text mode's ```bash block parser. Prices: llm_prices.lua. Texts:
-- agent/prompts.lua. Read next: http.lua (the transport), the agent loop.
local cjson = require "cjson"
local uv = require "luv"
local errors = require "rock.errors"
local http = require "rock.http"
local log = require "rock.log"
local task = require "rock.task"
local core = require "rock.core"
local trim, rtrim = require("rock.text").trim, require("rock.text").rtrim

local M = {}

--- Defaults (docs/lua-api.md, "rock.llm"): seconds per call, retries
--- after the first attempt, first backoff in seconds (doubled per retry,
--- capped at MAX_BACKOFF, +-25% jitter), and the longest Retry-After
--- honoured (a longer one is cut to it).
M.DEFAULT_TIMEOUT = 120
--- The most bytes of a response body read (an answer is a few KB to a few
--- MB): past it the transfer ends and the answer is llm_bad_response, not
--- retried, so an endpoint cannot fill the host's memory.
M.MAX_RESPONSE = 64 * 1024 * 1024
M.DEFAULT_RETRIES = 6
M.DEFAULT_BACKOFF = 1
M.MAX_BACKOFF = 60
M.MAX_RETRY_AFTER = 600
M.MAX_RETRIES = 100

local function bad_arg(fmt, ...)
  errors.raise("invalid_argument", string.format(fmt, ...))
end

local function env(name)
  local v = os.getenv(name)
  if v == "" then return nil end
  return v
end

-- JSON null (cjson.null) and nil alike
local function null(v) return v == nil or v == cjson.null end

--------------------------------------------------------------------------
-- Prices and cost

local default_prices -- llm_prices.lua, loaded on first use
local warned = {}    -- model -> true once its unknown price was logged

-- a price: a finite number >= 0 (NaN fails the comparison)
local function price(v) return type(v) == "number" and v >= 0 and v < math.huge end

local function check_price(name, p, where)
  if type(p) ~= "table" or not price(p.input) or not price(p.output)
      or (p.cached_input ~= nil and not price(p.cached_input)) then
    bad_arg("%s: price of '%s' must be {input=, output=, cached_input=?} (USD per 1M tokens, finite, >= 0)",
      where, tostring(name))
  end
  return p
end

-- the price of model in table t: by exact name, then with each provider
-- prefix stripped ("openrouter/openai/gpt-4o" -> "openai/gpt-4o" -> "gpt-4o")
local function find_price(t, model)
  if not t then return nil end
  local name = model
  while true do
    if t[name] ~= nil then return t[name] end
    local rest = name:match("^[^/]*/(.+)$")
    if not rest then return nil end
    name = rest
  end
end

--- The cost in USD of one call's usage ({prompt_tokens=, completion_tokens=,
--- cached_tokens=?}) for model: prices (an override table, same shape as
--- llm_prices.lua) first, then llm_prices.lua. Returns usd, known: an
--- unknown model costs 0 with known=false, and is logged once per model.
---@param model string
---@param usage table|nil
---@param prices table|nil
---@return number usd, boolean known
function M.cost(model, usage, prices)
  if type(model) ~= "string" then bad_arg("llm.cost: model must be a string") end
  if usage ~= nil and type(usage) ~= "table" then bad_arg("llm.cost: usage must be a table") end
  if prices ~= nil and type(prices) ~= "table" then bad_arg("llm.cost: prices must be a table") end
  default_prices = default_prices or require "rock.llm_prices"
  local p = find_price(prices, model) or find_price(default_prices, model)
  if not p then
    if not warned[model] then
      warned[model] = true
      log.warn("llm", "no price known for model '%s': its calls count as costing 0 USD " ..
        "(add it to lua/rock/llm_prices.lua or pass prices=)", model)
    end
    return 0, false
  end
  check_price(model, p, "llm.cost")
  usage = usage or {}
  local prompt = tonumber(usage.prompt_tokens) or 0
  local completion = tonumber(usage.completion_tokens) or 0
  local cached = math.min(tonumber(usage.cached_tokens) or 0, prompt)
  local usd = ((prompt - cached) * p.input + cached * (p.cached_input or p.input)
    + completion * p.output) / 1e6
  return usd, true
end

--------------------------------------------------------------------------
-- Text mode: one ```bash block per reply (mini-swe-agent's action regex,
-- ```bash\s*\n(.*?)\n``` with DOTALL, as Python's findall reads it), found
-- by a scan that looks at each byte a bounded number of times: the same
-- pattern in Lua (or Python) backtracks, a reply of many unclosed blocks
-- or of a long run of newlines taking quadratic time.

-- The bodies of the ```bash blocks of text, as findall gives them.
local function bash_blocks(text)
  local blocks, pos = {}, 1
  -- the first "\n```" at or after x (false: none); x only grows from one
  -- call to the next, so no byte is searched twice
  local at = nil
  local function closing(x)
    if at == nil or (at and at < x) then at = text:find("\n```", x, true) or false end
    return at or nil
  end
  while true do
    local s = text:find("```bash", pos, true)
    if not s then return blocks end
    -- \s*\n: the blanks after the fence, ending at a newline; the regex
    -- tries the last newline of the run first, then the one before it
    local ws = s + 7
    local we = text:find("%S", ws) or #text + 1
    local run = text:sub(ws, we - 1)
    local last, prev, i = nil, nil, 1
    while true do
      local nl = run:find("\n", i, true)
      if not nl then break end
      prev, last, i = last, ws + nl - 1, nl + 1
    end
    pos = s + 1
    if last then
      local c = closing(last + 1)
      if c then
        blocks[#blocks + 1], pos = text:sub(last + 1, c - 1), c + 4
      elseif prev and text:sub(last + 1, last + 3) == "```" then
        -- from the newline before: the body is the blanks between them
        blocks[#blocks + 1], pos = text:sub(prev + 1, last - 1), last + 4
      end
    end
  end
end

--- The command of a reply in text mode: exactly one ```bash block, whose
--- text (stripped of surrounding whitespace) must not be empty. Else nil
--- and the format-error message for the model (prompts.format_error).
--- Linear in the length of text.
---@param text string
---@return string|nil command, string|nil format_error
function M.parse_bash_block(text)
  if type(text) ~= "string" then
    if not null(text) then bad_arg("llm.parse_bash_block: text must be a string") end
    text = ""
  end
  local blocks = bash_blocks(text)
  local cmd = #blocks == 1 and trim(blocks[1]) or nil
  if cmd and cmd ~= "" then return cmd end
  local prompts = require "rock.agent.prompts"
  return nil, prompts.render(prompts.format_error, { count = #blocks })
end

--------------------------------------------------------------------------
-- Retry-After

-- days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil)
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = (y >= 0 and y or y - 399) // 400
  local yoe = y - era * 400
  local doy = (153 * (m + (m > 2 and -3 or 9)) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  return era * 146097 + doe - 719468
end

local MONTHS = { jan = 1, feb = 2, mar = 3, apr = 4, may = 5, jun = 6,
                 jul = 7, aug = 8, sep = 9, oct = 10, nov = 11, dec = 12 }

--- Seconds to wait for a Retry-After value: delay-seconds ("120") or an
--- HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"; RFC 850's too) taken
--- against now (seconds since the epoch, default os.time()). nil when the
--- value is neither; a date in the past gives 0.
---@param value string|nil
---@param now number|nil
---@return number|nil
function M._retry_after(value, now)
  if type(value) ~= "string" then return nil end
  value = trim(value)
  if value:match("^%d+$") or value:match("^%d+%.%d*$") then return tonumber(value) end
  local d, mon, y, hh, mm, ss = value:match("(%d%d?)[ %-](%a%a%a)[ %-](%d%d%d?%d?) (%d%d):(%d%d):(%d%d)")
  local m = mon and MONTHS[mon:lower()]
  if not m then return nil end
  y = tonumber(y)
  if y < 100 then y = y + (y < 70 and 2000 or 1900) end
  local at = days_from_civil(y, m, tonumber(d)) * 86400 + tonumber(hh) * 3600
    + tonumber(mm) * 60 + tonumber(ss)
  return math.max(0, at - (now or os.time()))
end

-- seconds a 429 asks us to wait (retry-after-ms, OpenAI's, first), or nil
local function retry_after(headers)
  headers = headers or {}
  local ms = tonumber(headers["retry-after-ms"])
  if ms and ms >= 0 then return ms / 1000 end -- inf: cut to MAX_RETRY_AFTER
  return M._retry_after(headers["retry-after"])
end

--------------------------------------------------------------------------
-- Error bodies

-- Phrases of a context-length error, lowercased: OpenAI's code and
-- "This model's maximum context length is N tokens" (vLLM's and SGLang's
-- recent ones too), SGLang's "longer than the model's context length" and
-- "exceeds the maximum allowed length", LiteLLM's ContextWindowExceededError,
-- Anthropic's "prompt is too long", and the generic ones.
M.CONTEXT_PHRASES = {
  "context_length_exceeded", "maximum context length", "model's context length",
  "context window", "contextwindowexceeded", "context length exceeded",
  "maximum allowed length", "too many tokens", "prompt is too long",
  "input is too long", "reduce the length of the messages",
}

-- The endpoint's error message and code from an error body: OpenAI's
-- {"error": {message, code, type}}, {"error": "text"}, vLLM's and SGLang's
-- {"object": "error", "message": ...}, FastAPI's {"detail": ...}; else the
-- start of the raw body.
local function error_info(body)
  local ok, doc = pcall(cjson.decode, body or "")
  local msg, code
  if ok and type(doc) == "table" then
    local e = doc.error
    if type(e) == "table" then
      msg, code = e.message, e.code
      if null(code) then code = e.type end
    elseif type(e) == "string" then
      msg = e
    end
    if null(msg) then msg = doc.message end
    if null(msg) and type(doc.detail) == "string" then msg = doc.detail end
    if null(code) then code = doc.code end
  end
  if type(msg) ~= "string" then
    msg = (body or ""):sub(1, 500)
    if msg == "" then msg = nil end
  end
  return msg, not null(code) and tostring(code) or nil
end

local function is_context_error(status, msg, code)
  if status == 413 then return true end -- the request itself is too large
  local text = ((msg or "") .. " " .. (code or "")):lower()
  for _, phrase in ipairs(M.CONTEXT_PHRASES) do
    if text:find(phrase, 1, true) then return true end
  end
  return false
end

--------------------------------------------------------------------------
-- Responses

local function snippet(s)
  s = s or ""
  if #s > 200 then return string.format("%q...", s:sub(1, 200)) end
  return string.format("%q", s)
end

--- The most tokens one call may report in a usage field: no context
--- window is near it, so a larger figure (or a negative one, NaN, 1e400)
--- is a bad response, never summed into costs and limits.
M.MAX_TOKENS = 1e9

-- a token count of the usage (0 when absent or not a number), or nil and
-- why when it is a number no call can have used
local function count(v, field)
  if type(v) ~= "number" then return 0 end
  if not (v >= 0 and v <= M.MAX_TOKENS) then -- NaN fails both
    return nil, string.format("usage.%s is %.17g, not a token count (0 to %d)", field, v, M.MAX_TOKENS)
  end
  return math.tointeger(v) or v
end

-- message.content: a string, or null, or (rarely) a list of parts
local function content_of(c)
  if null(c) then return nil end
  if type(c) == "string" then return c end
  if type(c) == "table" then
    local parts = {}
    for _, p in ipairs(c) do
      if type(p) == "table" and type(p.text) == "string" then parts[#parts + 1] = p.text end
    end
    return table.concat(parts)
  end
  return false
end

-- JSON as JSON is: cjson's default decoder takes NaN, Infinity and hex
-- numbers, which no JSON encoder writes back (a trajectory, the next
-- request); this one refuses them
local strict = cjson.new()
strict.decode_invalid_numbers(false)

-- whether v holds only finite numbers (1e400 is valid JSON, and inf);
-- cjson's depth limit bounds the walk
local function finite(v)
  local t = type(v)
  if t == "number" then return v == v and v ~= math.huge and v ~= -math.huge end
  if t ~= "table" then return true end
  for k, x in pairs(v) do
    if not finite(k) or not finite(x) then return false end
  end
  return true
end

local model_text -- (below) a body made valid UTF-8

local NOT_FINITE = "the arguments of a tool call hold a number JSON cannot carry (NaN, Infinity, 1e400)"

-- a tool call's arguments text: false when it is JSON only to a lenient
-- decoder (NaN, Infinity) or holds a number past a double (1e400)
local function args_ok(text)
  local clean = model_text(text)
  local ok, v = pcall(strict.decode, clean)
  if ok then return finite(v) end
  return not pcall(cjson.decode, clean) -- not JSON at all: the agent's format error
end

-- the tool calls of a message, normalised: nil when there are none; an
-- arguments object (some servers) becomes its JSON text; text that is not
-- JSON stays as it is (the agent answers it with a format error); a
-- number JSON cannot carry, in either, is a bad response
local function tool_calls_of(list)
  local not_calls = "message.tool_calls is not a list of function calls"
  if null(list) then return nil end
  if type(list) ~= "table" then return false, not_calls end
  if #list == 0 then return nil end
  local out = {}
  for i, tc in ipairs(list) do
    if type(tc) ~= "table" or type(tc["function"]) ~= "table" then return false, not_calls end
    local fn = tc["function"]
    local args = fn.arguments
    if type(args) == "table" then
      local ok, text = pcall(cjson.encode, args)
      if not ok then return false, NOT_FINITE end
      args = text
    elseif type(args) ~= "string" then args = ""
    elseif not args_ok(args) then return false, NOT_FINITE end
    out[i] = { id = type(tc.id) == "string" and tc.id or nil, type = type(tc.type) == "string" and tc.type or "function",
               ["function"] = { name = not null(fn.name) and tostring(fn.name) or "", arguments = args } }
  end
  return out
end

-- the usage of a response, or nil and why it is not believable
local function usage_of(u)
  if type(u) ~= "table" then
    return { prompt_tokens = 0, completion_tokens = 0, total_tokens = 0 }
  end
  local r = {}
  for _, k in ipairs({ "prompt_tokens", "completion_tokens", "total_tokens" }) do
    local n, why = count(u[k], k)
    if not n then return nil, why end
    r[k] = n
  end
  if r.total_tokens == 0 then r.total_tokens = r.prompt_tokens + r.completion_tokens end
  local d = u.prompt_tokens_details
  local cached, why = count(type(d) == "table" and d.cached_tokens or u.cached_tokens, "cached_tokens")
  if not cached then return nil, why end
  if cached > 0 then r.cached_tokens = cached end
  return r
end

--------------------------------------------------------------------------
-- The client

---@class rock.LlmOptions
---@field base_url string|nil  default $ROCK_LLM_BASE_URL; required ("http://host:port/v1")
---@field api_key string|nil   default $ROCK_LLM_API_KEY; none: no Authorization header
---@field model string|nil     default $ROCK_LLM_MODEL; required
---@field timeout number|nil   seconds per attempt, default 120
---@field retries integer|nil  retries after the first attempt, default 6 (0..100)
---@field backoff number|nil   first retry delay in seconds, default 1 (doubled, capped 60, jitter)
---@field prices table|nil     {["model"]={input=, output=, cached_input=?}}, USD per 1M tokens
---@field params table|nil     more request fields (temperature, max_tokens, ...)

---@class rock.LlmClient
---@field model string
---@field base_url string
---@field stats table {calls, prompt_tokens, completion_tokens, total_tokens, cost, retries, bad_responses}
local Client = {}
Client.__index = Client
M.Client = Client

local OPTIONS = { base_url = "string", api_key = "string", model = "string", timeout = "number",
                  retries = "number", backoff = "number", prices = "table", params = "table" }

--- Make a client. Nothing is sent until chat. Missing base_url or model
--- (and no ROCK_LLM_* variable), or a bad option, raise invalid_argument.
---@param opts rock.LlmOptions|nil
---@return rock.LlmClient
function M.new(opts)
  if opts ~= nil and type(opts) ~= "table" then bad_arg("llm.new: expects a table of options") end
  opts = opts or {}
  for k, v in pairs(opts) do
    if not OPTIONS[k] then bad_arg("llm.new: unknown option '%s'", tostring(k)) end
    if type(v) ~= OPTIONS[k] then bad_arg("llm.new: '%s' must be a %s", k, OPTIONS[k]) end
  end
  local base_url = opts.base_url or env("ROCK_LLM_BASE_URL")
  local model = opts.model or env("ROCK_LLM_MODEL")
  if not base_url then bad_arg("llm.new: no base_url (pass base_url= or set ROCK_LLM_BASE_URL)") end
  if not model or model == "" then bad_arg("llm.new: no model (pass model= or set ROCK_LLM_MODEL)") end
  if not base_url:match("^https?://[^/]") then
    bad_arg("llm.new: base_url must be an http:// or https:// URL, got '%s'", base_url)
  end
  local timeout = opts.timeout or M.DEFAULT_TIMEOUT
  task.check_seconds(timeout, "llm.new: 'timeout'")
  if timeout <= 0 then bad_arg("llm.new: 'timeout' must be more than 0 seconds") end
  local retries = opts.retries or M.DEFAULT_RETRIES
  if retries ~= retries or retries < 0 or retries > M.MAX_RETRIES or retries % 1 ~= 0 then
    bad_arg("llm.new: 'retries' must be a whole number from 0 to %d, got %s", M.MAX_RETRIES, tostring(retries))
  end
  local backoff = opts.backoff or M.DEFAULT_BACKOFF
  task.check_seconds(backoff, "llm.new: 'backoff'")
  for name, p in pairs(opts.prices or {}) do check_price(name, p, "llm.new: prices") end
  for k in pairs(opts.params or {}) do
    if k == "model" or k == "messages" or k == "tools" or k == "stream" then
      bad_arg("llm.new: params may not set '%s'", tostring(k))
    end
  end
  local key = opts.api_key or env("ROCK_LLM_API_KEY")
  local headers = { "Content-Type: application/json", "Accept: application/json" }
  if key and key ~= "" then headers[#headers + 1] = "Authorization: Bearer " .. key end
  return setmetatable({
    base_url = base_url, model = model, timeout = timeout, retries = math.tointeger(retries),
    backoff = backoff, prices = opts.prices, params = opts.params or {},
    url = rtrim(base_url, "/") .. "/chat/completions", _headers = headers,
    stats = { calls = 0, prompt_tokens = 0, completion_tokens = 0, total_tokens = 0, cost = 0, retries = 0,
              bad_responses = 0 },
  }, Client)
end

-- the delay before retry n (1-based): backoff * 2^(n-1), capped, +-25%
function Client:_backoff(n)
  local d = math.min(M.MAX_BACKOFF, self.backoff * 2 ^ (n - 1))
  return math.min(M.MAX_BACKOFF, d * (0.75 + 0.5 * math.random()))
end

-- Was err rock.http's report of no response (then the call is retried)?
-- rock.http tags those with the url; a rock.timeout deadline around the
-- call or a cancel reaches us untagged and must pass through at once.
local function transport_error(err, url)
  return errors.is(err) and err.url == url
    and (err.code == "timeout" or err.code == "connection_failed" or err.code == "http_error")
end

-- body with each \u escape of a lone UTF-16 surrogate (\ud800 not followed
-- by a \udc00-\udfff, a \udc00 alone) made \ufffd: Python's json writes
-- them for a str holding one, and lua-cjson refuses them. One pass over
-- the backslashes.
local function lone_surrogates(body)
  if not body:find("\\u[dD][89a-fA-F]") then return body end
  local out, from, i = {}, 1, 1
  local function unit(at) -- the code unit of the \uXXXX escape at `at`, or nil
    if body:sub(at, at + 1) ~= "\\u" then return nil end
    local hex = body:sub(at + 2, at + 5)
    return hex:match("^%x%x%x%x$") and tonumber(hex, 16) or nil
  end
  while true do
    local b = body:find("\\", i, true)
    if not b then break end
    local u = unit(b)
    if u and u >= 0xD800 and u <= 0xDFFF then
      local lo = u <= 0xDBFF and unit(b + 6)
      if lo and lo >= 0xDC00 and lo <= 0xDFFF then
        i = b + 12 -- a pair: one character
      else
        out[#out + 1] = body:sub(from, b - 1)
        out[#out + 1] = "\\ufffd"
        from, i = b + 6, b + 6
      end
    else
      i = b + 2 -- any other escape, \\ included: its two bytes
    end
  end
  out[#out + 1] = body:sub(from)
  return table.concat(out)
end

-- An endpoint's body as model text must be: valid UTF-8 (each bad byte
-- U+FFFD, as the rocklet cleans command output) and no lone surrogate, so
-- what is kept goes back in the next request and into files as valid JSON.
function model_text(body)
  return lone_surrogates(core.utf8_clean(body or ""))
end

--- Decode JSON that an endpoint or a model wrote (a body, a tool call's
--- arguments), its text first made valid: bytes that are not UTF-8 and
--- lone surrogate escapes become U+FFFD. Strict about numbers: NaN,
--- Infinity and hex are not JSON, and a number past a double (1e400) is
--- refused too. Raises for text that is not JSON.
---@param text string
function M.json_decode(text)
  local v = strict.decode(model_text(text))
  if not finite(v) then error("a number JSON cannot carry (1e400)", 0) end
  return v
end

-- decode a 2xx body into chat's result (without cost and timings)
local function parse_response(body, url)
  local function bad(why, extra)
    errors.raise("llm_bad_response", string.format("%s: %s", url, why), extra)
  end
  local ok, doc = pcall(cjson.decode, body)
  if not ok or type(doc) ~= "table" then
    bad("the response is not a JSON object: " .. snippet(body), { op = "llm.chat" })
  end
  local choice = type(doc.choices) == "table" and doc.choices[1]
  if type(choice) ~= "table" then
    local msg = error_info(body)
    bad("the response has no choices" .. (doc.error and msg and (": " .. msg) or ""), { op = "llm.chat" })
  end
  local m = choice.message
  if type(m) ~= "table" then bad("the choice has no message", { op = "llm.chat" }) end
  local content = content_of(m.content)
  if content == false then bad("message.content is not text", { op = "llm.chat" }) end
  local calls, why_calls = tool_calls_of(m.tool_calls)
  if calls == false then bad(why_calls, { op = "llm.chat" }) end
  local usage, why = usage_of(doc.usage)
  if not usage then bad(why, { op = "llm.chat" }) end
  return {
    message = { role = "assistant", content = content, tool_calls = calls },
    finish_reason = not null(choice.finish_reason) and tostring(choice.finish_reason) or nil,
    usage = usage,
    response = doc,
  }
end

--- Ask the model. req.messages: OpenAI chat messages (a non-empty list);
--- req.tools: OpenAI tool schemas or nil. Returns {message={role=
--- "assistant", content=string|nil, tool_calls=list|nil}, finish_reason=,
--- usage={prompt_tokens=, completion_tokens=, total_tokens=,
--- cached_tokens=?}, cost= (USD), seconds= (wall, retries included),
--- attempts=, response= (the decoded body)}. Raises context_overflow,
--- llm_error (4xx, not retried), llm_bad_response, llm_unreachable
--- (connection errors, timeouts, 429, 5xx still failing after the
--- retries). Waits: inside a task.
---@param req {messages: table, tools: table|nil}
function Client:chat(req)
  if getmetatable(self) ~= Client then bad_arg("llm chat: call it as client:chat{...}") end
  if type(req) ~= "table" then bad_arg("llm chat: expects a table {messages=, tools=}") end
  for k in pairs(req) do
    if k ~= "messages" and k ~= "tools" then bad_arg("llm chat: unknown field '%s'", tostring(k)) end
  end
  if type(req.messages) ~= "table" or #req.messages == 0 then
    bad_arg("llm chat: 'messages' must be a non-empty list")
  end
  if req.tools ~= nil and type(req.tools) ~= "table" then bad_arg("llm chat: 'tools' must be a list") end
  local doc = {}
  for k, v in pairs(self.params) do doc[k] = v end
  doc.model, doc.messages = self.model, req.messages
  if req.tools and #req.tools > 0 then doc.tools = req.tools end
  local ok, body = pcall(cjson.encode, doc)
  if not ok then bad_arg("llm chat: the request cannot be encoded as JSON: %s", tostring(body)) end
  body = core.utf8_clean(body) -- text that is not UTF-8 (a task's, a replay's) goes as U+FFFD

  local t0 = uv.hrtime()
  local attempt = 0
  while true do
    attempt = attempt + 1
    local wait, cause, status
    local sent, res = pcall(http.request, { url = self.url, method = "POST", headers = self._headers,
                                            body = body, timeout = self.timeout, max_body = M.MAX_RESPONSE })
    if not sent and errors.is(res) and res.too_large then
      self.stats.bad_responses = self.stats.bad_responses + 1
      errors.raise("llm_bad_response", string.format("%s: the response body is larger than %d bytes (llm.MAX_RESPONSE)",
        self.url, M.MAX_RESPONSE), { op = "llm.chat", attempts = attempt })
    elseif not sent then
      if not transport_error(res, self.url) then error(res, 0) end
      cause = tostring(res)
    elseif res.status >= 200 and res.status < 300 then
      local pok, r = pcall(parse_response, model_text(res.body), self.url)
      if not pok then
        self.stats.bad_responses = self.stats.bad_responses + 1
        error(r, 0)
      end
      r.cost = M.cost(self.model, r.usage, self.prices)
      r.seconds = (uv.hrtime() - t0) / 1e9
      r.attempts = attempt
      local s = self.stats
      s.calls = s.calls + 1
      s.prompt_tokens = s.prompt_tokens + r.usage.prompt_tokens
      s.completion_tokens = s.completion_tokens + r.usage.completion_tokens
      s.total_tokens = s.total_tokens + r.usage.total_tokens
      s.cost = s.cost + r.cost
      return r
    else
      status = res.status
      local msg, code = error_info(model_text(res.body))
      local what = string.format("HTTP %d from %s%s", status, self.url, msg and (": " .. msg) or "")
      local extra = { op = "llm.chat", http_status = status, attempts = attempt, detail = msg, error_code = code }
      if status == 429 and code ~= "insufficient_quota" then
        wait = retry_after(res.headers)
        if wait then wait = math.min(wait, M.MAX_RETRY_AFTER) end
      elseif status >= 500 or status == 408 then
        wait = nil -- a server error or its request timeout: backoff
      elseif is_context_error(status, msg, code) then
        errors.raise("context_overflow", what, extra)
      else
        errors.raise("llm_error", what, extra)
      end
      cause = string.format("HTTP %d%s", status, msg and (": " .. msg) or "")
    end
    if attempt > self.retries then
      errors.raise("llm_unreachable", string.format("%s: gave up after %d attempt%s; last: %s",
        self.url, attempt, attempt == 1 and "" or "s", cause),
        { op = "llm.chat", attempts = attempt, http_status = status, cause = cause })
    end
    wait = wait or self:_backoff(attempt)
    self.stats.retries = self.stats.retries + 1
    log.warn("llm", "%s: %s (attempt %d of %d); retrying in %.2fs", self.url, cause, attempt,
      self.retries + 1, wait)
    task.sleep(wait)
  end
end

return M
