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

local function human(n)
  n = tonumber(n) or 0
  if n < 1000 then
    return tostring(math.floor(n))
  elseif n < 10000 then
    local s = string.format('%.1fk', n / 1000)
    return (s:gsub('%.0k$', 'k'))
  elseif n < 1000000 then
    return string.format('%dk', math.floor(n / 1000 + 0.5))
  end
  local s = string.format('%.1fM', n / 1000000)
  return (s:gsub('%.0M$', 'M'))
end
M.human = human

--- Formats a state as the statusline string.
function M.format(st, icons)
  icons = icons or config.get().status
  local prefix = icons.prefix or 'RAG'
  if not st then
    return ''
  end
  if st.state == 'error' or st.state == 'stopped' then
    return prefix .. ' ' .. icons.error
  end
  if st.state == 'ready' then
    return prefix .. ' ' .. icons.ready .. ' ' .. human(st.chunks or 0)
  end
  if st.total and st.total > 0 then
    return string.format('%s %d/%d', prefix, st.done or 0, st.total)
  end
  return prefix .. ' ' .. icons.busy
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

--- Files fully processed: dense vectors done (the slower, final phase) plus failures; a
--- server without the `dense` field falls back to filesIndexed + filesFailed.
function M.files_done(status)
  local failed = tonumber(status.filesFailed) or 0
  if type(status.dense) == 'table' and tonumber(status.dense.done) then
    return math.min(tonumber(status.dense.done) + failed, tonumber(status.filesTotal) or math.huge)
  end
  return (tonumber(status.filesIndexed) or 0) + failed
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
