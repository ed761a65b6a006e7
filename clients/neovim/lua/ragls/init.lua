-- ragls: Neovim client for the ragls retrieval language server.
--
--   require('ragls').setup(opts)               attach the server to workspace buffers
--   require('ragls').status()                  'RAG 12/40', 'RAG ✓ 18k', 'RAG ✗' or ''
--   require('ragls').retrieve(query, opts, cb) raw rag/retrieve result
--   require('ragls').context(query, opts, cb)  cb(context_string, result, err)
--   require('ragls').context_sync(query, opts) context_string, result, err (blocking)
--   require('ragls').prepend(message, opts)    '<rag_context>…</rag_context>\n\n' .. message
--   require('ragls').feedback(rating, comment, cb)  rate the last answer 'up' or 'down' (rag/feedback)
--   require('ragls').mark(bufnr, line, cb)     mark a line as the code the last answer should have found
local config = require('ragls.config')
local lsp = require('ragls.lsp')
local status = require('ragls.status')
local util = require('ragls.util')

local M = {}

M.version = '0.1.0'
M._setup_done = false

--- Registers the ragls server for every buffer in a workspace. See :help ragls-setup.
function M.setup(opts)
  if not util.has('0.7') then
    vim.notify('[ragls] Neovim 0.7 or newer is required', vim.log.levels.ERROR)
    return
  end
  local o = config.set(opts)
  lsp.setup(o)
  M._setup_done = true
  return M
end

--- Client handlers ($/progress wrapper, rag/statusChanged) that feed status(); for configs
--- made without setup() (nvim-lspconfig, vim.lsp.config).
function M.handlers(extra)
  return lsp.handlers(extra)
end

--- Short status string for statuslines.
function M.status(bufnr)
  return status.string(bufnr)
end

--- Full state table (index status, progress) of the client for a buffer, or nil.
function M.state(bufnr)
  local client = lsp.get_client(bufnr, false)
  return client and status.get(client.id) or nil
end

--- The ragls client serving a buffer (starts one when `start` is true and a root is found).
function M.client(bufnr, start)
  return lsp.get_client(bufnr, start)
end

local function retrieve_params(query, opts)
  opts = opts or {}
  local copts = config.get().context
  local params = { query = query }
  local top_k = opts.topK or opts.top_k or copts.top_k
  local max_chars = opts.maxChars or opts.max_chars or copts.max_chars
  if top_k then
    params.topK = top_k
  end
  if max_chars then
    params.maxChars = max_chars
  end
  if opts.paths then
    params.paths = opts.paths
  end
  if opts.languages then
    params.languages = opts.languages
  end
  if opts.folders then
    -- protocol 3: only these workspace folders (names or URIs)
    params.folders = opts.folders
  end
  if opts.intent == 'change' then
    -- protocol 4: the query describes an edit; "question" is the server's default, never sent
    params.intent = 'change'
  end
  return params
end

local function check_query(query)
  if type(query) ~= 'string' or vim.trim(query) == '' then
    return 'query must be a non-empty string'
  end
  return nil
end

--- nil when `intent` is absent (nil or JSON null), "question" or "change"; else why not.
local function check_intent(intent)
  if intent == nil or intent == vim.NIL or intent == 'question' or intent == 'change' then
    return nil
  end
  return 'intent must be "question" or "change", not ' .. vim.inspect(intent)
end

--- Why a rag/retrieve result is degraded, or nil: protocol 2 `warnings` (results from less than
--- the full search, e.g. lexical only while the embedding provider is down), or a protocol-1
--- `error` that still came with chunks.
function M.degraded_note(result)
  local ws = type(result.warnings) == 'table' and result.warnings or {}
  if #ws == 0 and result.error ~= nil and result.error ~= vim.NIL and type(result.chunks) == 'table' and #result.chunks > 0 then
    ws = { tostring(result.error) }
  end
  if #ws == 0 then
    return nil
  end
  return 'degraded search: ' .. table.concat(ws, '; ')
end

--- rag/retrieve. cb(err, result). opts: topK, maxChars, paths, languages, folders, intent
--- ('question' (default) or 'change': the query describes an edit to make), bufnr, client,
--- timeout_ms.
function M.retrieve(query, opts, cb)
  if type(opts) == 'function' then
    cb, opts = opts, nil
  end
  opts = opts or {}
  local qerr = check_query(query) or check_intent(opts.intent)
  if qerr then
    cb({ message = qerr }, nil)
    return
  end
  lsp.request('rag/retrieve', retrieve_params(query, opts), function(err, result, client)
    if not err and type(result) == 'table' then
      -- the answer :RagFeedback rates and :RagMark marks (protocol 6 resultId)
      require('ragls.feedback').remember(query, result, client and client.id)
      local note = M.degraded_note(result)
      if note then
        -- Degraded, not failed: the results are real; the user should know they are partial.
        vim.notify('[ragls] ' .. note, vim.log.levels.WARN)
        util.fire('RaglsDegraded', { query = query, note = note })
      elseif result.error ~= nil and result.error ~= vim.NIL then
        err = { message = tostring(result.error) }
      end
    end
    cb(err, result)
  end, { bufnr = opts.bufnr, timeout_ms = opts.timeout_ms, client = opts.client })
end

--- Blocking rag/retrieve. Returns err, result.
function M.retrieve_sync(query, opts)
  opts = opts or {}
  local done, r_err, r_res = false, nil, nil
  M.retrieve(query, opts, function(err, result)
    done, r_err, r_res = true, err, result
  end)
  local timeout = opts.timeout_ms or config.get().context.timeout_ms
  if not vim.wait(timeout, function()
    return done
  end, 20) then
    return { message = 'rag/retrieve timed out after ' .. timeout .. ' ms' }, nil
  end
  return r_err, r_res
end

--- Fetches the <rag_context> block for a query.
--- callback(context: string, result: table|nil, err: string|nil); context is '' when nothing is
--- relevant or on error.
function M.context(query, opts, callback)
  if type(opts) == 'function' then
    callback, opts = opts, nil
  end
  M.retrieve(query, opts, function(err, result)
    local ctx = (not err and type(result) == 'table' and type(result.context) == 'string') and result.context or ''
    callback(ctx, result, lsp.format_err(err))
  end)
end

--- Blocking variant of context(). Returns context, result, err.
--- Do not call it from a fast event (luv callback); use context() there.
function M.context_sync(query, opts)
  local err, result = M.retrieve_sync(query, opts)
  local ctx = (not err and type(result) == 'table' and type(result.context) == 'string') and result.context or ''
  return ctx, result, lsp.format_err(err)
end

--- Returns `<rag_context>…</rag_context>` + blank line + message (the message unchanged when
--- nothing relevant is found or the server is unavailable). opts.query overrides the query.
function M.prepend(message, opts)
  opts = opts or {}
  local ctx = M.context_sync(opts.query or message, opts)
  if ctx == '' then
    return message
  end
  return ctx .. '\n\n' .. message
end

--- rag/indexStatus. cb(err, status)
function M.index_status(cb, opts)
  opts = opts or {}
  lsp.request('rag/indexStatus', vim.empty_dict(), function(err, result, client)
    if not err and client and type(result) == 'table' then
      status.apply_index_status(client.id, result)
    end
    cb(err, result)
  end, opts)
end

function M.index_status_sync(opts)
  opts = opts or {}
  local err, result, client = lsp.request_sync('rag/indexStatus', vim.empty_dict(), opts)
  if not err and client and type(result) == 'table' then
    status.apply_index_status(client.id, result)
  end
  return err, result
end

--- rag/reindex. cb(err, {started})
function M.reindex(full, cb, opts)
  lsp.request('rag/reindex', { full = full and true or false }, function(err, result)
    if cb then
      cb(err, result)
    end
  end, opts)
end

--- rag/feedback: rates the last answer (the last rag/retrieve result with a resultId) 'up' or
--- 'down', with an optional comment. cb(err, {stored, folders, message}) optional.
function M.feedback(rating, comment, cb)
  require('ragls.feedback').rate(rating, comment, cb)
end

--- Marks a line (default: the cursor's) as the code the last answer should have found.
function M.mark(bufnr, line, cb)
  require('ragls.feedback').mark(bufnr, line, cb)
end

--- Updates server settings at run time (workspace/didChangeConfiguration; the server then
--- pulls the `ragls` section).
function M.update_settings(settings)
  local o = config.get()
  o.settings = vim.tbl_deep_extend('force', o.settings or {}, settings or {})
  local payload = config.settings_payload(o)
  for _, c in ipairs(util.get_clients({ name = config.name })) do
    if c.settings then
      c.settings = payload
    end
    if c.config then
      c.config.settings = payload
    end
    util.notify(c, 'workspace/didChangeConfiguration', { settings = payload })
  end
end

return M
