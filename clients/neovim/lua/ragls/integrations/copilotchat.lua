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
local M = {}

--- Fetches the <rag_context> block. Inside a plenary.async coroutine (where CopilotChat calls
--- `resolve`) it waits without blocking the editor; elsewhere it blocks (bounded by timeout).
function M.fetch(query, opts)
  local ragls = require('ragls')
  opts = opts or {}
  local co = coroutine.running()
  if co and opts.async ~= false then
    local ok, async = pcall(require, 'plenary.async')
    if ok and async and async.wrap then
      local context_async = async.wrap(function(q, o, cb)
        ragls.context(q, o, cb)
      end, 3)
      return context_async(query, opts)
    end
  end
  if vim.in_fast_event and vim.in_fast_event() then
    error('ragls: cannot fetch context from a fast event; use require("ragls").context()')
  end
  return ragls.context_sync(query, opts)
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
    error('ragls: no query (use #rag:`<query>`)')
  end
  return vim.trim(query)
end

--- `functions` table for CopilotChat v4+.
--- opts: name (default 'rag'), group, topK, maxChars, paths, languages
function M.functions(opts)
  opts = opts or {}
  local name = opts.name or 'rag'
  local retrieve_opts = { topK = opts.topK, maxChars = opts.maxChars, paths = opts.paths, languages = opts.languages }
  return {
    [name] = {
      group = opts.group,
      description = 'Retrieves the code in the current workspace most relevant to a natural-language query (semantic + keyword index from ragls). Returns <code_context> blocks with file, lines and symbol.',
      uri = 'rag://{query}',
      schema = {
        type = 'object',
        required = { 'query' },
        properties = {
          query = {
            type = 'string',
            description = 'What to look for: a question, a description of behaviour, or an identifier.',
          },
        },
      },
      resolve = function(input, _source, prompt)
        local query = pick_query(input, prompt)
        local ctx, _, err = M.fetch(query, retrieve_opts)
        if err then
          error('ragls: ' .. err)
        end
        return {
          {
            uri = 'rag://' .. query,
            name = 'ragls: ' .. query,
            mimetype = 'text/plain',
            data = ctx ~= '' and ctx or 'No relevant code found in the workspace index.',
          },
        }
      end,
    },
  }
end

--- `contexts` table for CopilotChat v3.
function M.contexts(opts)
  opts = opts or {}
  local name = opts.name or 'rag'
  local retrieve_opts = { topK = opts.topK, maxChars = opts.maxChars, paths = opts.paths, languages = opts.languages }
  return {
    [name] = {
      description = 'Workspace code relevant to a query (ragls). Input: the query.',
      input = function(callback)
        vim.ui.input({ prompt = 'RAG query> ' }, callback)
      end,
      resolve = function(input, _source, prompt)
        local query = pick_query(input, prompt)
        local ctx, _, err = M.fetch(query, retrieve_opts)
        if err then
          error('ragls: ' .. err)
        end
        if ctx == '' then
          return {}
        end
        return { { content = ctx, filename = 'rag_context', filetype = 'xml' } }
      end,
    },
  }
end

return M
