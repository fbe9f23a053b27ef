-- raw_http.lua: raw HTTP servers for the client tests (test_http_client,
-- test_http_client_hostile): luv sockets in the test's own process that
-- answer with exactly the bytes a case needs, so the client under test
-- (rock.http.request over c/http/plain.c) meets servers that misbehave on
-- purpose. Loaded with dofile from the tests' directory.
local rock = require "rock"
local uv = rock.uv

local M = {}

-- A server: on_request(req_text, conn, st) answers (conn:write) as it
-- likes. Counts connections and requests; st.drop() closes every accepted
-- connection at once (the server process stays), st.drop_idle() those
-- that answered and have no request in (as far as it has read), st.close()
-- stops it.
-- opts: path (unix socket, else TCP on 127.0.0.1), backlog, no_accept
-- (listen but never accept), early (call on_request once the head is in,
-- without waiting for the body).
function M.server(on_request, opts)
  opts = opts or {}
  local path = opts.path
  local s = path and uv.new_pipe(false) or uv.new_tcp()
  if path then assert(s:bind(path)) else assert(s:bind("127.0.0.1", 0)) end
  local st = { conns = 0, reqs = 0, clients = {}, bytes = 0, idle = {} }
  assert(s:listen(opts.backlog or 1024, function()
    if opts.no_accept then return end
    local c = path and uv.new_pipe(false) or uv.new_tcp()
    s:accept(c)
    st.conns = st.conns + 1
    st.clients[c] = true
    local buf = ""
    c:read_start(function(_, data)
      if not data then
        st.clients[c] = nil
        if not c:is_closing() then c:close() end
        return
      end
      st.bytes = st.bytes + #data
      if st.ignore_body and st.ignore_body[c] then return end
      buf = buf .. data
      st.idle[c] = nil
      while true do
        local head_end = buf:find("\r\n\r\n", 1, true)
        if not head_end then return end
        local len = tonumber(buf:sub(1, head_end):lower():match("content%-length: *(%d+)")) or 0
        if opts.early then
          st.reqs = st.reqs + 1
          st.ignore_body = st.ignore_body or {}
          st.ignore_body[c] = true
          on_request(buf:sub(1, head_end + 3), c, st)
          return
        end
        if #buf < head_end + 3 + len then return end
        local req = buf:sub(1, head_end + 3 + len)
        buf = buf:sub(head_end + 4 + len)
        st.reqs = st.reqs + 1
        on_request(req, c, st)
        if c:is_closing() then return end
        if buf == "" then st.idle[c] = true end
      end
    end)
  end))
  st.url = path and "http://peer" or ("http://127.0.0.1:" .. s:getsockname().port)
  st.path = path
  function st.drop()
    for c in pairs(st.clients) do if not c:is_closing() then c:close() end end
    st.clients = {}
  end
  function st.drop_idle() -- those that answered and have nothing more to read
    for c in pairs(st.idle) do if not c:is_closing() then c:close() end end
    st.idle = {}
  end
  function st.close()
    st.drop()
    if not s:is_closing() then s:close() end
  end
  return st
end

function M.ok_answer(body, extra)
  return "HTTP/1.1 200 OK\r\nContent-Length: " .. #body .. "\r\n" .. (extra or "") .. "\r\n" .. body
end

function M.get(st, opts)
  opts = opts or {}
  opts.url = st.url .. (opts.path or "/")
  opts.unix_socket = st.path
  return rock.http.request(opts)
end

return M
