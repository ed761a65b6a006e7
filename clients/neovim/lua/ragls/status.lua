-- Index state per client, fed by $/progress, rag/statusChanged and rag/indexStatus, and the
-- short statusline string built from it.
local config = require('ragls.config')
local util = require('ragls.util')

local M = {}

---@class ragls.State
---@field state string 'starting'|'indexing'|'ready'|'error'|'stopped'
---@field phase string|nil
---@field done integer|nil n of a $/progress newer than the status
---@field total integer|nil N of that $/progress
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

--- What to show for an IndexStatus: the server's `display` ({ health, text, tooltip };
--- docs/clients/status.md), shown as it is; from a server older than `display`, its state.
function M.shown(s)
  if type(s) ~= 'table' then
    return nil
  end
  if type(s.display) == 'table' then
    return s.display
  end
  local state = tostring(s.state)
  return {
    health = state == 'ready' and 'ok' or state,
    text = state,
    tooltip = { string.format('State: %s (%s)', state, tostring(s.phase)) },
  }
end

--- The glyph of a health ('ok'|'indexing'|'warning'|'error') from the `status` option.
local function glyph(icons, health)
  if health == 'indexing' then
    return icons.busy or '…'
  end
  if health == 'ok' then
    return icons.ready or '✓'
  end
  return icons[health] or (health == 'warning' and '⚠') or icons.error or '✗'
end
M.glyph = glyph

--- Formats a state as the statusline string: `RAG <glyph> <text>` from the server's display of
--- the last IndexStatus; while a $/progress newer than it runs, its n/N; before any status, or
--- after the server stopped, the glyph alone.
function M.format(st, icons)
  icons = icons or config.get().status
  local prefix = icons.prefix or 'RAG'
  if not st then
    return ''
  end
  local shown = type(st.status) == 'table' and st.status.state == st.state and M.shown(st.status) or nil
  if st.state == 'indexing' then
    if st.total and st.total > 0 then
      return string.format('%s %s %s/%s', prefix, glyph(icons, 'indexing'), num(math.min(st.done or 0, st.total)), num(st.total))
    end
    return prefix .. ' ' .. glyph(icons, 'indexing') .. ' ' .. (shown and shown.text or 'indexing')
  end
  if shown then
    return prefix .. ' ' .. glyph(icons, shown.health) .. ' ' .. shown.text
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

--- Applies an IndexStatus object (rag/statusChanged params or rag/indexStatus result).
function M.apply_index_status(client_id, status)
  local st = M.states[client_id]
  if not st or type(status) ~= 'table' then
    return
  end
  st.status = status
  st.state = status.state or st.state
  st.phase = status.phase or st.phase
  -- a newer status than any $/progress: its display says what to show
  st.done, st.total = nil, nil
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
