-- CiteLens language server configuration for Neovim >= 0.11.
--
-- Put this directory (clients/neovim) on 'runtimepath', or copy this file to
-- ~/.config/nvim/lsp/citelens.lua, then:
--
--   vim.lsp.enable('citelens')
--
-- Override anything with vim.lsp.config('citelens', { ... }), e.g. the command
-- of a virtualenv: cmd = { '/path/to/venv/bin/citelens', 'serve' }.
-- Every server setting (see docs/configuration.md) goes under settings.citelens,
-- with the same camelCase keys as in VS Code.

---@param client vim.lsp.Client
---@param bufnr integer
local function add_commands(client, bufnr)
  local function run(command, on_result)
    client:exec_cmd({ title = command, command = command, arguments = {} }, { bufnr = bufnr }, function(err, result)
      if err then
        vim.notify(('CiteLens: %s failed: %s'):format(command, err.message), vim.log.levels.ERROR)
      elseif on_result then
        on_result(result)
      end
    end)
  end
  vim.api.nvim_buf_create_user_command(bufnr, 'CiteLensVerifyNow', function()
    run('citelens.verifyNow')
  end, { desc = 'CiteLens: verify citations now' })
  vim.api.nvim_buf_create_user_command(bufnr, 'CiteLensClearCache', function()
    run('citelens.clearCache')
  end, { desc = 'CiteLens: clear the verification cache' })
  vim.api.nvim_buf_create_user_command(bufnr, 'CiteLensReport', function()
    run('citelens.report', function(result)
      local text = type(result) == 'string' and result or vim.json.encode(result)
      vim.cmd.new()
      vim.bo.buftype, vim.bo.bufhidden, vim.bo.filetype = 'nofile', 'wipe', 'json'
      vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(text, '\n'))
    end)
  end, { desc = 'CiteLens: show the citation report (JSON)' })
end

---@type vim.lsp.Config
return {
  cmd = { 'citelens', 'serve' },
  filetypes = { 'tex', 'plaintex', 'bib', 'markdown', 'rmd', 'quarto' },
  root_markers = { '.latexmkrc', 'latexmkrc', '_quarto.yml', '.git' },
  -- Sent as initializationOptions and answered to workspace/configuration (section "citelens").
  settings = {
    -- (an empty table would reach the server as a JSON list: keep the dict)
    citelens = vim.empty_dict() --[[ e.g. {
      verificationEnabled = true,
      mailto = 'you@example.org',
      extraCiteCommands = { 'citeauthor' },
      diagnosticSeverity = { UNVERIFIED = 'off', NOT_FOUND = 'warning' },
    } ]],
  },
  before_init = function(params, config)
    local settings = (config.settings or {}).citelens
    if type(settings) ~= 'table' or vim.tbl_isempty(settings) then
      settings = vim.empty_dict()
    end
    params.initializationOptions = settings
  end,
  on_attach = add_commands,
}
