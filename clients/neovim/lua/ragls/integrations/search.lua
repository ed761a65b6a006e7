-- The search that chat tools (CodeCompanion, CopilotChat) run: rag/retrieve on the ragls
-- client of the workspace, answered as one text for the model: the <rag_context> block, a
-- "nothing relevant" note, or a short error when there is no client or it is not ready.
local config = require('ragls.config')
local lsp = require('ragls.lsp')
local status = require('ragls.status')

local M = {}

-- The arguments a model may pass (JSON schema `properties`, shared by every integration).
M.properties = {
  query = {
    type = 'string',
    description = 'What to look for: a question, a description of behaviour, or an identifier.',
  },
  paths = {
    type = 'array',
    items = { type = 'string' },
    description = 'Optional workspace-relative globs to search in, e.g. ["src/**", "*.py"].',
  },
  languages = {
    type = 'array',
    items = { type = 'string' },
    description = 'Optional languages to search in, e.g. ["python", "typescript"].',
  },
  intent = {
    type = 'string',
    enum = { 'question', 'change' },
    description = '"question" (default): how the code works. "change": the query describes a change '
      .. 'to make (a task, a bug, a commit message) and you want the code it touches: ranks with the '
      .. "workspace's git history, code before docs.",
  },
}

M.description = 'Searches the code of the current workspace by meaning and by keywords '
  .. '(ragls index: semantic + lexical, split along functions and classes) and returns the most '
  .. 'relevant chunks as <code_context file="..." lines="a-b" symbol="..."> blocks inside '
  .. '<rag_context>. Use it before answering questions about this project\'s code. When you plan '
  .. 'an edit (a task, a bug report, a commit message), pass `intent: "change"` to get the code it '
  .. 'will touch: past commits described alike and code before docs weigh in.'

--- The search options an integration is configured with (its constructor's opts): the
--- defaults of every call, which the model's own arguments override.
function M.defaults(opts)
  return {
    topK = opts.topK,
    maxChars = opts.maxChars,
    paths = opts.paths,
    languages = opts.languages,
    intent = opts.intent,
  }
end

local function list_of_strings(v)
  if type(v) ~= 'table' or #v == 0 then
    return nil
  end
  local out = {}
  for _, s in ipairs(v) do
    if type(s) == 'string' and s ~= '' then
      table.insert(out, s)
    end
  end
  return #out > 0 and out or nil
end

-- A JSON null from the model (vim.NIL) counts as absent.
local function given(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

local function count_blocks(ctx)
  local _, n = ctx:gsub('<code_context ', '')
  return n
end

--- Runs the search. args: { query, paths?, languages?, intent? } (from the model or the user);
--- opts: { bufnr, topK, maxChars, paths, languages, intent, timeout_ms } (defaults for args).
--- cb(ok: boolean, text: string, info: { query, chunks: integer }) is called exactly once.
function M.run(args, opts, cb)
  opts = opts or {}
  args = type(args) == 'table' and args or { query = args }
  local done = false
  local function finish(ok, text, n)
    if done then
      return
    end
    done = true
    cb(ok, text, { query = args.query, chunks = n or 0 })
  end

  local query = type(args.query) == 'string' and vim.trim(args.query) or ''
  if query == '' then
    return finish(false, 'ragls: the query is empty; pass what to look for in `query`.')
  end
  local intent = given(args.intent)
  if intent == nil then
    intent = given(opts.intent)
  end
  if intent ~= nil and intent ~= 'question' and intent ~= 'change' then
    return finish(
      false,
      string.format(
        'ragls: intent must be "question" or "change", not %s; pass "change" when the query describes an edit to make, or leave it out.',
        vim.inspect(intent)
      )
    )
  end
  local client = lsp.get_client(opts.bufnr, true)
  if not client then
    return finish(
      false,
      'ragls: no ragls server for this workspace (open a file of the project; see :checkhealth ragls).'
    )
  end

  local timeout = opts.timeout_ms or config.get().context.timeout_ms
  vim.defer_fn(function()
    finish(false, string.format('ragls: no answer from the server within %d ms; try again shortly.', timeout))
  end, timeout)

  require('ragls').retrieve(query, {
    client = client,
    topK = opts.topK,
    maxChars = opts.maxChars,
    paths = list_of_strings(args.paths) or opts.paths,
    languages = list_of_strings(args.languages) or opts.languages,
    intent = intent,
    timeout_ms = timeout,
  }, function(err, result)
    local st = status.get(client.id)
    local indexing = st and (st.state == 'starting' or st.state == 'indexing')
    if err then
      local msg = lsp.format_err(err)
      if msg:find('did not initialise', 1, true) then
        msg = 'the server is still starting; try again in a moment'
      end
      return finish(false, 'ragls: ' .. msg)
    end
    local ctx = type(result) == 'table' and type(result.context) == 'string' and result.context or ''
    if ctx ~= '' then
      if indexing then
        ctx = 'Note: the ragls index is still being built; results may be incomplete.\n' .. ctx
      end
      return finish(true, ctx, count_blocks(ctx))
    end
    if indexing then
      local progress = (st.total and st.total > 0) and string.format(' (%d/%d files)', st.done or 0, st.total) or ''
      return finish(false, 'ragls: the index is still being built' .. progress .. '; try again shortly.')
    end
    finish(true, 'No relevant code found in the workspace index for: ' .. query)
  end)
end

--- Blocking form of run(): returns ok, text, info. Inside a plenary.async coroutine it yields
--- instead of blocking the editor. Not from a fast event (luv callback) outside a coroutine.
function M.run_sync(args, opts)
  opts = opts or {}
  if coroutine.running() and opts.async ~= false then
    local ok, async = pcall(require, 'plenary.async')
    if ok and async and async.wrap then
      return async.wrap(M.run, 3)(args, opts)
    end
  end
  local r
  M.run(args, opts, function(ok, text, info)
    r = { ok, text, info }
  end)
  local timeout = (opts.timeout_ms or config.get().context.timeout_ms) + 1000
  vim.wait(timeout, function()
    return r ~= nil
  end, 20)
  if not r then
    return false, 'ragls: no answer from the server', { query = args and args.query, chunks = 0 }
  end
  return r[1], r[2], r[3]
end

return M
