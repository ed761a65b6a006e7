-- Default config for Neovim >= 0.11 (`vim.lsp.enable('ragls')` works without setup()).
-- require('ragls').setup() layers its own options on top of this with vim.lsp.config().
local ok, lsp = pcall(require, 'ragls.lsp')
if not ok then
  return { cmd = { 'ragls' }, root_markers = { '.ragls.toml', '.git' } }
end
local config = require('ragls.config')
local base = lsp.client_config(vim.fn.getcwd(), config.get())
local markers = {}
for _, m in ipairs(config.default_root_markers) do
  if not m:find('[%*%?%[]') then
    table.insert(markers, m)
  end
end
return {
  cmd = function(dispatchers, cfg)
    local root = cfg and cfg.root_dir or vim.fn.getcwd()
    return vim.lsp.rpc.start(config.resolve_cmd(root, config.get()), dispatchers, {
      cwd = cfg and cfg.cmd_cwd,
      env = cfg and cfg.cmd_env,
    })
  end,
  root_markers = markers,
  init_options = base.init_options,
  settings = base.settings,
  capabilities = base.capabilities,
  handlers = base.handlers,
  on_init = base.on_init,
  on_exit = base.on_exit,
  workspace_required = true,
}
