---@meta
--- rock.core: the C boundary (c/core/lua_core.c). Only lua/rock/*.lua call
--- it; recipes use require "rock". This file declares it; it is never run.
error("rock.core's _meta file is documentation only")

local core = {}

--- The library version.
---@return string
function core.version() end

--- Path of the rocklet binary: $ROCK_ROCKLET, the build tree's, or libexec.
---@return string
function core.rocklet_path() end

--- This process's pid.
---@return integer
function core.getpid() end

--- Start an HTTP request on the loop (libcurl multi). cb(res) or
--- cb(nil, err) runs later on the main state, never inside curl.
---@param opts {url:string, method?:string, headers?:table, body?:string, timeout?:number, unix_socket?:string}
---@param cb fun(res?:{status:integer, headers:table<string,string>, body:string}, err?:{code:string, message:string})
---@return integer id for http_cancel
function core.http_request(opts, cb) end

--- Abandon a request: its callback will not run.
---@param id integer
---@return boolean found
function core.http_cancel(id) end

--- Remove a directory tree without following symlinks or crossing mounts.
---@param path string
---@return true|nil ok
---@return string|nil err
function core.rmtree(path) end

--- The kernel start time (clock ticks since boot) of pid, or nil.
---@param pid integer
---@return integer|nil
function core.proc_start_time(pid) end

return core
