-- CopilotChat.nvim integration.
--
-- v4 and later (`functions`, referenced as #rag:`<query>` or #rag, or offered to the model
-- with @rag):
--   require('CopilotChat').setup({
--     functions = require('ragls.integrations.copilotchat').functions(),
--   })
-- v3 (`contexts`, referenced as #rag:<query>):
--   require('CopilotChat').setup({
--     contexts = require('ragls.integrations.copilotchat').contexts(),
--   })
local search = require('ragls.integrations.search')

local M = {}

local NO_QUERY = 'ragls: no query; use #rag:`<query>` or pass `query`.'

--- Runs the search and returns ok, text (the <rag_context> block, a "nothing relevant" note or
--- a short error). Inside a plenary.async coroutine (where CopilotChat calls `resolve`) it
--- waits without blocking the editor; elsewhere it blocks (bounded by the timeout).
function M.fetch(query, opts)
  if vim.in_fast_event and vim.in_fast_event() and not coroutine.running() then
    error('ragls: cannot fetch context from a fast event; use require("ragls").context()')
  end
  local ok, text = search.run_sync({ query = query }, opts)
  return ok, text
end

--- The user's last chat message without #resources, @tools, /prompts and $model tokens
--- (used when #rag carries no input). Uses CopilotChat's documented chat window API.
local function last_user_message()
  local ok, chat = pcall(function()
    return require('CopilotChat').chat
  end)
  if not ok or not chat or not chat.get_message then
    return nil
  end
  if vim.in_fast_event and vim.in_fast_event() then
    local aok, autil = pcall(require, 'plenary.async.util')
    if aok and coroutine.running() then
      autil.scheduler()
    else
      return nil
    end
  end
  local mok, msg = pcall(chat.get_message, chat, 'user')
  if not mok or type(msg) ~= 'table' or type(msg.content) ~= 'string' then
    return nil
  end
  local text = msg.content
  text = text:gsub('##?[^%s]+', ''):gsub('@[^%s]+', ''):gsub('%$[^%s]+', ''):gsub('^%s*/[^%s]+', '')
  text = text:gsub('\n>[^\n]*', '\n'):gsub('^>[^\n]*', '')
  text = vim.trim(text)
  return text ~= '' and text or nil
end

local function pick_query(input, prompt)
  local query = type(input) == 'table' and input.query or (type(input) == 'string' and input or nil)
  if not query or vim.trim(query) == '' then
    query = prompt
  end
  if not query or vim.trim(query) == '' then
    query = last_user_message()
  end
  if type(query) ~= 'string' or vim.trim(query) == '' then
    return nil
  end
  return vim.trim(query)
end

--- `functions` table for CopilotChat v4+ (resolve(input, source) returns resources).
--- opts: name (default 'rag'), group, trusted, topK, maxChars, paths, languages, intent (the
--- default when the model passes none)
function M.functions(opts)
  opts = opts or {}
  local name = opts.name or 'rag'
  local ropts = search.defaults(opts)
  return {
    [name] = {
      group = opts.group,
      trusted = opts.trusted,
      description = search.description,
      uri = 'rag://{query}',
      schema = {
        type = 'object',
        required = { 'query' },
        properties = search.properties,
      },
      resolve = function(input, source, prompt)
        local query = pick_query(input, prompt)
        if not query then
          return { { uri = 'rag://', name = 'ragls', mimetype = 'text/plain', data = NO_QUERY } }
        end
        local run_opts = vim.tbl_extend('force', ropts, {
          bufnr = type(source) == 'table' and source.bufnr or nil,
        })
        if type(input) == 'table' then
          run_opts.paths = input.paths or run_opts.paths
          run_opts.languages = input.languages or run_opts.languages
          -- the model's intent (checked by the search; JSON null counts as absent)
          if input.intent ~= nil and input.intent ~= vim.NIL then
            run_opts.intent = input.intent
          end
        end
        local _, text = M.fetch(query, run_opts)
        return {
          {
            uri = 'rag://' .. query,
            name = 'ragls: ' .. query,
            mimetype = 'text/plain',
            data = text,
          },
        }
      end,
    },
  }
end

--- `contexts` table for CopilotChat v3. opts: name, topK, maxChars, paths, languages, intent
function M.contexts(opts)
  opts = opts or {}
  local name = opts.name or 'rag'
  local ropts = search.defaults(opts)
  return {
    [name] = {
      description = 'Workspace code relevant to a query (ragls). Input: the query.',
      input = function(callback)
        vim.ui.input({ prompt = 'RAG query> ' }, callback)
      end,
      resolve = function(input, source, prompt)
        local query = pick_query(input, prompt)
        if not query then
          return { { content = NO_QUERY, filename = 'rag_context', filetype = 'text' } }
        end
        local run_opts = vim.tbl_extend('force', ropts, {
          bufnr = type(source) == 'table' and source.bufnr or nil,
        })
        local _, text = M.fetch(query, run_opts)
        return { { content = text, filename = 'rag_context', filetype = 'xml' } }
      end,
    },
  }
end

return M
