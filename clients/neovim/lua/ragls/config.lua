-- Options: defaults, normalisation, root detection and server command resolution.
local util = require('ragls.util')

local M = {}

M.name = 'ragls'

M.default_root_markers = {
  '.ragls.toml',
  '.git',
  '.hg',
  '.svn',
  'pyproject.toml',
  'setup.py',
  'setup.cfg',
  'package.json',
  'go.mod',
  'Cargo.toml',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'settings.gradle',
  'settings.gradle.kts',
  'composer.json',
  'Gemfile',
  'mix.exs',
  'deno.json',
  'CMakeLists.txt',
  '*.sln',
}

-- Server settings (camelCase, section `ragls`). They may also be given at the top level of
-- setup() for convenience; they are moved into `settings`.
M.setting_keys = {
  'include',
  'exclude',
  'maxFileBytes',
  'embedder',
  'qdrant',
  'retrieval',
  'indexing',
}

M.defaults = {
  -- string[] or fun(root_dir: string): string[]; nil = `ragls` on PATH (a workspace's own
  -- .venv/bin/ragls only when the folder is trusted, see ragls.trust)
  cmd = nil,
  trusted_folders = nil, -- string[]: workspace roots whose .venv/bin/ragls may run
  cmd_env = nil,
  root_markers = nil, -- nil = M.default_root_markers
  root_dir = nil, -- string or fun(path: string, bufnr: integer): string|nil
  -- string[] or fun(root: string): string[]: more folders the same server indexes and searches
  -- with the root (a multi-root workspace, protocol 3); nil = the root alone
  workspace_folders = nil,
  filetypes = nil, -- nil = every filetype (and buffers without one)
  autostart = true,
  attach_mode = nil, -- nil = by version; 'config' | 'start' | 'start_client' to force one
  settings = {},
  init_options = nil, -- nil = same table as settings
  capabilities = nil,
  on_attach = nil,
  handlers = nil,
  search = {
    top_k = 20,
    open = true, -- :copen after :RagSearch
  },
  context = {
    register = '"', -- register that :RagContext fills (false to skip)
    scratch = true, -- also open a scratch buffer (:RagContext! skips it)
    top_k = nil, -- nil = server default (retrieval.topK)
    max_chars = nil, -- nil = server default (retrieval.maxChars)
    timeout_ms = 15000, -- blocking variants
  },
  status = {
    prefix = 'RAG',
    ready = '✓',
    error = '✗',
    busy = '…',
  },
}

M.options = nil

local function is_list(t)
  if type(t) ~= 'table' then
    return false
  end
  if vim.tbl_islist then
    return vim.tbl_islist(t)
  end
  return vim.islist(t)
end

function M.is_list(t)
  return is_list(t)
end

--- Merges user options over the defaults.
function M.build(opts)
  opts = vim.deepcopy(opts or {})
  local settings = opts.settings or {}
  for _, key in ipairs(M.setting_keys) do
    if opts[key] ~= nil then
      if settings[key] == nil then
        settings[key] = opts[key]
      elseif type(settings[key]) == 'table' and type(opts[key]) == 'table' and not is_list(opts[key]) then
        settings[key] = vim.tbl_deep_extend('force', settings[key], opts[key])
      end
      opts[key] = nil
    end
  end
  opts.settings = settings
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- lists replace, never merge
  if opts.root_markers then
    merged.root_markers = opts.root_markers
  end
  if opts.cmd then
    merged.cmd = opts.cmd
  end
  if opts.filetypes then
    merged.filetypes = opts.filetypes
  end
  if opts.workspace_folders then
    merged.workspace_folders = opts.workspace_folders
  end
  merged.root_markers = merged.root_markers or vim.deepcopy(M.default_root_markers)
  return merged
end

function M.get()
  if not M.options then
    M.options = M.build({})
  end
  return M.options
end

function M.set(opts)
  M.options = M.build(opts)
  return M.options
end

--- Marker match that understands simple globs such as `*.sln`.
local function has_marker(dir, marker)
  if marker:find('[%*%?%[]') then
    return #vim.fn.glob(dir .. '/' .. marker, true, true) > 0
  end
  return util.exists(dir .. '/' .. marker)
end

--- Root directory for a path (file or directory), or nil.
function M.find_root(path, opts, bufnr)
  opts = opts or M.get()
  if type(opts.root_dir) == 'string' then
    return util.normalize(opts.root_dir)
  end
  if type(opts.root_dir) == 'function' then
    local r = opts.root_dir(path, bufnr)
    return r and util.normalize(r) or nil
  end
  if not path or path == '' then
    return nil
  end
  local dir = util.normalize(path)
  if not util.is_dir(dir) then
    dir = util.dirname(dir)
  end
  while dir and dir ~= '' do
    for _, marker in ipairs(opts.root_markers) do
      if has_marker(dir, marker) then
        return dir
      end
    end
    local parent = util.dirname(dir)
    if parent == dir then
      break
    end
    dir = parent
  end
  return nil
end

--- An option that is a list, one string, or fun(root) returning either: as a list (or nil).
local function list_for_root(v, root)
  if type(v) == 'function' then
    v = v(root)
  end
  if type(v) == 'string' then
    v = { v }
  end
  return v
end

--- An LSP WorkspaceFolder for a directory, named by its base name (the server labels results
--- `name/path` in a multi-root workspace and makes equal names unique itself).
function M.folder(dir)
  dir = util.normalize(dir)
  local name = vim.fn.fnamemodify(dir, ':t')
  return { uri = vim.uri_from_fname(dir), name = name ~= '' and name or dir }
end

--- The workspace folders sent at initialize for a root: the root first, then the existing
--- directories of the `workspace_folders` option, each once.
function M.workspace_folders(root, opts)
  opts = opts or M.get()
  local dirs = { root }
  local extra = list_for_root(opts.workspace_folders, root)
  for _, d in ipairs(type(extra) == 'table' and extra or {}) do
    table.insert(dirs, vim.fn.expand(d))
  end
  local seen, out = {}, {}
  for _, d in ipairs(dirs) do
    local n = util.normalize(d)
    if n and n ~= '' and not seen[n] and util.is_dir(n) then
      seen[n] = true
      table.insert(out, M.folder(n))
    end
  end
  return out
end

--- Root for a buffer, or nil when the buffer is not a file of a workspace.
function M.buf_root(bufnr, opts)
  opts = opts or M.get()
  if vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil
  end
  if opts.filetypes and not vim.tbl_contains(opts.filetypes, vim.bo[bufnr].filetype) then
    return nil
  end
  return M.find_root(name, opts, bufnr)
end

-- Programs a workspace may ship; started only when the user trusts the folder (ragls.trust).
M.workspace_programs = { '.venv/bin/ragls', 'venv/bin/ragls', '.venv/Scripts/ragls.exe' }

--- The server for a workspace root and why it was chosen:
--- { cmd, source = 'setup' | 'workspace' | 'path', why, untrusted = <workspace program not used> }
--- Order: `cmd` from setup(); a workspace program when the user trusts the folder; `ragls` on PATH.
function M.server(root, opts)
  opts = opts or M.get()
  local cmd = list_for_root(opts.cmd, root)
  if cmd and #cmd > 0 then
    return { cmd = vim.deepcopy(cmd), source = 'setup', why = 'cmd from setup()' }
  end
  local untrusted = nil
  if root then
    for _, rel in ipairs(M.workspace_programs) do
      local candidate = root .. '/' .. rel
      if util.is_executable(candidate) then
        local reason = require('ragls.trust').reason(root, candidate, opts)
        if reason then
          return { cmd = { candidate }, source = 'workspace', why = 'workspace program: ' .. reason }
        end
        untrusted = untrusted or candidate
      end
    end
  end
  local why = '`ragls` on PATH (default)'
  if untrusted then
    why = why .. '; ' .. untrusted .. ' is not used: the folder is not trusted'
  end
  return { cmd = { 'ragls' }, source = 'path', why = why, untrusted = untrusted }
end

local warned_untrusted = {}

--- The server command for a workspace root (see M.server). Warns once per workspace program
--- that is present but not trusted.
function M.resolve_cmd(root, opts)
  local s = M.server(root, opts)
  if s.untrusted and not warned_untrusted[s.untrusted] then
    warned_untrusted[s.untrusted] = true
    local how = require('ragls.trust').how_to(root, s.untrusted)
    util.notify_user(
      string.format(
        'not starting %s: programs inside a workspace run only when you trust the folder. Using `ragls` from PATH. To use it: %s',
        s.untrusted,
        table.concat(how, ' | ')
      ),
      vim.log.levels.WARN
    )
  end
  return s.cmd
end

--- initializationOptions and settings payloads.
function M.init_options(opts)
  opts = opts or M.get()
  return util.dict(vim.deepcopy(opts.init_options or opts.settings))
end

function M.settings_payload(opts)
  opts = opts or M.get()
  return { ragls = util.dict(vim.deepcopy(opts.settings)) }
end

return M
