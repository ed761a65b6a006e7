-- ragls.nvim: commands are available at once; the server attaches after
-- require('ragls').setup({...}) (see :help ragls).
if vim.g.loaded_ragls then
  return
end
vim.g.loaded_ragls = 1

if vim.fn.has('nvim-0.7') == 0 then
  return
end

require('ragls.commands').register()
