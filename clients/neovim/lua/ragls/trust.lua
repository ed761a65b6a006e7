-- Whether a program found inside a workspace may be started.
--
-- Everything inside a workspace is untrusted: a cloned repository can ship an executable
-- `.venv/bin/ragls`. Only the user grants trust, in one of two places outside the workspace:
--   * setup({ trusted_folders = { '/abs/root', ... } })   (every Neovim version)
--   * Neovim's trust database (vim.secure, 0.9+; `:trust`, vim.secure.trust()): the workspace
--     folder itself (0.11+, where the database holds directories) or the program file (pinned
--     to its sha256, so an edited file is no longer trusted).
-- Nothing the workspace contains (exrc, .ragls.toml, any file) is consulted.
local util = require('ragls.util')

local M = {}

local uv = vim.uv or vim.loop

--- Canonical absolute path (symlinks resolved), or nil when it does not exist.
function M.realpath(path)
  if not path or path == '' then
    return nil
  end
  return uv.fs_realpath(util.normalize(path))
end

--- True when `root` is listed (exactly, not as a parent) in opts.trusted_folders.
function M.in_trusted_folders(root, opts)
  local list = opts and opts.trusted_folders
  if type(list) ~= 'table' then
    return false
  end
  local real = M.realpath(root)
  if not real then
    return false
  end
  for _, folder in ipairs(list) do
    if type(folder) == 'string' and M.realpath(vim.fn.expand(folder)) == real then
      return true
    end
  end
  return false
end

function M.has_secure()
  return type(vim.secure) == 'table' and type(vim.secure.read) == 'function'
end

-- The trust database entries (path -> sha256, 'directory' or '!'). vim.secure.read() prompts
-- for any path it does not already trust, and a file open must never prompt, so the entry is
-- looked up first and vim.secure.read() is asked only when it will answer without a prompt.
local function db_entry(fullpath)
  local f = io.open(vim.fn.stdpath('state') .. '/trust', 'r')
  if not f then
    return nil
  end
  local contents = f:read('*a') or ''
  f:close()
  for line in contents:gmatch('[^\n]+') do
    local hash, file = line:match('^(%S+) (.+)$')
    if file == fullpath then
      return hash
    end
  end
  return nil
end

local function file_sha256(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local data = f:read('*a')
  f:close()
  return data and vim.fn.sha256(data) or nil
end

--- True when Neovim's trust database trusts `path` (a folder, or a file with unchanged content).
function M.secure_trusted(path)
  if not M.has_secure() then
    return false
  end
  local fullpath = M.realpath(path)
  if not fullpath then
    return false
  end
  local entry = db_entry(fullpath)
  if not entry or entry == '!' then
    return false
  end
  if util.is_dir(fullpath) then
    if entry ~= 'directory' then
      return false
    end
  elseif entry ~= file_sha256(fullpath) then
    return false
  end
  local ok, res = pcall(vim.secure.read, fullpath)
  return ok and res ~= nil and res ~= false
end

--- Why the workspace program `exe` (inside `root`) may run, or nil when it may not.
function M.reason(root, exe, opts)
  if M.in_trusted_folders(root, opts) then
    return 'the folder is in trusted_folders'
  end
  if M.secure_trusted(root) then
    return 'the folder is trusted in Neovim\'s trust database (:trust)'
  end
  if M.secure_trusted(exe) then
    return 'the program is trusted in Neovim\'s trust database (:trust)'
  end
  return nil
end

--- How a user trusts `root` on this Neovim (lines for messages and :checkhealth).
function M.how_to(root, exe)
  local lines = {
    string.format("require('ragls').setup({ cmd = { %q } })", exe),
    string.format("require('ragls').setup({ trusted_folders = { %q } })", root),
  }
  if M.has_secure() and util.has('0.11') then
    table.insert(lines, ':RagTrust (Neovim asks whether to allow the folder; stored in its trust database)')
  elseif M.has_secure() then
    table.insert(lines, ':edit ' .. exe .. ' then :trust (trusts that exact file content)')
  end
  return lines
end

return M
