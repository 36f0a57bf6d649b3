-- Neovim setup for the "cite while writing" screenshot (make_screenshot.sh cite): loads
-- clients/neovim like a user would, waits for CiteLens, puts the cursor at the end of the
-- unfinished \cite{ line and writes $CITELENS_SHOT_READY; the script then types a title and
-- asks for completion (<C-x><C-o>) like a user.
vim.opt.runtimepath:prepend(assert(os.getenv('CITELENS_NVIM_RTP')))
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.opt.number = true
vim.opt.signcolumn = 'yes'
vim.opt.wrap = true
vim.opt.linebreak = true
vim.opt.laststatus = 2
vim.opt.termguicolors = true
vim.opt.completeopt = 'menu,menuone,noinsert,popup'
vim.opt.pummaxwidth = 70
vim.cmd.colorscheme('default')
vim.o.background = 'dark'

vim.lsp.config('citelens', {
  cmd = vim.json.decode((assert(os.getenv('CITELENS_SHOT_CMD')))),
  settings = { citelens = { verificationEnabled = false } },
})
vim.lsp.enable('citelens')
vim.api.nvim_create_autocmd('LspAttach', {
  callback = function(args)
    vim.lsp.completion.enable(true, args.data.client_id, args.buf, { autotrigger = false })
  end,
})
vim.opt.statusline = ' %t   CiteLens: type a title inside \\cite{…} %=%l:%c '

local ready = assert(os.getenv('CITELENS_SHOT_READY'))
vim.api.nvim_create_autocmd('VimEnter', {
  callback = function()
    local timer = vim.uv.new_timer()
    local waited = 0
    timer:start(200, 200, vim.schedule_wrap(function()
      waited = waited + 200
      if #vim.lsp.get_clients({ bufnr = 0, name = 'citelens' }) == 0 and waited < 30000 then
        return
      end
      timer:stop()
      timer:close()
      local lnum = vim.fn.search('\\\\cite{$', 'w')
      if lnum > 0 then
        vim.api.nvim_win_set_cursor(0, { lnum, 0 })
      end
      local f = assert(io.open(ready, 'w'))
      f:write(waited < 30000 and 'ok' or 'timeout')
      f:close()
    end))
  end,
})
