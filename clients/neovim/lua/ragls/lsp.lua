-- Starting/attaching the ragls client on Neovim 0.7 through 0.11+, and sending rag/* requests.
local config = require('ragls.config')
local status = require('ragls.status')
local util = require('ragls.util')

local M = {}

M.roots = {} -- client_id -> root (clients this plugin knows about)
M.mode = nil -- 'config' (>= 0.11), 'start' (0.8 - 0.10), 'start_client' (0.7)

local augroup = nil

function M.detect_mode(opts)
  local forced = opts and opts.attach_mode
  if forced == 'config' and vim.lsp.config and vim.lsp.enable then
    return 'config'
  elseif forced == 'start' and vim.lsp.start then
    return 'start'
  elseif forced == 'start_client' then
    return 'start_client'
  end
  if util.has('0.11') and vim.lsp.config and vim.lsp.enable then
    return 'config'
  elseif vim.lsp.start then
    return 'start'
  end
  return 'start_client'
end

-- Handlers ----------------------------------------------------------------------------------

local function ensure_state(client_id)
  if not status.get(client_id) then
    local client = vim.lsp.get_client_by_id(client_id)
    status.init(client_id, client and util.client_root(client) or M.roots[client_id])
  end
end

--- Refreshes the index state with a rag/indexStatus request.
function M.refresh(client_id, cb)
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or util.is_stopped(client) then
    if cb then
      cb('client not running', nil)
    end
    return
  end
  util.request(client, 'rag/indexStatus', vim.empty_dict(), function(err, result)
    if not err and type(result) == 'table' then
      ensure_state(client_id)
      status.apply_index_status(client_id, result)
    end
    if cb then
      cb(err, result)
    end
  end)
end

function M.handlers(extra)
  local h = {
    ['$/progress'] = function(err, result, ctx, cfg)
      -- keep the core behaviour (client.progress, LspProgress on >= 0.10,
      -- User LspProgressUpdate on 0.7 - 0.9) and any handler the user installed globally
      local default = vim.lsp.handlers['$/progress']
      local ret
      if default then
        ret = default(err, result, ctx, cfg)
      end
      if ctx and ctx.client_id and type(result) == 'table' then
        ensure_state(ctx.client_id)
        status.apply_progress(ctx.client_id, result)
        if type(result.value) == 'table' and result.value.kind == 'end' then
          M.refresh(ctx.client_id)
        end
      end
      return ret
    end,
    ['rag/statusChanged'] = function(_, result, ctx)
      if ctx and ctx.client_id then
        ensure_state(ctx.client_id)
        status.apply_index_status(ctx.client_id, result)
      end
    end,
  }
  if extra then
    for k, v in pairs(extra) do
      h[k] = v
    end
  end
  return h
end

function M.capabilities(opts)
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  caps.workspace = caps.workspace or {}
  caps.workspace.configuration = true
  if opts.capabilities then
    caps = vim.tbl_deep_extend('force', caps, opts.capabilities)
  end
  return caps
end

local function on_init(opts)
  return function(client, result)
    M.roots[client.id] = util.client_root(client)
    ensure_state(client.id)
    M.refresh(client.id)
    if opts.on_init then
      opts.on_init(client, result)
    end
  end
end

--- Replaces the folders of an initialize request in place (the client keeps the same table as
--- `client.workspace_folders`): the root, then the `workspace_folders` option, named by base name.
--- Runs in every start path, including vim.lsp.enable() on 0.11, whose folders come from root_dir.
local function before_init(opts)
  return function(params, cfg)
    local root = cfg and cfg.root_dir
    if type(params.workspaceFolders) ~= 'table' or not root then
      return
    end
    local folders = config.workspace_folders(root, config.get())
    if #folders == 0 then
      return
    end
    for i = #params.workspaceFolders, 1, -1 do
      params.workspaceFolders[i] = nil
    end
    for i, f in ipairs(folders) do
      params.workspaceFolders[i] = f
    end
    if opts.before_init then
      opts.before_init(params, cfg)
    end
  end
end

--- The folders a client serves (what it sent at initialize plus later changes).
function M.folders(client)
  return client and type(client.workspace_folders) == 'table' and client.workspace_folders or {}
end

--- 2+ folders: the server labels each result `folder/path` (protocol 3).
function M.is_multi_root(client)
  return #M.folders(client) >= 2
end

--- Adds (`added` true) or removes a folder of a running client: workspace/didChangeWorkspaceFolders,
--- which a protocol-3 server follows (indexes the new folder, stops searching a removed one).
--- Returns nil, or why nothing was sent.
function M.change_folder(client, dir, added)
  if not client or util.is_stopped(client) then
    return 'no ragls server is running'
  end
  dir = util.normalize(vim.fn.expand(dir))
  if added and not util.is_dir(dir) then
    return dir .. ' is not a directory'
  end
  local folder = config.folder(dir)
  local folders = client.workspace_folders or {}
  local at
  for i, f in ipairs(folders) do
    if f.uri == folder.uri then
      at = i
    end
  end
  if added and at then
    return dir .. ' is already a folder of this workspace'
  elseif not added and not at then
    return dir .. ' is not a folder of this workspace'
  end
  local event = { added = {}, removed = {} }
  if added then
    event.added = { folder }
    table.insert(folders, folder)
  else
    event.removed = { folders[at] }
    table.remove(folders, at)
  end
  client.workspace_folders = folders
  util.notify(client, 'workspace/didChangeWorkspaceFolders', { event = event })
  return nil
end

local function on_exit(opts)
  return function(code, signal, client_id)
    vim.schedule(function()
      status.stopped(client_id, code, signal)
      M.roots[client_id] = nil
    end)
    if opts.on_exit then
      opts.on_exit(code, signal, client_id)
    end
  end
end

--- Client config shared by every start path (root known).
function M.client_config(root, opts)
  opts = opts or config.get()
  return {
    name = config.name,
    cmd = config.resolve_cmd(root, opts),
    cmd_env = opts.cmd_env,
    root_dir = root,
    workspace_folders = config.workspace_folders(root, opts),
    before_init = before_init(opts),
    init_options = config.init_options(opts),
    settings = config.settings_payload(opts),
    capabilities = M.capabilities(opts),
    handlers = M.handlers(opts.handlers),
    on_init = on_init(opts),
    on_exit = on_exit(opts),
    on_attach = opts.on_attach,
  }
end

-- Start paths ---------------------------------------------------------------------------------

local warned_missing = {}

--- True when the server command for `root` can be run; warns once per command otherwise.
function M.cmd_ok(root, opts)
  local cmd = config.resolve_cmd(root, opts or config.get())
  if vim.fn.executable(cmd[1]) == 1 then
    return true
  end
  if not warned_missing[cmd[1]] then
    warned_missing[cmd[1]] = true
    util.notify_user(
      'server not found: ' .. cmd[1] .. " (pip install ragls, or set cmd in require('ragls').setup(); see :checkhealth ragls)",
      vim.log.levels.WARN
    )
  end
  return false
end

--- Returns a running (possibly still initialising) ragls client for `root`, if any.
function M.client_for_root(root)
  for id, r in pairs(M.roots) do
    if r == root then
      local c = vim.lsp.get_client_by_id(id)
      if c and not util.is_stopped(c) then
        return c
      end
      M.roots[id] = nil
    end
  end
  for _, c in ipairs(util.get_clients({ name = config.name })) do
    if util.client_root(c) == root and not util.is_stopped(c) then
      M.roots[c.id] = root
      return c
    end
  end
  return nil
end

--- Starts (or reuses) the client for `root` and attaches `bufnr` (optional). Returns the id.
function M.start(root, bufnr, opts)
  opts = opts or config.get()
  local existing = M.client_for_root(root)
  if existing then
    if bufnr and not vim.lsp.buf_is_attached(bufnr, existing.id) then
      vim.lsp.buf_attach_client(bufnr, existing.id)
    end
    return existing.id
  end
  if not M.cmd_ok(root, opts) then
    return nil
  end
  local cfg = M.client_config(root, opts)
  local id
  if M.mode == 'config' then
    local resolved = vim.deepcopy(vim.lsp.config[config.name] or {})
    resolved = vim.tbl_deep_extend('force', resolved, { root_dir = root, workspace_folders = cfg.workspace_folders })
    if type(resolved.cmd) ~= 'function' then
      resolved.cmd = cfg.cmd
    end
    id = vim.lsp.start(resolved, { bufnr = bufnr, attach = bufnr ~= nil })
  elseif M.mode == 'start' and bufnr then
    id = vim.lsp.start(cfg, { bufnr = bufnr })
  else
    id = vim.lsp.start_client(cfg)
    if id and bufnr then
      vim.lsp.buf_attach_client(bufnr, id)
    end
  end
  if id then
    M.roots[id] = root
    ensure_state(id)
  end
  return id
end

--- Stops the client of `root` (if any) and attaches its loaded buffers to a new one, whose
--- command is resolved again (after the user trusted the folder, for example). cb(client_id)
function M.restart(root, cb)
  local opts = config.get()
  local old = M.client_for_root(root)
  local function start_again()
    local id
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and config.buf_root(b, opts) == root then
        id = M.start(root, b, opts) or id
      end
    end
    if cb then
      cb(id)
    end
  end
  if not old then
    return start_again()
  end
  util.stop(old)
  local deadline = vim.loop.now() + 10000
  local function poll()
    if util.is_stopped(old) or vim.loop.now() > deadline then
      if not util.is_stopped(old) then
        util.stop(old, true)
      end
      M.roots[old.id] = nil
      return start_again()
    end
    vim.defer_fn(poll, 50)
  end
  poll()
end

--- Attaches a buffer when it belongs to a workspace (the autocmd body on 0.7 - 0.10 and for
--- buffers without a filetype on 0.11).
function M.maybe_attach(bufnr, opts)
  opts = opts or config.get()
  if not vim.api.nvim_buf_is_valid(bufnr) or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local root = config.buf_root(bufnr, opts)
  if not root then
    return
  end
  if M.mode == 'config' then
    -- vim.lsp.enable() handles every buffer with a filetype
    if vim.bo[bufnr].filetype ~= '' then
      return
    end
  end
  M.start(root, bufnr, opts)
end

function M.setup(opts)
  M.mode = M.detect_mode(opts)
  augroup = vim.api.nvim_create_augroup('ragls', { clear = true })

  if M.mode == 'config' then
    local base = M.client_config('/', opts)
    local lsp_cfg = {
      cmd = function(dispatchers, cfg)
        local root = cfg and cfg.root_dir or vim.fn.getcwd()
        local cmd = config.resolve_cmd(root, config.get())
        return vim.lsp.rpc.start(cmd, dispatchers, { cwd = cfg and cfg.cmd_cwd, env = cfg and cfg.cmd_env })
      end,
      cmd_env = opts.cmd_env,
      root_dir = function(bufnr, on_dir)
        local root = config.buf_root(bufnr, config.get())
        if root and M.cmd_ok(root) then
          on_dir(root)
        end
      end,
      filetypes = opts.filetypes,
      init_options = base.init_options,
      settings = base.settings,
      capabilities = base.capabilities,
      handlers = base.handlers,
      on_init = base.on_init,
      on_exit = base.on_exit,
      before_init = base.before_init,
      on_attach = opts.on_attach,
      workspace_required = true,
    }
    vim.lsp.config(config.name, lsp_cfg)
    if opts.autostart ~= false then
      vim.lsp.enable(config.name)
    end
  end

  if opts.autostart ~= false then
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'FileType' }, {
      group = augroup,
      callback = function(args)
        local buf = args.buf
        -- run after filetype detection has settled
        vim.schedule(function()
          M.maybe_attach(buf, config.get())
        end)
      end,
    })
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) ~= '' then
        if M.mode == 'config' and vim.bo[buf].filetype ~= '' and vim.v.vim_did_enter == 1 then
          -- vim.lsp.enable() already ran doautoall FileType for these
        else
          M.maybe_attach(buf, opts)
        end
      end
    end
  end
end

-- Requests ----------------------------------------------------------------------------------

--- Picks the ragls client for a buffer: attached client, else client whose root contains the
--- buffer's file or the cwd, else the only client, else starts one for the buffer's or cwd's root.
function M.get_client(bufnr, start_if_missing)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.api.nvim_buf_is_valid(bufnr) then
    local attached = util.get_clients({ bufnr = bufnr, name = config.name })
    if attached[1] then
      return attached[1]
    end
  end
  local path = vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_name(bufnr) or ''
  local cwd = vim.fn.getcwd()
  local candidates = {}
  for id, root in pairs(M.roots) do
    local c = vim.lsp.get_client_by_id(id)
    if c and not util.is_stopped(c) then
      table.insert(candidates, c)
      if (path ~= '' and util.is_inside(path, root)) or util.is_inside(cwd, root) then
        return c
      end
    end
  end
  for _, c in ipairs(util.get_clients({ name = config.name })) do
    -- a client that is shutting down is still listed for a while
    if not util.is_stopped(c) then
      local root = util.client_root(c)
      if (path ~= '' and util.is_inside(path, root)) or util.is_inside(cwd, root) then
        return c
      end
      table.insert(candidates, c)
    end
  end
  if #candidates == 1 then
    return candidates[1]
  end
  if start_if_missing then
    local opts = config.get()
    local root = (path ~= '' and config.find_root(path, opts, bufnr)) or config.find_root(cwd, opts)
    if root then
      local id = M.start(root, nil, opts)
      return id and vim.lsp.get_client_by_id(id) or nil
    end
  end
  return nil
end

--- Sends a request once the client is initialised. cb(err, result, client)
function M.request(method, params, cb, opts)
  opts = opts or {}
  local client = opts.client or M.get_client(opts.bufnr, opts.start ~= false)
  if not client then
    cb({ message = 'no ragls server for this buffer or directory (no workspace root found?)' }, nil, nil)
    return
  end
  local deadline = vim.loop.now() + (opts.timeout_ms or 30000)
  local function send()
    if util.is_stopped(client) then
      cb({ message = 'ragls server is not running' }, nil, client)
      return
    end
    if not client.initialized then
      if vim.loop.now() > deadline then
        cb({ message = 'ragls server did not initialise in time' }, nil, client)
        return
      end
      vim.defer_fn(send, 50)
      return
    end
    local ok = util.request(client, method, params, function(err, result)
      cb(err, result, client)
    end)
    if not ok then
      cb({ message = 'could not send ' .. method }, nil, client)
    end
  end
  send()
end

--- Blocking variant of M.request. Returns err, result, client.
function M.request_sync(method, params, opts)
  opts = opts or {}
  local done, r_err, r_res, r_client = false, nil, nil, nil
  M.request(method, params, function(err, result, client)
    done, r_err, r_res, r_client = true, err, result, client
  end, opts)
  local timeout = opts.timeout_ms or 30000
  local ok = vim.wait(timeout, function()
    return done
  end, 20)
  if not ok then
    return { message = method .. ' timed out after ' .. timeout .. ' ms' }, nil, r_client
  end
  return r_err, r_res, r_client
end

function M.format_err(err)
  if err == nil then
    return nil
  end
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

return M
