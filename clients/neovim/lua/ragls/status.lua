-- Index state per client, fed by $/progress, rag/statusChanged and rag/indexStatus, and the
-- short statusline string built from it.
local config = require('ragls.config')
local util = require('ragls.util')

local M = {}

---@class ragls.State
---@field state string 'starting'|'indexing'|'ready'|'error'|'stopped'
---@field phase string|nil
---@field done integer|nil
---@field total integer|nil
---@field chunks integer|nil
---@field message string|nil
---@field status table|nil last IndexStatus
---@field progress table<string|integer, table> active work-done progress tokens
---@field progress_seen table counts of begin/report/end seen
---@field root string|nil

M.states = {} ---@type table<integer, ragls.State>
M.history = {} -- last strings produced by changes, newest last (bounded; used by tests/debugging)
M.last_client = nil

local function new_state(root)
  return {
    state = 'starting',
    phase = 'starting',
    progress = {},
    progress_seen = { ['begin'] = 0, report = 0, ['end'] = 0 },
    root = root,
  }
end

function M.init(client_id, root)
  M.states[client_id] = new_state(root)
  M.last_client = client_id
  M.changed(client_id)
end

function M.get(client_id)
  return M.states[client_id]
end

--- 1234567 -> "1,234,567", whatever the locale.
local function num(n)
  local s = tostring(math.floor((tonumber(n) or 0) + 0.5))
  local out = s:reverse():gsub('(%d%d%d)', '%1,'):reverse()
  return (out:gsub('^(-?),', '%1'))
end
M.num = num

local function present(v)
  return v ~= nil and v ~= vim.NIL and v ~= ''
end

--- The shared mapping from an IndexStatus to what the user sees (docs/clients/status.md):
--- { icon = 'indexing'|'ready'|'warning'|'error', text = '1,234 chunks', tooltip = { lines } }.
--- The same case table (tests/fixtures/status-cases.json) runs here, in VS Code and JetBrains.
function M.view(s)
  local total = tonumber(s.filesTotal) or 0
  local failed = tonumber(s.filesFailed) or 0
  local warnings = type(s.warnings) == 'table' and s.warnings or {}
  local chunks = num(s.chunks) .. ' chunks'
  local icon, text
  if s.state == 'indexing' then
    icon = 'indexing'
    local done = math.min((tonumber(s.filesIndexed) or 0) + failed, total)
    text = total > 0 and (num(done) .. '/' .. num(total)) or 'indexing'
  elseif s.state == 'error' then
    local soft = s.phase == 'paused' or s.phase == 'waiting'
    icon = soft and 'warning' or 'error'
    text = soft and s.phase or 'error'
  else
    icon = (failed > 0 or #warnings > 0) and 'warning' or 'ready'
    text = failed > 0 and (chunks .. ', ' .. num(failed) .. ' failed') or chunks
  end
  local t = { string.format('State: %s (%s)', tostring(s.state), tostring(s.phase)) }
  if present(s.message) then
    table.insert(t, tostring(s.message))
  end
  local files = 'Files: ' .. num(s.filesIndexed) .. '/' .. num(total) .. ' indexed'
  if failed > 0 then
    files = files .. ', ' .. num(failed) .. ' failed'
  end
  if (tonumber(s.filesSkipped) or 0) > 0 then
    files = files .. ', ' .. num(s.filesSkipped) .. ' skipped'
  end
  table.insert(t, files)
  table.insert(t, 'Chunks: ' .. num(s.chunks))
  local folders = type(s.folders) == 'table' and s.folders or {}
  if #folders >= 2 then
    for _, f in ipairs(folders) do
      table.insert(t, M.folder_line(f))
    end
  end
  local emb = type(s.embedder) == 'table' and s.embedder or {}
  if present(emb.provider) or present(emb.model) then
    local dim = (tonumber(emb.dimension) or 0) > 0 and (', ' .. tostring(emb.dimension) .. '-d') or ''
    table.insert(t, 'Embedder: ' .. (present(emb.provider) and emb.provider or '') .. ' / ' .. (present(emb.model) and emb.model or '') .. dim)
  end
  local store = type(s.store) == 'table' and s.store or {}
  if present(store.kind) then
    table.insert(t, 'Store: ' .. store.kind .. (present(store.location) and (' at ' .. store.location) or ''))
  end
  if present(s.lastIndexedAt) then
    table.insert(t, 'Last indexed: ' .. tostring(s.lastIndexedAt))
  end
  for _, w in ipairs(warnings) do
    table.insert(t, 'Warning: ' .. tostring(w))
  end
  local errs = type(s.errors) == 'table' and s.errors or {}
  if #errs > 0 then
    local last = errs[#errs]
    table.insert(t, string.format('Errors: %d; last: %s: %s', #errs, tostring(last.path), tostring(last.message)))
  end
  if present(s.version) then
    table.insert(t, 'Server: ragls ' .. tostring(s.version))
  end
  return { icon = icon, text = text, tooltip = t }
end

--- One folder of a multi-root workspace (protocol 3; docs/clients/status.md, tooltip line 5).
function M.folder_line(f)
  if present(f.nestedIn) then
    return string.format('Folder %s: inside %s', tostring(f.name), tostring(f.nestedIn))
  end
  local line = string.format(
    'Folder %s: %s (%s), %s/%s files',
    tostring(f.name),
    tostring(f.state),
    tostring(f.phase),
    num(f.filesIndexed),
    num(f.filesTotal)
  )
  if (tonumber(f.filesFailed) or 0) > 0 then
    line = line .. ', ' .. num(f.filesFailed) .. ' failed'
  end
  line = line .. ', ' .. num(f.chunks) .. ' chunks'
  if present(f.message) then
    line = line .. '; ' .. tostring(f.message)
  end
  return line
end

local function glyph(icons, icon)
  if icon == 'indexing' then
    return icons.busy or '…'
  end
  return icons[icon] or (icon == 'warning' and '⚠') or icons.error or '✗'
end
M.glyph = glyph

--- Formats a state as the statusline string: `RAG <glyph> <text>` from the shared view of the
--- last IndexStatus; while $/progress runs, its n/N; before any status, or after the server
--- stopped, the glyph alone.
function M.format(st, icons)
  icons = icons or config.get().status
  local prefix = icons.prefix or 'RAG'
  if not st then
    return ''
  end
  if st.state == 'indexing' then
    if st.total and st.total > 0 then
      return string.format('%s %s %s/%s', prefix, glyph(icons, 'indexing'), num(math.min(st.done or 0, st.total)), num(st.total))
    end
    return prefix .. ' ' .. glyph(icons, 'indexing') .. ' indexing'
  end
  if type(st.status) == 'table' and st.status.state == st.state then
    local v = M.view(st.status)
    return prefix .. ' ' .. glyph(icons, v.icon) .. ' ' .. v.text
  end
  if st.state == 'error' or st.state == 'stopped' then
    return prefix .. ' ' .. glyph(icons, 'error')
  end
  return prefix .. ' ' .. glyph(icons, 'indexing')
end

local function client_for_buf(bufnr)
  for _, c in ipairs(util.get_clients({ bufnr = bufnr, name = config.name })) do
    if M.states[c.id] then
      return c.id
    end
  end
  return nil
end

--- Statusline string for a buffer (default: current). '' when no ragls client is around.
function M.string(bufnr)
  local id = client_for_buf(bufnr or vim.api.nvim_get_current_buf())
  if not id then
    -- fall back to the most recent client (a statusline in a non-workspace buffer still
    -- tells the user what the index is doing)
    id = M.last_client
  end
  return M.format(id and M.states[id])
end

local last_strings = {}

function M.changed(client_id)
  local st = M.states[client_id]
  if not st then
    return
  end
  local s = M.format(st)
  if last_strings[client_id] ~= s then
    last_strings[client_id] = s
    table.insert(M.history, s)
    if #M.history > 200 then
      table.remove(M.history, 1)
    end
    util.fire('RaglsStatus', { client_id = client_id, status = s, state = st.state })
    vim.schedule(function()
      pcall(vim.cmd, 'redrawstatus!')
    end)
  end
end

--- Files the index is done with (indexed or failed), at most filesTotal: the `n` of the shared
--- status view's `n/N` (docs/clients/status.md).
function M.files_done(status)
  local done = (tonumber(status.filesIndexed) or 0) + (tonumber(status.filesFailed) or 0)
  return math.min(done, tonumber(status.filesTotal) or math.huge)
end

--- Applies an IndexStatus object (rag/statusChanged params or rag/indexStatus result).
function M.apply_index_status(client_id, status)
  local st = M.states[client_id]
  if not st or type(status) ~= 'table' then
    return
  end
  st.status = status
  st.state = status.state or st.state
  st.phase = status.phase or st.phase
  st.chunks = tonumber(status.chunks) or st.chunks
  local total = tonumber(status.filesTotal)
  if total then
    st.total = total
    st.done = M.files_done(status)
  end
  if st.state == 'error' then
    local errs = status.errors
    st.message = (type(errs) == 'table' and errs[#errs] and errs[#errs].message) or st.message
  end
  M.changed(client_id)
end

--- Applies a $/progress notification.
function M.apply_progress(client_id, params)
  local st = M.states[client_id]
  if not st or type(params) ~= 'table' or type(params.value) ~= 'table' then
    return
  end
  local v = params.value
  local token = params.token
  local kind = v.kind
  if kind and st.progress_seen[kind] then
    st.progress_seen[kind] = st.progress_seen[kind] + 1
  end
  if kind == 'begin' then
    st.progress[token] = { title = v.title, message = v.message, percentage = v.percentage }
    if st.state ~= 'error' then
      st.state = 'indexing'
    end
  elseif kind == 'report' then
    local p = st.progress[token] or {}
    p.message = v.message or p.message
    p.percentage = v.percentage or p.percentage
    st.progress[token] = p
  elseif kind == 'end' then
    st.progress[token] = nil
    st.message = v.message
  end
  local msg = (kind ~= 'end') and v.message or nil
  -- "n/N files (lexical)" counts the fast first pass; the statusline follows the final one
  if msg and not tostring(msg):find('lexical', 1, true) then
    local n, total = tostring(msg):match('(%d+)%s*/%s*(%d+)')
    if n then
      st.done, st.total = tonumber(n), tonumber(total)
    end
  end
  M.changed(client_id)
end

function M.stopped(client_id, code, signal)
  local st = M.states[client_id]
  if not st then
    return
  end
  if code == 0 and (signal or 0) == 0 then
    -- clean shutdown: nothing to show any more
    M.forget(client_id)
    return
  end
  st.state = 'error'
  st.message = string.format('server exited (code %s, signal %s)', tostring(code), tostring(signal))
  M.changed(client_id)
end

function M.forget(client_id)
  M.states[client_id] = nil
  last_strings[client_id] = nil
  vim.schedule(function()
    pcall(vim.cmd, 'redrawstatus!')
  end)
  if M.last_client == client_id then
    M.last_client = nil
    for id in pairs(M.states) do
      M.last_client = id
    end
  end
end

return M
