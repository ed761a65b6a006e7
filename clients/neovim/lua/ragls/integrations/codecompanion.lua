-- codecompanion.nvim integration.
--
-- A tool the model calls on its own (@{rag} in the chat, or in a tool group):
--   require('codecompanion').setup({
--     interactions = { -- `strategies` before codecompanion v18
--       chat = {
--         tools = { rag = require('ragls.integrations.codecompanion').tool_config() },
--       },
--     },
--   })
-- A /rag slash command that asks for a query and adds the <rag_context> block to the chat:
--         slash_commands = { rag = require('ragls.integrations.codecompanion').slash_command() },
local search = require('ragls.integrations.search')

local M = {}

-- The output handlers' arguments changed in codecompanion v19: (self, stdout, meta) with
-- meta.tools; v17/v18 passed (self, tools, cmd, stdout). Returns stdout, tools.
local function output_args(a, b, c)
  if type(b) == 'table' and b.tools then
    return a, b.tools
  end
  return c, a
end

local function first_output(out)
  if type(out) == 'table' then
    out = out[#out]
  end
  return type(out) == 'string' and out or ''
end

--- The tool table (codecompanion's CodeCompanion.Tools.Tool: name, cmds, schema, output).
--- opts: name (default 'rag'), topK, maxChars, paths, languages, intent (the default when the
--- model passes none: 'question' or 'change')
function M.tool(opts)
  opts = opts or {}
  local name = opts.name or 'rag'
  local ropts = search.defaults(opts)
  return {
    name = name,
    cmds = {
      --- A function-based tool: codecompanion calls it with the tool system as `self` (its
      --- `chat` knows the buffer the chat started from) and the model's arguments.
      ---@param opts2 table|any { output_cb } since v18; v17 passed (input, output_handler)
      function(self, args, opts2, output_handler)
        local cb = (type(opts2) == 'table' and opts2.output_cb) or output_handler
        local chat = type(self) == 'table' and self.chat or nil
        local ctx = chat and (chat.buffer_context or chat.context)
        local run_opts = vim.tbl_extend('force', ropts, { bufnr = ctx and ctx.bufnr or nil })
        search.run(args, run_opts, function(ok, text)
          cb({ status = ok and 'success' or 'error', data = text })
        end)
      end,
    },
    schema = {
      type = 'function',
      ['function'] = {
        name = name,
        description = search.description,
        parameters = {
          type = 'object',
          properties = search.properties,
          required = { 'query' },
        },
      },
    },
    output = {
      ---@return string
      prompt = function(self)
        return string.format('Search the workspace index (ragls) for `%s`?', tostring(self.args and self.args.query))
      end,
      success = function(self, a, b, c)
        local stdout, tools = output_args(a, b, c)
        local text = first_output(stdout)
        local _, n = text:gsub('<code_context ', '')
        local query = tostring(self.args and self.args.query)
        local for_user = n > 0 and string.format('ragls: %d code chunk(s) for `%s`', n, query)
          or string.format('ragls: nothing relevant for `%s`', query)
        tools.chat:add_tool_output(self, text, for_user)
      end,
      error = function(self, a, b, c)
        local stderr, tools = output_args(a, b, c)
        local text = first_output(stderr)
        tools.chat:add_tool_output(self, text ~= '' and text or 'ragls: the search failed')
      end,
    },
  }
end

--- The entry for codecompanion's `tools` config (v17+): description, the tool (through a
--- callback, which every release since v17 resolves) and options. opts as for tool(), plus
--- require_approval_before (default false: the tool only reads the index).
function M.tool_config(opts)
  opts = opts or {}
  return {
    description = 'Search the workspace code (ragls index)',
    callback = function()
      return M.tool(opts)
    end,
    opts = { require_approval_before = opts.require_approval_before or false },
  }
end

--- A /rag slash command. opts: topK, maxChars, paths, languages, intent, prompt (input prompt text)
function M.slash_command(opts)
  opts = opts or {}
  local ropts = search.defaults(opts)
  return {
    description = 'Add workspace code relevant to a query (ragls)',
    ---@param chat table CodeCompanion.Chat
    callback = function(chat)
      vim.ui.input({ prompt = opts.prompt or 'RAG query: ' }, function(query)
        if not query or vim.trim(query) == '' then
          return
        end
        search.run({ query = query }, ropts, function(ok, text, info)
          if not ok then
            vim.notify('[ragls] ' .. text:gsub('^ragls: ', ''), vim.log.levels.ERROR)
            return
          end
          if info.chunks == 0 then
            vim.notify('[ragls] nothing relevant for: ' .. query, vim.log.levels.WARN)
            return
          end
          -- add_context since codecompanion v17; add_reference before
          local add = chat.add_context or chat.add_reference
          add(chat, { role = 'user', content = text }, 'ragls', '<rag>' .. query .. '</rag>')
        end)
      end)
    end,
    opts = { contains_code = true },
  }
end

return M
