-- Small compatibility layer over the Neovim APIs that changed between 0.7 and 0.11.
local M = {}

local uv = vim.uv or vim.loop

function M.has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

function M.normalize(path)
  if not path or path == '' then
    return path
  end
  path = vim.fn.fnamemodify(path, ':p')
  if #path > 1 then
    path = path:gsub('[/\\]+$', '')
  end
  return path
end

function M.dirname(path)
  local d = vim.fn.fnamemodify(path, ':h')
  return d
end

function M.exists(path)
  return path ~= nil and uv.fs_stat(path) ~= nil
end

function M.is_dir(path)
  local st = path and uv.fs_stat(path)
  return st ~= nil and st.type == 'directory'
end

function M.is_executable(path)
  return path ~= nil and path ~= '' and vim.fn.executable(path) == 1
end

--- True when `path` is `root` or lies below it.
function M.is_inside(path, root)
  if not path or not root then
    return false
  end
  path = M.normalize(path)
  root = M.normalize(root)
  return path == root or path:sub(1, #root + 1) == root .. '/'
end

-- LSP client helpers ------------------------------------------------------------------------

function M.get_clients(filter)
  filter = filter or {}
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(filter)
  end
  -- 0.7 - 0.9
  local clients = {}
  if filter.bufnr then
    for _, c in pairs(vim.lsp.buf_get_clients(filter.bufnr)) do
      table.insert(clients, c)
    end
  else
    clients = vim.lsp.get_active_clients()
  end
  local out = {}
  for _, c in ipairs(clients) do
    if (not filter.name or c.name == filter.name) and (not filter.id or c.id == filter.id) then
      table.insert(out, c)
    end
  end
  table.sort(out, function(a, b)
    return a.id < b.id
  end)
  return out
end

function M.request(client, method, params, handler, bufnr)
  if M.has('0.11') then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if M.has('0.11') then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.stop(client, force)
  if M.has('0.11') then
    return client:stop(force)
  end
  return client.stop(force)
end

function M.is_stopped(client)
  if M.has('0.11') then
    return client:is_stopped()
  end
  return client.is_stopped()
end

function M.client_settings(client)
  return client.settings or (client.config and client.config.settings) or {}
end

function M.client_root(client)
  return client.root_dir or (client.config and client.config.root_dir)
end

function M.notify_user(msg, level)
  vim.schedule(function()
    vim.notify('[ragls] ' .. msg, level or vim.log.levels.INFO)
  end)
end

--- vim.fn.json_encode (used by the 0.7 RPC layer) turns {} into [], which a server that expects
--- an object rejects. Use this for every object-valued payload that might be empty.
function M.dict(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

--- Fires `User <pattern>` safely (0.7 has no `data`).
function M.fire(pattern, data)
  local ok = pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = pattern, modeline = false, data = data })
  if not ok then
    pcall(vim.api.nvim_exec_autocmds, 'User', { pattern = pattern, modeline = false })
  end
end

return M
