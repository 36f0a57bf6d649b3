-- Neovim setup for the screenshot: the user's view of CiteLens on a real paper.
-- Loads clients/neovim like a user would, waits for CiteLens' diagnostics, puts the cursor on a
-- citation with a wrong DOI and writes $CITELENS_SHOT_READY; make_screenshot.sh then presses K.
vim.opt.runtimepath:prepend(assert(os.getenv('CITELENS_NVIM_RTP')))
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.opt.number = true
vim.opt.signcolumn = 'yes'
vim.opt.wrap = true
vim.opt.linebreak = true
vim.opt.laststatus = 2
vim.opt.cmdheight = 1
vim.opt.termguicolors = true
vim.opt.smoothscroll = true
-- a bordered hover, above the cursor when it fits (a user's usual K mapping)
vim.keymap.set('n', 'K', function()
  vim.lsp.buf.hover({ border = 'rounded', anchor_bias = 'above', max_width = 110 })
end)
vim.cmd.colorscheme('default')
vim.o.background = 'dark'

vim.diagnostic.config({
  underline = true,
  signs = true,
  virtual_text = false, -- the paper's lines are long paragraphs: the list below reads better
  severity_sort = true,
})

vim.lsp.config('citelens', {
  cmd = vim.json.decode((assert(os.getenv('CITELENS_SHOT_CMD')))),
  settings = { citelens = { verifyDebounceMs = 100 } },
})
vim.lsp.enable('citelens')

_G.citelens_status = function()
  local n = #vim.diagnostic.get(0)
  return (' %s   CiteLens: %d diagnostics '):format(vim.fn.expand('%:t'), n)
end
vim.opt.statusline = '%{v:lua.citelens_status()}%=%l:%c '

local key = os.getenv('CITELENS_SHOT_KEY') or 'dwork92pricingvia'

local ready = assert(os.getenv('CITELENS_SHOT_READY'))

vim.api.nvim_create_autocmd('VimEnter', {
  callback = function()
    local timer = vim.uv.new_timer()
    local waited = 0
    timer:start(200, 200, vim.schedule_wrap(function()
      waited = waited + 200
      local codes = {}
      for _, d in ipairs(vim.diagnostic.get(0)) do
        codes[d.code] = true
      end
      if not (codes.DOI_MISMATCH and codes.UNDEFINED_CITATION) and waited < 60000 then
        return
      end
      timer:stop()
      timer:close()
      -- cursor on the citation key; the paragraph starts near the top of the window
      local lnum = vim.fn.search('\\\\cite{' .. key .. '}', 'w')
      -- every CiteLens diagnostic of the paper in the location list below
      vim.diagnostic.setloclist({ open = false, title = 'CiteLens' })
      vim.cmd('lopen 9')
      vim.cmd('wincmd p')
      if lnum > 0 then
        vim.api.nvim_win_set_cursor(0, { lnum, vim.fn.col('.') + #'\\cite{' - 1 })
        -- select this line's entry in the list
        for i, item in ipairs(vim.fn.getloclist(0)) do
          if item.lnum == lnum then
            vim.cmd(('silent lfirst %d'):format(i))
            break
          end
        end
        vim.api.nvim_win_set_cursor(0, { lnum, vim.fn.col('.') + #'\\cite{' - 1 })
        -- the line at the bottom: the hover opens above it
        vim.cmd('normal! zb')
      end
      local f = assert(io.open(ready, 'w'))
      f:write(waited < 60000 and 'ok' or 'timeout')
      f:close()
    end))
  end,
})
