-- CiteLens language server configuration for Neovim >= 0.11.
--
-- Put this directory (clients/neovim) on 'runtimepath', or copy this file to
-- ~/.config/nvim/lsp/citelens.lua, then:
--
--   vim.lsp.enable('citelens')
--
-- The server command: `citelens serve`, or set your own before vim.lsp.enable, e.g. the
-- virtualenv of a CiteLens checkout:
--
--   vim.g.citelens_cmd = { vim.fn.expand('~/citelens/.venv/bin/citelens'), 'serve' }
--
-- (a string is taken as the path of the executable). When the executable cannot be
-- found, you get a message (vim.notify) saying so, instead of no server and no word.
-- Override anything else with vim.lsp.config('citelens', { ... }). Every server
-- setting (see docs/configuration.md) goes under settings.citelens, with the same
-- camelCase keys as in VS Code.

--- The command to start: vim.g.citelens_cmd, else `citelens serve`.
---@return string[]
local function server_cmd()
  local cmd = vim.g.citelens_cmd
  if type(cmd) == 'string' and cmd ~= '' then
    return { cmd, 'serve' }
  elseif type(cmd) == 'table' and #cmd > 0 then
    return cmd
  end
  return { 'citelens', 'serve' }
end

local reported = {}

--- Start the server, or say why not: Neovim would otherwise skip a missing executable
--- without a message (only a line in lsp.log).
---@param dispatchers vim.lsp.rpc.Dispatchers
---@param config vim.lsp.ClientConfig
local function start(dispatchers, config)
  local cmd = server_cmd()
  if vim.fn.executable(cmd[1]) == 1 then
    return vim.lsp.rpc.start(cmd, dispatchers, { cwd = config and config.root_dir or nil })
  end
  if not reported[cmd[1]] then
    reported[cmd[1]] = true
    local message = (
      'CiteLens: cannot start the language server: %q is not an executable (not found on PATH?). '
        .. "Set its full path, e.g. vim.g.citelens_cmd = { '/path/to/citelens/.venv/bin/citelens', 'serve' }"
    ):format(cmd[1])
    -- scheduled: an error message raised while a buffer is being opened would abort the open
    vim.schedule(function()
      vim.notify(message, vim.log.levels.ERROR)
    end)
  end
  -- a client that is already closed: Neovim gives up on it quietly
  vim.schedule(function()
    dispatchers.on_exit(0, 0) -- (a non-zero code would add a second message pointing at lsp.log)
  end)
  return {
    request = function() return false end,
    notify = function() return false end,
    is_closing = function() return true end,
    terminate = function() end,
  }
end

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
    -- the text report of `citelens check` (one line per finding), not the JSON
    client:exec_cmd(
      { title = 'citelens.report', command = 'citelens.report', arguments = { { format = 'text' } } },
      { bufnr = bufnr },
      function(err, result)
        if err then
          vim.notify(('CiteLens: citelens.report failed: %s'):format(err.message), vim.log.levels.ERROR)
          return
        end
        local text = type(result) == 'string' and result or vim.inspect(result)
        vim.cmd.new()
        vim.bo.buftype, vim.bo.bufhidden, vim.bo.filetype = 'nofile', 'wipe', 'text'
        vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(text, '\n', { trimempty = true }))
      end
    )
  end, { desc = 'CiteLens: show the citation report' })
  -- cite while writing: the completion item's command appends the chosen paper's entry
  -- (the server also adds it when the key is inserted without it); <C-x><C-o> completes
  if vim.lsp.completion and vim.lsp.completion.enable then
    vim.lsp.completion.enable(true, client.id, bufnr, { autotrigger = false })
  end
end

---@type vim.lsp.Config
return {
  cmd = start,
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
  -- Your settings.citelens, and the workspace's .vscode/settings.json `citelens.*` keys: the
  -- server takes those that decide what counts as verified (snapshot, cache, its key, the
  -- sources' addresses, ...) from a workspace only when you trust it, with
  -- vim.g.citelens_trusted_workspaces (lua/citelens/settings.lua).
  before_init = function(params, config)
    params.initializationOptions = require('citelens.settings').for_server(
      config.root_dir,
      (config.settings or {}).citelens
    )
  end,
  handlers = {
    ['workspace/configuration'] = function(_, params, ctx)
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      local out = {}
      for i, item in ipairs(params.items or {}) do
        if item.section == 'citelens' and client then
          out[i] = require('citelens.settings').for_server(client.root_dir, (client.settings or {}).citelens)
        else
          out[i] = vim.NIL
        end
      end
      return out
    end,
  },
  on_attach = add_commands,
}
