-- End-to-end scenario run inside headless Neovim by tests/test_neovim_e2e.py.
-- Reads a JSON scenario from $CITELENS_TEST_SCENARIO, writes what it saw to scenario.out
-- (JSON), then quits. Every wait is bounded (vim.wait), so Neovim always exits.
--
-- scenario = {
--   open = '/tmp/.../Paper.tex',        -- document to edit
--   out = '/tmp/.../result.json',
--   want = { { code = 'DOI_MISMATCH', file = '/tmp/.../Biblio.bib' }, { code = 'UNDEFINED_CITATION' } },
--                                          -- wait until all are published
--   attach_timeout_ms = 20000, diagnostics_timeout_ms = 90000,
--   fix = { code = 'DOI_MISMATCH', file = '/tmp/.../Biblio.bib', text_out = '/tmp/.../fixed.bib' },
--   hover = { line = 12, col = 40, until_absent = 'Checking claim', timeout_ms = 30000 },
--                                          -- press K there (vim.lsp.buf.hover) and read the float,
--                                          -- again until its text lacks until_absent
--   mark = { code = 'NOT_FOUND', file = '/tmp/.../Biblio.bib', title = 'Mark as checked (NOT_FOUND)',
--            timeout_ms = 30000 },        -- choose that code action on the first such diagnostic,
--                                          -- apply it, wait until the entry's diagnostic is gone
--   no_server = { wait_ms = 3000 },        -- the command is missing: record :messages
--   zotero = { code = 'DOI_MISMATCH', file = '/tmp/.../main.tex', key = 'dwork92pricingvia',
--              choose = 'Write to Zotero', message = 'Fixed in Zotero', timeout_ms = 60000 },
--                                          -- the first code action ("Fix in Zotero") at that
--                                          -- diagnostic, run; the server's question answered by
--                                          -- typing the number of `choose` at Neovim's own prompt
--                                          -- (vim.ui.select, as shipped); then wait for a message
--                                          -- starting with `message` and record the diagnostics
-- }
local M = {}

local result = { steps = {} }

local function write_json(path, value)
  local f = assert(io.open(path, 'w'))
  f:write(vim.json.encode(value))
  f:close()
end

local function citelens_client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'citelens' })[1]
end

--- Wait until the CiteLens client is attached to bufnr and initialized.
local function wait_attach(bufnr, timeout)
  local ok = vim.wait(timeout, function()
    local c = citelens_client(bufnr)
    return c ~= nil and c.initialized == true
  end, 50)
  return ok and citelens_client(bufnr) or nil
end

local function diagnostics()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get()) do
    if d.source == 'citelens' then
      local lsp = (d.user_data or {}).lsp or {}
      table.insert(out, {
        file = vim.api.nvim_buf_get_name(d.bufnr),
        bufnr = d.bufnr,
        lnum = d.lnum,
        col = d.col,
        end_lnum = d.end_lnum,
        end_col = d.end_col,
        code = d.code,
        severity = d.severity,
        message = d.message,
        lsp = lsp,
      })
    end
  end
  return out
end

--- want: list of { code = 'X', file = '/abs/path' (optional) }
local function have_codes(want)
  local seen = {}
  for _, d in ipairs(diagnostics()) do
    seen[tostring(d.code)] = true
    seen[tostring(d.code) .. '\0' .. d.file] = true
  end
  for _, w in ipairs(want) do
    if not seen[w.file and (w.code .. '\0' .. w.file) or w.code] then
      return false
    end
  end
  return true
end

local function step(name, fn)
  local t0 = vim.uv.hrtime()
  local ok, err = xpcall(fn, debug.traceback)
  table.insert(result.steps, { name = name, ok = ok, ms = (vim.uv.hrtime() - t0) / 1e6 })
  if not ok then
    result.error = ('%s: %s'):format(name, err)
  end
  return ok
end

local function apply_fix(s)
  local target
  for _, d in ipairs(diagnostics()) do
    if d.code == s.fix.code then
      target = d
      break
    end
  end
  assert(target, 'no ' .. s.fix.code .. ' diagnostic to fix')
  -- Show the diagnostic's file (the server learns it is open) and ask there.
  vim.cmd.edit(vim.fn.fnameescape(target.file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client = assert(wait_attach(bufnr, s.attach_timeout_ms), 'client did not attach to ' .. target.file)
  -- the diagnostic as the server published it (our copy may be stale after didOpen)
  local lsp_diag = target.lsp
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = lsp_diag.range,
    context = { diagnostics = { lsp_diag }, only = { 'quickfix' } },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, s.request_timeout_ms)
  assert(responses, 'textDocument/codeAction timed out')
  local actions = {}
  for _, resp in pairs(responses) do
    assert(not resp.err, vim.inspect(resp.err))
    vim.list_extend(actions, resp.result or {})
  end
  result.code_actions = actions
  local action = assert(actions[1], 'the server offered no quick fix')
  if not action.edit and action.data and client:supports_method('codeAction/resolve') then
    local resolved = client:request_sync('codeAction/resolve', action, s.request_timeout_ms, bufnr)
    action = assert(resolved and resolved.result, 'codeAction/resolve failed')
  end
  result.applied = action
  if action.edit then
    vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  end
  local command = action.command
  if type(command) == 'table' then
    local done = false
    client:exec_cmd(command, { bufnr = bufnr }, function() done = true end)
    vim.wait(s.request_timeout_ms, function() return done end, 20)
  end
  -- the text of the file the fix is about (the edit may target another file than the diagnostic)
  local fixed = bufnr
  if s.fix.file then
    fixed = vim.fn.bufadd(s.fix.file)
    vim.fn.bufload(fixed)
  end
  local lines = vim.api.nvim_buf_get_lines(fixed, 0, -1, false)
  local f = assert(io.open(s.fix.text_out, 'w'))
  f:write(table.concat(lines, '\n') .. '\n')
  f:close()
end

--- "Mark as checked": the code action on the first diagnostic of s.mark.code in s.mark.file,
--- applied as Neovim applies any code action; then wait until that entry's diagnostic is gone.
local function mark(s)
  local m = s.mark
  local target
  for _, d in ipairs(diagnostics()) do
    if d.code == m.code and d.file == m.file then
      target = d
      break
    end
  end
  assert(target, 'no ' .. m.code .. ' diagnostic in ' .. m.file)
  vim.cmd.edit(vim.fn.fnameescape(target.file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client = assert(wait_attach(bufnr, s.attach_timeout_ms), 'client did not attach to ' .. target.file)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = target.lsp.range,
    context = { diagnostics = { target.lsp }, only = { 'quickfix' } },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, s.request_timeout_ms)
  assert(responses, 'textDocument/codeAction timed out')
  local titles, action = {}, nil
  for _, resp in pairs(responses) do
    for _, a in ipairs(resp.result or {}) do
      table.insert(titles, a.title)
      if a.title == m.title then
        action = a
      end
    end
  end
  result.mark_titles = titles
  assert(action and action.edit, 'no code action ' .. m.title)
  local key = (target.lsp.data or {}).key
  result.mark_key = key
  local before = vim.api.nvim_buf_line_count(bufnr)
  vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  result.mark_lines_added = vim.api.nvim_buf_line_count(bufnr) - before
  result.mark_line = vim.api.nvim_buf_get_lines(bufnr, target.lnum, target.lnum + 1, false)[1]
  result.mark_entry_line = vim.api.nvim_buf_get_lines(bufnr, target.lnum + 1, target.lnum + 2, false)[1]
  result.mark_cleared = vim.wait(m.timeout_ms or 30000, function()
    for _, d in ipairs(diagnostics()) do
      if d.code == m.code and d.file == m.file and (d.lsp.data or {}).key == key then
        return false
      end
    end
    return true
  end, 100)
end


--- "Fix in Zotero": run the first code action at the diagnostic; Neovim asks the writer with
--- its own vim.ui.select (the server's window/showMessageRequest): the prompt is recorded and
--- answered by typing the chosen item's number, as a user does at that prompt.
local function zotero(s)
  local z = s.zotero
  local target
  for _, d in ipairs(diagnostics()) do
    if d.code == z.code and d.file == z.file then
      target = d
      break
    end
  end
  assert(target, 'no ' .. z.code .. ' diagnostic in ' .. z.file)
  vim.cmd.edit(vim.fn.fnameescape(target.file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client = assert(wait_attach(bufnr, s.attach_timeout_ms), 'client did not attach')
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = target.lsp.range,
    context = { diagnostics = { target.lsp }, only = { 'quickfix' } },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, s.request_timeout_ms)
  assert(responses, 'textDocument/codeAction timed out')
  local actions = {}
  for _, resp in pairs(responses) do
    vim.list_extend(actions, resp.result or {})
  end
  result.zotero_titles = vim.tbl_map(function(a) return a.title end, actions)
  local action = assert(actions[1], 'no code action')
  result.zotero_action = action
  -- Neovim's own prompt: vim.ui.select as shipped; we only watch what it is given, and type
  -- the number of the chosen item at its inputlist
  local select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    result.zotero_prompt = opts.prompt
    result.zotero_choices = vim.tbl_map(function(i) return i.title end, items)
    for n, item in ipairs(items) do
      if item.title == z.choose then
        vim.api.nvim_feedkeys(tostring(n) .. '\r', 't', false)
      end
    end
    return select(items, opts, on_choice)
  end
  local done, cmd_result = false, nil
  client:exec_cmd(action.command, { bufnr = bufnr }, function(err, res)
    result.zotero_error = err and vim.inspect(err) or nil
    cmd_result = res
    done = true
  end)
  local t0 = vim.uv.hrtime()
  vim.wait(z.timeout_ms or 60000, function() return done end, 20)
  result.zotero_command_ms = (vim.uv.hrtime() - t0) / 1e6
  vim.ui.select = select
  result.zotero_result = cmd_result
  t0 = vim.uv.hrtime()
  result.zotero_said = vim.wait(z.timeout_ms or 60000, function()
    return vim.fn.execute('messages'):find(z.message, 1, true) ~= nil
  end, 100)
  result.zotero_said_ms = (vim.uv.hrtime() - t0) / 1e6
  -- what the user sees next, in the paper: the finding gone (or still there)
  t0 = vim.uv.hrtime()
  vim.cmd('checktime')
  result.zotero_checktime_ms = (vim.uv.hrtime() - t0) / 1e6
  t0 = vim.uv.hrtime()
  vim.wait(z.settle_ms or 3000, function()
    for _, d in ipairs(diagnostics()) do
      if d.code == z.code then
        return false
      end
    end
    return true
  end, 100)
  result.zotero_settle_ms = (vim.uv.hrtime() - t0) / 1e6
  result.zotero_messages = vim.fn.execute('messages')
  result.diagnostics_after = diagnostics()
end

--- The lines of the floating window a hover opened, or nil.
local function float_lines()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), win
    end
  end
  return nil
end

local function close_floats()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      vim.api.nvim_win_close(win, true)
    end
  end
end

--- Press K (vim.lsp.buf.hover) at the position and read what the float shows.
local function hover_once(h, timeout)
  close_floats()
  vim.api.nvim_win_set_cursor(0, { h.line + 1, h.col })
  vim.lsp.buf.hover()
  local lines
  vim.wait(timeout, function()
    lines = float_lines()
    return lines ~= nil
  end, 50)
  return lines
end

local function hover(s)
  local h = s.hover
  local deadline = vim.uv.now() + (h.timeout_ms or 30000)
  local lines
  repeat
    lines = hover_once(h, s.request_timeout_ms)
    local text = lines and table.concat(lines, '\n') or ''
    if not h.until_absent or (lines and not text:find(h.until_absent, 1, true)) then
      break
    end
    vim.wait(500)
  until vim.uv.now() > deadline
  result.hover_lines = lines
  close_floats()
end

local function run()
  local s = vim.json.decode((assert(os.getenv('CITELENS_TEST_SCENARIO'), 'CITELENS_TEST_SCENARIO not set')))
  s.attach_timeout_ms = s.attach_timeout_ms or 20000
  s.diagnostics_timeout_ms = s.diagnostics_timeout_ms or 90000
  s.request_timeout_ms = s.request_timeout_ms or 15000
  local client
  if s.no_server then
    step('no_server', function()
      vim.cmd.edit(vim.fn.fnameescape(s.open))
      vim.wait(s.no_server.wait_ms or 3000, function()
        return vim.fn.execute('messages'):find('CiteLens', 1, true) ~= nil
      end, 50)
      result.messages = vim.fn.execute('messages')
      result.clients = #vim.lsp.get_clients({ name = 'citelens' })
    end)
    write_json(s.out, result)
    return
  end
  local ok = step('attach', function()
    vim.cmd.edit(vim.fn.fnameescape(s.open))
    local bufnr = vim.api.nvim_get_current_buf()
    result.filetype = vim.bo[bufnr].filetype
    client = assert(wait_attach(bufnr, s.attach_timeout_ms), 'CiteLens did not attach within timeout')
    result.attach = {
      name = client.name,
      root_dir = client.root_dir,
      cmd = type(client.config.cmd) == 'table' and client.config.cmd or vim.g.citelens_cmd,
      server_info = client.server_info,
      capabilities = client.server_capabilities,
    }
  end)
  if ok and s.want then
    ok = step('diagnostics', function()
      result.diagnostics_complete = vim.wait(s.diagnostics_timeout_ms, function()
        return have_codes(s.want)
      end, 100)
      result.diagnostics = diagnostics()
    end)
  end
  if ok and s.hover then
    step('hover', function() hover(s) end)
  end
  if ok and s.fix then
    step('fix', function() apply_fix(s) end)
  end
  if ok and s.mark then
    step('mark', function() mark(s) end)
  end
  if ok and s.zotero then
    step('zotero', function() zotero(s) end)
  end
  write_json(s.out, result)
end

--- Run the scenario; always quit (exit code 3 when the harness itself broke).
function M.run()
  local ok, err = xpcall(run, debug.traceback)
  if not ok then
    io.stderr:write('e2e harness error: ' .. tostring(err) .. '\n')
    vim.cmd('cquit 3')
  end
  vim.cmd('qall!')
end

return M
