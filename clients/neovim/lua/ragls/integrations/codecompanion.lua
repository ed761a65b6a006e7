-- codecompanion.nvim integration: a /rag slash command that asks for a query and adds the
-- <rag_context> block to the chat as context.
--
--   require('codecompanion').setup({
--     interactions = { -- `strategies` before codecompanion v18
--       chat = {
--         slash_commands = {
--           rag = require('ragls.integrations.codecompanion').slash_command(),
--         },
--       },
--     },
--   })
local M = {}

--- opts: topK, maxChars, paths, languages, prompt (input prompt text)
function M.slash_command(opts)
  opts = opts or {}
  local retrieve_opts = { topK = opts.topK, maxChars = opts.maxChars, paths = opts.paths, languages = opts.languages }
  return {
    description = 'Add workspace code relevant to a query (ragls)',
    ---@param chat table CodeCompanion.Chat
    callback = function(chat)
      vim.ui.input({ prompt = opts.prompt or 'RAG query: ' }, function(query)
        if not query or vim.trim(query) == '' then
          return
        end
        require('ragls').context(query, retrieve_opts, function(ctx, _, err)
          if err then
            vim.notify('[ragls] ' .. err, vim.log.levels.ERROR)
            return
          end
          if ctx == '' then
            vim.notify('[ragls] nothing relevant for: ' .. query, vim.log.levels.WARN)
            return
          end
          -- add_context since codecompanion v17; add_reference before
          local add = chat.add_context or chat.add_reference
          add(chat, { role = 'user', content = ctx }, 'ragls', '<rag>' .. query .. '</rag>')
        end)
      end)
    end,
    opts = { contains_code = true },
  }
end

return M
