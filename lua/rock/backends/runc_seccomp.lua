--- rock.backends.runc_seccomp: the seccomp profile of a runc sandbox, in
-- the OCI runtime spec's form (config.json's linux.seccomp), no looser
-- than Docker's default. Docker's own profile is compiled into dockerd;
-- what is on a Debian host is podman's (containers-common's
-- /usr/share/containers/seccomp.json, ROCK_SECCOMP_PROFILE to name
-- another in the same format), itself derived from Docker's but looser:
-- it allows mount, unshare, setns, pivot_root, reboot, keyctl, syslog,
-- the new mount API and more to every container. This file reads it, keeps
-- the rules that apply to x86-64 and to the capabilities a sandbox has
-- (M.CAPS, Docker's default set), and takes out of every unconditional
-- allow what Docker's default allows only with a capability a sandbox
-- lacks, or never (M.DENIED: also the 32-bit names Docker's default does
-- not list); clone is then allowed only without the flags that make
-- namespaces, clone3 fails with ENOSYS (a libc falls back to clone) and
-- socket takes any family but AF_VSOCK, as in Docker's. Compared name by
-- name with Docker's default profile (moby's profiles/seccomp/default.json)
-- for these capabilities on x86-64: nothing allowed here that it denies. Anything not allowed fails with the
-- profile's default errno.
local json = require "rock.json"
local errors = require "rock.errors"

local M = {}

--- Docker's default capabilities.
M.CAPS = { "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
  "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
  "CAP_KILL", "CAP_AUDIT_WRITE" }

M.PROFILE = "/usr/share/containers/seccomp.json"

--- What Docker's default does not allow a container with M.CAPS (taken
--- out of the unconditional allows; clone and clone3 come back below).
M.DENIED = {}
for name in ([[acct add_key bpf clock_settime clock_settime64 settimeofday stime create_module
  delete_module finit_module init_module get_kernel_syms ioperm iopl kcmp process_madvise kexec_file_load
  kexec_load keyctl request_key lookup_dcookie mount umount umount2 mount_setattr move_mount open_tree
  fsopen fsconfig fsmount fspick name_to_handle_at open_by_handle_at nfsservctl perf_event_open
  fanotify_init pivot_root quotactl quotactl_fd reboot setns unshare swapon swapoff sysfs _sysctl syslog
  uselib userfaultfd ustat vm86 vm86old vhangup sethostname setdomainname mbind set_mempolicy
  get_mempolicy move_pages pidfd_getfd memfd_secret clone clone3
  readdir sigaction signal sigpending sigsuspend syscall timerfd socket]]):gmatch("%S+") do
  M.DENIED[name] = true
end

local ARCH = "amd64"
-- clone's flags that make namespaces (CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET)
local CLONE_NS = 0x7E020000

local function list_of(v) return type(v) == "table" and v or {} end

local function set(list)
  local s = {}
  for _, v in ipairs(list or {}) do s[v] = true end
  return s
end

-- Does rule apply to a sandbox on ARCH with caps?
local function applies(rule, caps)
  local inc, exc = list_of(rule.includes), list_of(rule.excludes)
  for _, c in ipairs(list_of(inc.caps)) do if not caps[c] then return false end end
  for _, c in ipairs(list_of(exc.caps)) do if caps[c] then return false end end
  if #list_of(inc.arches) > 0 and not set(list_of(inc.arches))[ARCH] then return false end
  if set(list_of(exc.arches))[ARCH] then return false end
  if type(inc.minKernel) == "string" or type(exc.minKernel) == "string" then return false end
  return true
end

local made = {} -- path -> the profile made from it (once per process)

--- The OCI linux.seccomp for a sandbox. Raises engine_unavailable when
--- the profile cannot be read (install containers-common).
function M.profile()
  local path = os.getenv("ROCK_SECCOMP_PROFILE") or M.PROFILE
  if not made[path] then made[path] = M.make(path) end
  return made[path]
end

--- The OCI linux.seccomp made from the profile at path.
function M.make(path)
  local f = io.open(path, "rb")
  if not f then
    errors.raise("engine_unavailable", "runc backend: no seccomp profile at " .. path .. " (Debian's " ..
      "containers-common has it; ROCK_SECCOMP_PROFILE names another)")
  end
  local ok, src = pcall(json.decode, f:read("a"))
  f:close()
  if not ok or type(src) ~= "table" or type(src.syscalls) ~= "table" then
    errors.raise("engine_unavailable", "runc backend: " .. path .. " is no seccomp profile")
  end
  local caps = set(M.CAPS)
  local out = json.array()
  for _, rule in ipairs(src.syscalls) do
    if applies(rule, caps) and type(rule.names) == "table" then
      local names = json.array()
      local args = #list_of(rule.args) > 0 and rule.args or nil
      local plain = rule.action == "SCMP_ACT_ALLOW" and not args
      for _, n in ipairs(rule.names) do
        if not (plain and M.DENIED[n]) then names[#names + 1] = n end
      end
      if #names > 0 then
        out[#out + 1] = { names = names, action = rule.action, args = args,
          errnoRet = type(rule.errnoRet) == "number" and rule.errnoRet or nil }
      end
    end
  end
  out[#out + 1] = { names = json.array{ "clone" }, action = "SCMP_ACT_ALLOW",
    args = { { index = 0, value = CLONE_NS, valueTwo = 0, op = "SCMP_CMP_MASKED_EQ" } } }
  out[#out + 1] = { names = json.array{ "clone3" }, action = "SCMP_ACT_ERRNO", errnoRet = 38 }
  -- socket of any family but AF_VSOCK (40): a sandbox has no business with its hypervisor
  out[#out + 1] = { names = json.array{ "socket" }, action = "SCMP_ACT_ALLOW",
    args = { { index = 0, value = 40, valueTwo = 0, op = "SCMP_CMP_NE" } } }
  return { defaultAction = src.defaultAction or "SCMP_ACT_ERRNO", defaultErrnoRet = src.defaultErrnoRet or 1,
    architectures = json.array{ "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32" }, syscalls = out }
end

return M
