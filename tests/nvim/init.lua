-- Test harness init: loads clients/neovim's CiteLens config the way a user does
-- (runtimepath + vim.lsp.enable), with the server command chosen by the test.
--   CITELENS_NVIM_RTP   clients/neovim
--   CITELENS_TEST_CMD   JSON list: the server command
--   CITELENS_TEST_SETTINGS  JSON object merged into settings.citelens (optional)
vim.opt.runtimepath:prepend(assert(os.getenv('CITELENS_NVIM_RTP'), 'CITELENS_NVIM_RTP not set'))
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'

-- the command as a user sets it (a wrong one is reported by the config, see lsp/citelens.lua)
vim.g.citelens_cmd = vim.json.decode((assert(os.getenv('CITELENS_TEST_CMD'), 'CITELENS_TEST_CMD not set')))
local overrides = {}
local settings = os.getenv('CITELENS_TEST_SETTINGS')
if settings and settings ~= '' then
  overrides.settings = { citelens = vim.json.decode(settings) }
end
vim.lsp.config('citelens', overrides)
vim.lsp.enable('citelens')
