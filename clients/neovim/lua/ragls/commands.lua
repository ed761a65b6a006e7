-- :RagSearch, :RagContext, :RagFeedback, :RagMark, :RagStatus, :RagReindex, :RagTrust, :RagAddFolder, :RagRemoveFolder
local config = require('ragls.config')
local status = require('ragls.status')
local util = require('ragls.util')

local M = {}

local function ragls()
  return require('ragls')
end

local function err_msg(msg)
  vim.notify('[ragls] ' .. msg, vim.log.levels.ERROR)
end

local function present(v)
  return v ~= nil and v ~= vim.NIL and v ~= ''
end

--- The path a result is shown under: `folder/path` in a multi-root workspace when the server
--- names the chunk's folder (protocol 3), else the folder-relative path.
function M.chunk_path(ch, multi_root)
  if multi_root and present(ch.folder) then
    return ch.folder .. '/' .. tostring(ch.path)
  end
  return ch.path
end

--- Quickfix items for rag/retrieve chunks. The file is opened by `uri`; in a multi-root
--- workspace the list shows `folder/path` (the item's `module`) instead of the file name.
function M.qf_items(chunks, multi_root)
  local items = {}
  for _, ch in ipairs(chunks or {}) do
    local fname = ch.uri and ch.uri ~= vim.NIL and vim.uri_to_fname(ch.uri) or ch.path
    local start_line = (ch.range and ch.range.start and ch.range.start.line or 0) + 1
    local end_line = ch.range and ch.range['end'] and ch.range['end'].line or start_line
    if end_line < start_line then
      end_line = start_line
    end
    local symbol = (ch.symbol ~= nil and ch.symbol ~= vim.NIL) and ch.symbol or nil
    local first = ''
    if type(ch.content) == 'string' then
      for line in ch.content:gmatch('[^\n]+') do
        if line:match('%S') then
          first = vim.trim(line)
          break
        end
      end
    end
    local text
    if symbol then
      text = string.format('%s [%s] %s', symbol, ch.kind or '?', first)
    else
      text = string.format('[%s] %s', ch.kind or ch.language or '?', first)
    end
    if type(ch.score) == 'number' then
      text = text .. string.format('  (%.3f)', ch.score)
    end
    local item = {
      filename = fname,
      lnum = start_line,
      end_lnum = end_line,
      col = 1,
      text = text,
      user_data = { path = ch.path, symbol = symbol, kind = ch.kind, folder = present(ch.folder) and ch.folder or nil },
    }
    if multi_root and present(ch.folder) then
      item.module = M.chunk_path(ch, true)
    end
    table.insert(items, item)
  end
  return items
end

function M.search(query, opts)
  opts = opts or {}
  local sopts = config.get().search
  ragls().retrieve(query, { topK = opts.top_k or sopts.top_k, maxChars = 0 }, function(err, result)
    if err then
      err_msg('RagSearch: ' .. (err.message or vim.inspect(err)))
      return
    end
    local lsp = require('ragls.lsp')
    local items = M.qf_items(result and result.chunks, lsp.is_multi_root(lsp.get_client(nil, false)))
    vim.fn.setqflist({}, ' ', { title = 'RagSearch: ' .. query, items = items })
    if #items == 0 then
      vim.notify('[ragls] RagSearch: no results for ' .. query, vim.log.levels.WARN)
      return
    end
    if opts.open ~= false and sopts.open then
      vim.cmd('copen')
    end
    util.fire('RaglsSearchDone', { query = query, count = #items })
  end)
end

local scratch_name = 'ragls://context'

--- Shows text in the (reused) scratch buffer ragls://context.
function M.show_scratch(text, title)
  local buf = vim.fn.bufnr(scratch_name)
  if buf == -1 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, scratch_name)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].swapfile = false
  end
  vim.bo[buf].modifiable = true
  local lines = vim.split(text, '\n', { plain = true })
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.b[buf].ragls_title = title
  vim.bo[buf].filetype = 'xml'
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  return buf
end

function M.context(query, opts)
  opts = opts or {}
  local copts = config.get().context
  ragls().context(query, {}, function(ctx, result, err)
    if err then
      err_msg('RagContext: ' .. err)
      return
    end
    if ctx == '' then
      local n = result and result.chunks and #result.chunks or 0
      vim.notify(
        n > 0 and '[ragls] RagContext: best chunk does not fit in maxChars' or ('[ragls] RagContext: nothing relevant for ' .. query),
        vim.log.levels.WARN
      )
    end
    local reg = opts.register
    if reg == nil then
      reg = copts.register
    end
    if reg and ctx ~= '' then
      vim.fn.setreg(reg, ctx, 'l')
    end
    if ctx ~= '' and copts.scratch and not opts.no_scratch then
      M.show_scratch(ctx, 'RagContext: ' .. query)
    end
    if ctx ~= '' then
      local nblocks = select(2, ctx:gsub('<code_context ', ''))
      vim.notify(string.format('[ragls] RagContext: %d block(s), %d chars%s', nblocks, #ctx, reg and (' in register ' .. reg) or ''))
    end
    util.fire('RaglsContextDone', { query = query, chars = #ctx })
  end)
end

--- Human-readable lines for an IndexStatus.
--- :RagStatus lines: the server's display (docs/clients/status.md) as the statusline shows it
--- and its tooltip lines, then what only this report adds.
function M.status_lines(st, client)
  local lines = {}
  if client then
    table.insert(lines, string.format('ragls (client %d) %s', client.id, util.client_root(client) or '?'))
  end
  local shown = status.shown(st)
  local icons = config.get().status
  table.insert(lines, 'statusline: ' .. (icons.prefix or 'RAG') .. ' ' .. status.glyph(icons, shown.health) .. ' ' .. shown.text)
  vim.list_extend(lines, shown.tooltip)
  if type(st.skippedByReason) == 'table' and next(st.skippedByReason) then
    local parts = {}
    for k, n in pairs(st.skippedByReason) do
      table.insert(parts, k .. '=' .. tostring(n))
    end
    table.sort(parts)
    table.insert(lines, 'Skipped: ' .. table.concat(parts, ', '))
  end
  local lsp = require('ragls.lsp')
  if client and lsp.is_multi_root(client) and type(st.folders) ~= 'table' then
    table.insert(lines, string.format('Note: %d folders sent, but this server (protocol %s) indexes only the first', #lsp.folders(client), tostring(st.protocolVersion or 1)))
  end
  if type(st.lexical) == 'table' and type(st.dense) == 'table' then
    table.insert(lines, string.format('Vectors: lexical %s/%s, dense %s/%s', tostring(st.lexical.done), tostring(st.lexical.total), tostring(st.dense.done), tostring(st.dense.total)))
  end
  table.insert(lines, 'Workspace: ' .. tostring(st.workspace))
  return lines
end

function M.status()
  local lsp = require('ragls.lsp')
  lsp.request('rag/indexStatus', vim.empty_dict(), function(err, result, client)
    if err then
      err_msg('RagStatus: ' .. (err.message or vim.inspect(err)))
      return
    end
    if client then
      status.apply_index_status(client.id, result)
    end
    local lines = M.status_lines(result or {}, client)
    M.last_status_lines = lines
    vim.api.nvim_echo({ { table.concat(lines, '\n') } }, true, {})
    util.fire('RaglsStatusShown', { state = result and result.state })
  end)
end

function M.reindex(full)
  ragls().reindex(full, function(err, result)
    if err then
      err_msg('RagReindex: ' .. (err.message or vim.inspect(err)))
      return
    end
    local started = result and result.started
    vim.notify(
      '[ragls] '
        .. (full and 'full rebuild' or 'reindex')
        .. (started and ' started' or ' queued (a run is in progress; it re-runs when that ends)')
    )
    util.fire('RaglsReindexDone', { started = started, full = full })
  end)
end

--- :RagTrust [folder]: asks Neovim to trust a workspace folder (its own prompt and trust
--- database, 0.11+), then restarts ragls there so that the folder's .venv/bin/ragls is used.
function M.trust(path)
  local trust = require('ragls.trust')
  if not (trust.has_secure() and util.has('0.11')) then
    err_msg('folder trust needs Neovim 0.11; use setup({ trusted_folders = { ... } }) or an explicit cmd')
    return
  end
  local root
  if path and path ~= '' then
    root = util.normalize(vim.fn.expand(path))
  else
    local name = vim.api.nvim_buf_get_name(0)
    root = config.find_root(name ~= '' and name or vim.fn.getcwd(), config.get(), 0)
  end
  if not root or not util.is_dir(root) then
    err_msg('no workspace folder to trust (give one: :RagTrust /path/to/project)')
    return
  end
  -- Neovim's own prompt ([i]gnore, [v]iew, [d]eny, [a]llow); the answer is stored by Neovim
  local ok, res = pcall(vim.secure.read, root)
  if not ok or not res then
    vim.notify('[ragls] ' .. root .. ' is not trusted', vim.log.levels.WARN)
    return
  end
  require('ragls.lsp').restart(root, function(id)
    vim.notify('[ragls] ' .. root .. ' is trusted' .. (id and '; ragls restarted' or ''), vim.log.levels.INFO)
  end)
end

--- :RagAddFolder [dir] / :RagRemoveFolder dir: one more (or one less) folder for the ragls server
--- of the current buffer (default: the current buffer's directory); the server indexes it in the
--- background and searches it with the others.
function M.change_folder(dir, added)
  local lsp = require('ragls.lsp')
  if not dir or dir == '' then
    dir = vim.fn.expand('%:p:h')
  end
  local client = lsp.get_client(nil, false)
  local why = lsp.change_folder(client, dir, added)
  if why then
    err_msg((added and 'RagAddFolder: ' or 'RagRemoveFolder: ') .. why)
    return
  end
  local names = {}
  for _, f in ipairs(lsp.folders(client)) do
    table.insert(names, f.name)
  end
  vim.notify('[ragls] workspace folders: ' .. table.concat(names, ', '))
  util.fire('RaglsFoldersChanged', { client_id = client.id, folders = names })
end

function M.register()
  local cmd = vim.api.nvim_create_user_command
  cmd('RagAddFolder', function(a)
    M.change_folder(a.args, true)
  end, { nargs = '?', complete = 'dir', desc = 'ragls: index and search one more folder with this workspace' })
  cmd('RagRemoveFolder', function(a)
    M.change_folder(a.args, false)
  end, { nargs = 1, complete = 'dir', desc = 'ragls: stop searching a folder of this workspace' })
  cmd('RagSearch', function(a)
    M.search(a.args)
  end, { nargs = '+', desc = 'ragls: search the workspace index into the quickfix list' })
  cmd('RagContext', function(a)
    M.context(a.args, { no_scratch = a.bang })
  end, { nargs = '+', bang = true, desc = 'ragls: <rag_context> block into a register (and scratch buffer)' })
  cmd('RagFeedback', function(a)
    require('ragls.feedback').command(a.args)
  end, {
    nargs = '+',
    complete = function()
      return { 'up', 'down', 'mark' }
    end,
    desc = 'ragls: rate the last answer (up|down [comment]) or mark the cursor line as the code meant (mark)',
  })
  cmd('RagMark', function()
    require('ragls.feedback').mark()
  end, { nargs = 0, desc = 'ragls: mark the cursor line as the code the last answer should have found' })
  cmd('RagStatus', function()
    M.status()
  end, { nargs = 0, desc = 'ragls: show index status' })
  cmd('RagReindex', function(a)
    M.reindex(a.bang)
  end, { nargs = 0, bang = true, desc = 'ragls: re-scan the workspace (! drops and rebuilds the index)' })
  cmd('RagTrust', function(a)
    M.trust(a.args)
  end, { nargs = '?', complete = 'dir', desc = "ragls: trust a workspace folder (Neovim's trust database, 0.11+)" })
end

return M
