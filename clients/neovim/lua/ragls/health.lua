-- :checkhealth ragls
local M = {}

local function reporter()
  local h = vim.health
  if not (h and (h.start or h.report_start)) then
    h = require('health') -- 0.7
  end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    info = h.info or h.report_info,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
  }
end

local function camel(s)
  return (s:gsub('_(%l)', function(c)
    return c:upper()
  end))
end

local function json_type(prop)
  if prop.type then
    return prop.type, false
  end
  local t, nullable = nil, false
  for _, alt in ipairs(prop.anyOf or {}) do
    if alt.type == 'null' then
      nullable = true
    else
      t = alt.type
      prop = alt
    end
  end
  return t, nullable, prop
end

--- Problems with one value against its JSON Schema entry (type, enum, bounds), or nil.
local function check_value(key, v, prop)
  local t, nullable, inner = json_type(prop)
  inner = inner or prop
  if v == vim.NIL then
    return (not nullable) and ('`' .. key .. '` may not be null') or nil
  end
  local ok = (t == 'string' and type(v) == 'string')
    or (t == 'boolean' and type(v) == 'boolean')
    or (t == 'number' and type(v) == 'number')
    or (t == 'integer' and type(v) == 'number' and math.floor(v) == v)
    or (t == 'array' and type(v) == 'table')
    or (t == 'object' and type(v) == 'table')
  if not ok then
    return string.format('`%s` must be %s %s', key, t == 'integer' and 'an' or 'a', t == 'array' and 'list' or tostring(t))
  end
  if inner.enum and not vim.tbl_contains(inner.enum, v) then
    return string.format('`%s` must be one of %s', key, table.concat(inner.enum, ', '))
  end
  if type(v) == 'number' then
    if (inner.minimum and v < inner.minimum) or (inner.exclusiveMinimum and v <= inner.exclusiveMinimum) then
      return string.format('`%s` is below its minimum (%s)', key, tostring(inner.minimum or inner.exclusiveMinimum))
    end
    if inner.maximum and v > inner.maximum then
      return string.format('`%s` is above its maximum (%s)', key, tostring(inner.maximum))
    end
  end
  return nil
end

--- Checks the settings table against the server's own schema (`ragls schema --flat`: dotted
--- camelCase key -> JSON Schema; see M.server_schema). Returns warnings (wrong types, values
--- out of range) and infos (names the server does not know: it ignores them). snake_case
--- names are fine: the server accepts both.
function M.lint_settings(settings, schema)
  local warnings, infos = {}, {}
  if type(settings) ~= 'table' then
    return { 'settings must be a table' }, infos
  end
  local sections = {}
  for key in pairs(schema) do
    local dot = key:find('.', 1, true)
    if dot then
      sections[key:sub(1, dot - 1)] = true
    end
  end
  local function walk(tbl, prefix)
    for k, v in pairs(tbl) do
      local name = type(k) == 'string' and camel(k) or tostring(k)
      local key = prefix .. name
      if schema[key] then
        local problem = check_value(key, v, schema[key])
        if problem then
          table.insert(warnings, problem)
        end
      elseif prefix == '' and sections[name] then
        if type(v) ~= 'table' then
          table.insert(warnings, '`' .. key .. '` must be a table')
        else
          walk(v, key .. '.')
        end
      else
        table.insert(infos, 'setting `' .. prefix .. tostring(k) .. '` is not one the server knows (it ignores unknown keys)')
      end
    end
  end
  walk(settings, '')
  return warnings, infos
end

local function run(argv)
  local out, err = {}, {}
  local ok, job = pcall(vim.fn.jobstart, argv, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data)
      vim.list_extend(out, data or {})
    end,
    on_stderr = function(_, data)
      vim.list_extend(err, data or {})
    end,
  })
  local what = '`' .. table.concat(argv, ' ') .. '`'
  if not ok or job <= 0 then
    return nil, 'could not run ' .. what
  end
  local res = vim.fn.jobwait({ job }, 20000)[1]
  if res == -1 then
    pcall(vim.fn.jobstop, job)
    return nil, what .. ' timed out'
  end
  local text = vim.trim(table.concat(out, '\n'))
  if res ~= 0 then
    return nil, string.format('%s exited %d: %s', what, res, vim.trim(table.concat(err, '\n')))
  end
  return text, nil
end

--- The server's settings schema, from the server itself (`<exe> schema --flat`): the single
--- source, so this check never drifts from the server that runs. nil, err on failure.
function M.server_schema(exe)
  local text, err = run({ exe, 'schema', '--flat' })
  if not text then
    return nil, err
  end
  local ok, schema = pcall(vim.fn.json_decode, text)
  if not ok or type(schema) ~= 'table' then
    return nil, 'cannot parse `' .. exe .. ' schema --flat`'
  end
  return schema, nil
end

local function run_version(cmd)
  local text, err = run({ cmd, '--version' })
  return text, err
end

function M.check()
  local r = reporter()
  local util = require('ragls.util')
  local config = require('ragls.config')
  local lsp = require('ragls.lsp')
  local ragls = require('ragls')

  r.start('ragls: Neovim')
  local v = vim.version()
  local vstr = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if not util.has('0.7') then
    r.error('Neovim ' .. vstr .. ' is too old: ragls needs 0.7 or newer')
    return
  end
  local mode = lsp.mode or lsp.detect_mode()
  local how = ({
    config = 'vim.lsp.config() + vim.lsp.enable()',
    start = 'vim.lsp.start()',
    start_client = 'vim.lsp.start_client() + buf_attach_client()',
  })[mode]
  r.ok('Neovim ' .. vstr .. ': attaching with ' .. how)
  if not ragls._setup_done then
    if mode == 'config' and vim.lsp.is_enabled and vim.lsp.is_enabled('ragls') then
      r.ok('setup() not called, but vim.lsp.enable("ragls") is active')
    else
      r.warn("require('ragls').setup() has not been called: no buffer will attach", {
        "Add require('ragls').setup({}) to your init.lua (see :help ragls-setup)",
      })
    end
  end
  if mode == 'config' and vim.fn.exists('#filetypedetect') == 0 then
    r.warn('filetype detection is off: vim.lsp.enable() attaches on FileType', { 'Run :filetype on' })
  end

  local opts = config.get()
  r.start('ragls: workspace')
  -- :checkhealth runs in its own (health://) buffer: the file the user came from is the
  -- alternate buffer
  local probe = vim.fn.getcwd()
  for _, name in ipairs({ vim.api.nvim_buf_get_name(0), vim.fn.fnamemodify(vim.fn.bufname('#'), ':p') }) do
    if name ~= '' and not name:match('^%a[%w+.-]*://') and util.exists(name) then
      probe = name
      break
    end
  end
  local root = config.find_root(probe, opts, 0)
  if root then
    r.ok('workspace root: ' .. root)
    local home = util.normalize(vim.loop.os_homedir() or '')
    if root == home or root == '/' then
      r.warn('the workspace root is ' .. root .. ': ragls would index all of it', {
        'Add a root marker (.git, pyproject.toml, .ragls.toml, ...) to your project, or set root_dir',
      })
    end
    if util.exists(root .. '/.ragls.toml') then
      r.info('.ragls.toml found in the root (setup() settings override it)')
    end
  else
    r.warn('no workspace root found from ' .. probe, {
      'Root markers: ' .. table.concat(opts.root_markers, ' '),
      'Open a file inside a project or set root_markers / root_dir in setup()',
    })
  end
  if opts.filetypes then
    r.info('attaching only to filetypes: ' .. table.concat(opts.filetypes, ', '))
  end

  r.start('ragls: server')
  local server = config.server(root, opts)
  local cmd = server.cmd
  local exe = cmd[1]
  if not util.is_executable(exe) then
    r.error('server not found: ' .. exe .. ' (' .. server.why .. ')', {
      'pip install ragls so that `ragls` is on PATH, or set cmd = { "/path/to/ragls" } in setup()',
    })
  else
    local args = #cmd > 1 and (' ' .. table.concat(cmd, ' ', 2)) or ''
    r.ok('server: ' .. vim.fn.exepath(exe) .. args .. ' (' .. server.why .. ')')
    local version, err = run_version(exe)
    if version then
      r.ok('version: ' .. version)
    else
      r.warn(err)
    end
  end
  if server.untrusted then
    r.warn(
      'workspace program ' .. server.untrusted .. ' is not started: a program inside a workspace runs only when you trust the folder',
      require('ragls.trust').how_to(root, server.untrusted)
    )
  end
  if type(opts.trusted_folders) == 'table' and #opts.trusted_folders > 0 then
    r.info('trusted_folders: ' .. table.concat(opts.trusted_folders, ', '))
  end

  local schema, serr = nil, 'the server was not found'
  if util.is_executable(exe) then
    schema, serr = M.server_schema(exe)
  end
  if not schema then
    r.info('settings not checked: ' .. tostring(serr))
  else
    local lint, infos = M.lint_settings(opts.settings or {}, schema)
    if #lint == 0 then
      r.ok('settings match the server\'s schema (`ragls schema --flat`)')
    else
      for _, w in ipairs(lint) do
        r.warn(w, { 'See :help ragls-settings and `ragls schema --flat`' })
      end
    end
    for _, i in ipairs(infos) do
      r.info(i)
    end
  end
  local s = opts.settings or {}
  local function env_set(name)
    local val = (opts.cmd_env and opts.cmd_env[name]) or vim.env[name]
    return val ~= nil and val ~= ''
  end
  local emb = type(s.embedder) == 'table' and s.embedder or {}
  if type(emb.apiKeyEnv) == 'string' and emb.provider and emb.provider ~= 'local' and not env_set(emb.apiKeyEnv) then
    r.warn('embedder.apiKeyEnv is ' .. emb.apiKeyEnv .. ' but that environment variable is not set')
  end
  local qd = type(s.qdrant) == 'table' and s.qdrant or {}
  if type(qd.url) == 'string' and type(qd.apiKeyEnv) == 'string' and not env_set(qd.apiKeyEnv) then
    r.info('qdrant.apiKeyEnv is ' .. qd.apiKeyEnv .. ' and not set: fine only if ' .. qd.url .. ' needs no key')
  end
  local caps = opts.capabilities
  if caps and caps.window and caps.window.workDoneProgress == false then
    r.warn('capabilities.window.workDoneProgress is false: no indexing progress will be shown')
  end

  r.start('ragls: index')
  local clients = util.get_clients({ name = 'ragls' })
  if #clients == 0 then
    r.info('no ragls client is running (open a file in a workspace, or run :RagStatus)')
    return
  end
  local by_root = {}
  for _, c in ipairs(clients) do
    local croot = util.client_root(c) or '?'
    if by_root[croot] then
      r.warn('two ragls clients serve ' .. croot .. ' (ids ' .. by_root[croot] .. ', ' .. c.id .. ')', {
        'Configure ragls once: either require("ragls").setup() or nvim-lspconfig / vim.lsp.config, not both',
      })
    end
    by_root[croot] = c.id
    local err, st = lsp.request_sync('rag/indexStatus', vim.empty_dict(), { client = c, timeout_ms = 5000 })
    if err then
      r.error(string.format('client %d (%s): rag/indexStatus failed: %s', c.id, croot, lsp.format_err(err)))
    else
      local lines = require('ragls.commands').status_lines(st, c)
      local head = table.remove(lines, 1)
      if st.state == 'error' then
        r.error(head .. '\n' .. table.concat(lines, '\n'))
      elseif st.state == 'indexing' then
        r.info(head .. '\n' .. table.concat(lines, '\n'))
      else
        r.ok(head .. '\n' .. table.concat(lines, '\n'))
      end
      if (tonumber(st.filesFailed) or 0) > 0 then
        r.warn(string.format('%d file(s) failed to index; see the errors above or :RagStatus', st.filesFailed))
      end
      if st.state == 'ready' and (tonumber(st.filesTotal) or 0) == 0 then
        r.warn('the index is empty: check include/exclude settings and .gitignore')
      end
    end
  end
end

return M
