-- The `citelens` settings the Neovim client sends the server: your own (settings.citelens of
-- vim.lsp.config) and, like VS Code, the workspace's .vscode/settings.json `citelens.*` keys.
--
-- A repository never decides what counts as verified unless you trusted it: the settings
-- object says which values came from the workspace (`client.fromWorkspace`, with your own
-- value of each in `client.userValues`) and whether you trust it (`client.workspaceTrusted`),
-- and the server drops the workspace's snapshot, cache, cache key, sources' addresses,
-- thresholds and model endpoint unless you do (docs/configuration.md, "Workspace trust").
-- You trust a workspace with, before vim.lsp.enable('citelens'):
--
--   vim.g.citelens_trusted_workspaces = { '~/papers/my-own-paper' }   -- or true: every one
local M = {}

--- A settings file larger than this is not read.
M.MAX_BYTES = 1024 * 1024

--- JSON with comments (as VS Code writes settings.json) as plain JSON: // and /* */
--- comments and trailing commas outside strings removed.
---@param text string
---@return string
function M.strip_jsonc(text)
  local out, i, n = {}, 1, #text
  local in_string = false
  while i <= n do
    local c = text:sub(i, i)
    if in_string then
      out[#out + 1] = c
      if c == '\\' then
        out[#out + 1] = text:sub(i + 1, i + 1)
        i = i + 1
      elseif c == '"' then
        in_string = false
      end
    elseif c == '"' then
      in_string = true
      out[#out + 1] = c
    elseif text:sub(i, i + 1) == '//' then
      local stop = text:find('\n', i, true) or n + 1
      i = stop - 1
    elseif text:sub(i, i + 1) == '/*' then
      local stop = text:find('*/', i + 2, true)
      i = stop and stop + 1 or n
    elseif c == ',' then
      local rest = text:match('^%s*([%]}])', i + 1)
      if not rest then
        out[#out + 1] = c
      end
    else
      out[#out + 1] = c
    end
    i = i + 1
  end
  return table.concat(out)
end

local said = {}
local function say(message)
  if not said[message] then
    said[message] = true
    vim.schedule(function()
      vim.notify(message, vim.log.levels.WARN)
    end)
  end
end

--- The workspace's `citelens.*` settings (.vscode/settings.json of ``root``), without the
--- `citelens.server.*` ones (how the editor starts the server: never a repository's).
---@param root string|nil
---@return table<string, any>
function M.workspace(root)
  if not root or root == '' then
    return {}
  end
  local path = vim.fs.joinpath(root, '.vscode', 'settings.json')
  local stat = vim.uv.fs_stat(path)
  if not stat or stat.type ~= 'file' then
    return {}
  end
  if stat.size > M.MAX_BYTES then
    say(('CiteLens: %s not read: larger than 1 MB'):format(path))
    return {}
  end
  local fd = io.open(path, 'r')
  if not fd then
    return {}
  end
  local text = fd:read('*a') or ''
  fd:close()
  local ok, data = pcall(vim.json.decode, M.strip_jsonc(text))
  if not ok or type(data) ~= 'table' then
    say(('CiteLens: %s not read: not JSON'):format(path))
    return {}
  end
  local out = {}
  for key, value in pairs(data) do
    if type(key) == 'string' and key:sub(1, 9) == 'citelens.' and key:sub(1, 16) ~= 'citelens.server.' then
      out[key:sub(10)] = value
    end
  end
  return out
end

--- Whether you trust the workspace at ``root`` (vim.g.citelens_trusted_workspaces).
---@param root string|nil
---@return boolean
function M.trusted(root)
  local trusted = vim.g.citelens_trusted_workspaces
  if trusted == true then
    return true
  end
  if type(trusted) ~= 'table' or not root then
    return false
  end
  local mine = vim.fs.normalize(root)
  for _, folder in ipairs(trusted) do
    if type(folder) == 'string' and vim.fs.normalize(vim.fn.expand(folder)) == mine then
      return true
    end
  end
  return false
end

--- What the server gets: your settings, the workspace's over them (the more specific wins,
--- as in VS Code), and where each came from.
---@param root string|nil
---@param user table|nil your settings.citelens
---@return table
function M.for_server(root, user)
  local out = {}
  for key, value in pairs(type(user) == 'table' and user or {}) do
    out[key] = value
  end
  local from, mine = {}, {}
  for key, value in pairs(M.workspace(root)) do
    if out[key] ~= nil then
      mine[key] = out[key]
    end
    out[key] = value
    from[#from + 1] = key
  end
  table.sort(from)
  if #from == 0 then
    return next(out) and out or vim.empty_dict()
  end
  out.client = {
    workspaceTrusted = M.trusted(root),
    fromWorkspace = from,
    userValues = next(mine) and mine or vim.empty_dict(),
  }
  return out
end

return M
