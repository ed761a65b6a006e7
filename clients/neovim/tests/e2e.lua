-- End-to-end test of the ragls Neovim client against a real ragls server.
--
-- Run (see tests/run.sh, which prepares the workspace and environment):
--   nvim --headless -u NONE -i NONE -n -c 'luafile tests/e2e.lua'
-- Environment:
--   RAGLS_SERVER      absolute path of the ragls executable
--   RAGLS_WS          workspace (a copy of tests/fixtures/polyglot)
--   RAGLS_PLUGIN_DIR  clients/neovim
--   RAGLS_TEST_OUT    file to append "ok <name>" / "not ok <name>: <why>" lines to
-- Exits 0 when every case passed, 1 otherwise (never hangs: every wait is bounded).

local results = { passed = 0, failed = 0 }
local out_path = os.getenv('RAGLS_TEST_OUT')
local label = os.getenv('RAGLS_TEST_LABEL') or ('nvim-' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor))

local function emit(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
  if out_path then
    local f = io.open(out_path, 'a')
    if f then
      f:write(line .. '\n')
      f:close()
    end
  end
end

-- opts.known_bug: a server bug already reported; a failure is reported as "skip ... KNOWN
-- SERVER BUG" unless RAGLS_STRICT_SERVER=1, and the case passes by itself once it is fixed.
local strict_server = os.getenv('RAGLS_STRICT_SERVER') == '1'
results.skipped = 0

local function case(name, fn, opts)
  local t0 = vim.loop.hrtime()
  local ok, err = xpcall(fn, debug.traceback)
  local ms = math.floor((vim.loop.hrtime() - t0) / 1e6)
  if ok then
    results.passed = results.passed + 1
    emit(string.format('ok %s: %s (%d ms)', label, name, ms))
  elseif opts and opts.known_bug and not strict_server then
    results.skipped = results.skipped + 1
    local first = tostring(err):match('^[^\n]*')
    emit(string.format('skip %s: %s: KNOWN SERVER BUG (%s): %s', label, name, opts.known_bug, first))
  else
    results.failed = results.failed + 1
    emit(string.format('not ok %s: %s (%d ms): %s', label, name, ms, tostring(err):gsub('\n', '\n#   ')))
  end
  return ok
end

local function check(cond, msg, ...)
  if not cond then
    error(string.format(msg or 'check failed', ...), 2)
  end
end

local function wait(ms, pred, what)
  local ok = vim.wait(ms, pred, 25)
  check(ok, 'timed out after %d ms waiting for %s', ms, what or 'condition')
end

local index_ready = false
local function need_ready()
  if not index_ready then
    error('skipped: the index never became ready', 2)
  end
end

local function finish()
  emit(string.format('# %s: %d passed, %d failed, %d skipped', label, results.passed, results.failed, results.skipped))
  -- stop servers so that no process outlives the test
  pcall(function()
    local util = require('ragls.util')
    local clients = util.get_clients({ name = 'ragls' })
    for _, c in ipairs(clients) do
      util.stop(c)
    end
    vim.wait(5000, function()
      for _, c in ipairs(clients) do
        if not util.is_stopped(c) then
          return false
        end
      end
      return true
    end, 50)
    for _, c in ipairs(clients) do
      if not util.is_stopped(c) then
        util.stop(c, true)
      end
    end
  end)
  if results.failed > 0 or results.passed == 0 then
    vim.cmd('cquit 1')
  else
    vim.cmd('qall!')
  end
end

local QUERY = 'calculate the invoice total including tax'
local run_tool -- defined in main (needs wait/check)
local forced_mode = os.getenv('RAGLS_TEST_MODE')
if forced_mode == '' then
  forced_mode = nil
end

local function main()
  local server = assert(os.getenv('RAGLS_SERVER'), 'RAGLS_SERVER not set')
  local ws = assert(os.getenv('RAGLS_WS'), 'RAGLS_WS not set')
  local plugin_dir = assert(os.getenv('RAGLS_PLUGIN_DIR'), 'RAGLS_PLUGIN_DIR not set')
  ws = vim.fn.fnamemodify(ws, ':p'):gsub('/$', '')

  vim.opt.rtp:prepend(plugin_dir)
  vim.cmd('filetype on')
  vim.cmd('runtime! plugin/ragls.lua')
  vim.o.swapfile = false
  vim.o.hidden = true

  -- progress as core Neovim reports it
  -- what a statusline / progress plugin sees: vim.lsp.status() on 0.10+, get_progress_messages() before
  local core_progress = 0
  local core_texts = {}
  if vim.fn.has('nvim-0.10') == 1 then
    vim.api.nvim_create_autocmd('LspProgress', {
      callback = function()
        core_progress = core_progress + 1
        table.insert(core_texts, vim.lsp.status())
      end,
    })
  else
    vim.api.nvim_create_autocmd('User', {
      pattern = 'LspProgressUpdate',
      callback = function()
        core_progress = core_progress + 1
        for _, m in ipairs(vim.lsp.util.get_progress_messages()) do
          table.insert(core_texts, tostring(m.title) .. ': ' .. tostring(m.message))
        end
      end,
    })
  end

  local events = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = { 'RaglsSearchDone', 'RaglsContextDone', 'RaglsStatusShown', 'RaglsReindexDone', 'RaglsFeedbackDone' },
    callback = function(a)
      events[a.match] = (events[a.match] or 0) + 1
    end,
  })

  local ragls = require('ragls')
  local status = require('ragls.status')
  local util = require('ragls.util')
  local lsp = require('ragls.lsp')

  local client
  local buf

  case('setup() registers commands and picks the attach path for this version', function()
    local forced = forced_mode
    ragls.setup({
      attach_mode = forced,
      cmd = { server },
      settings = { retrieval = { topK = 8 } },
      context = { register = 'r' },
    })
    for _, c in ipairs({ 'RagSearch', 'RagContext', 'RagStatus', 'RagReindex', 'RagFeedback', 'RagMark' }) do
      check(vim.fn.exists(':' .. c) == 2, 'command %s missing', c)
    end
    local want = forced or (vim.fn.has('nvim-0.11') == 1 and 'config' or (vim.lsp.start and 'start' or 'start_client'))
    check(lsp.mode == want, 'mode %s, want %s', tostring(lsp.mode), want)
    if want == 'config' then
      check(vim.lsp.is_enabled == nil or vim.lsp.is_enabled('ragls'), 'vim.lsp.enable("ragls") not active')
    end
  end)

  case('attach: opening a workspace file starts ragls with the marker root', function()
    vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/billing/invoice.py'))
    buf = vim.api.nvim_get_current_buf()
    wait(20000, function()
      return util.get_clients({ bufnr = buf, name = 'ragls' })[1] ~= nil
    end, 'ragls to attach to billing/invoice.py')
    client = util.get_clients({ bufnr = buf, name = 'ragls' })[1]
    check(util.client_root(client) == ws, 'root %s, want %s', tostring(util.client_root(client)), ws)
    wait(20000, function()
      return client.initialized == true
    end, 'initialize')
  end)

  case('attach: a second file (other language, no marker of its own) reuses the client', function()
    vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/web/src/session.ts'))
    local b2 = vim.api.nvim_get_current_buf()
    wait(10000, function()
      return util.get_clients({ bufnr = b2, name = 'ragls' })[1] ~= nil
    end, 'attach to web/src/session.ts')
    check(util.get_clients({ bufnr = b2, name = 'ragls' })[1].id == client.id, 'second client started')
    check(#util.get_clients({ name = 'ragls' }) == 1, 'more than one ragls client')
    vim.cmd('buffer ' .. buf)
  end)

  case('attach: a buffer without a filetype (keep.log) attaches too', function()
    local plain = ws .. '/keep.log'
    if vim.fn.filereadable(plain) == 0 then
      plain = ws .. '/NOTES'
      vim.fn.writefile({ 'plain notes' }, plain)
    end
    vim.cmd('edit ' .. vim.fn.fnameescape(plain))
    local b3 = vim.api.nvim_get_current_buf()
    check(vim.bo[b3].filetype == '', '%s has filetype %s', plain, vim.bo[b3].filetype)
    wait(10000, function()
      return util.get_clients({ bufnr = b3, name = 'ragls' })[1] ~= nil
    end, 'attach to keep.log')
    check(util.get_clients({ bufnr = b3, name = 'ragls' })[1].id == client.id, 'another client started')
    vim.cmd('buffer ' .. buf)
  end)

  case('progress: $/progress begin/end reach the client and core progress', function()
    wait(150000, function()
      local st = status.get(client.id)
      return st and ((st.progress_seen['begin'] >= 1 and st.progress_seen['end'] >= 1) or st.state == 'error')
    end, '$/progress begin and end')
    local st = status.get(client.id)
    check(st.progress_seen['begin'] >= 1 and st.progress_seen['end'] >= 1, 'index error before progress ended: %s', tostring(st.message))
    check(core_progress > 0, 'core progress event (LspProgress / LspProgressUpdate) not seen')
    local joined = table.concat(core_texts, ' | ')
    check(joined:find('ragls: indexing', 1, true) and joined:find('%d+/%d+ files'), 'core progress text: %s', joined)
  end)

  case('status: index state reaches ready with consistent counts', function()
    wait(150000, function()
      local st = status.get(client.id)
      return st and (st.state == 'ready' or st.state == 'error')
    end, 'state ready')
    check(status.get(client.id).state == 'ready', 'index state %s: %s', status.get(client.id).state, tostring(status.get(client.id).message))
    local err, st = ragls.index_status_sync()
    check(not err, 'rag/indexStatus: %s', vim.inspect(err))
    check(st.state == 'ready', 'state %s', tostring(st.state))
    check(st.filesTotal > 0, 'no files indexed')
    check(st.filesIndexed + st.filesFailed == st.filesTotal, 'indexed %d + failed %d ~= total %d', st.filesIndexed, st.filesFailed, st.filesTotal)
    check(st.chunks > 0, 'no chunks')
    index_ready = true
  end)

  case('statusline: string changes from busy to ready', function()
    need_ready()
    local s = ragls.status()
    check(s:match('^RAG ✓ [%d,]+ chunks$'), 'ready string %q', s)
    -- exactly the server's display of the status
    local shown = status.get(client.id).status.display
    check(type(shown) == 'table' and shown.health == 'ok', 'display %s', vim.inspect(shown))
    check(s == 'RAG ✓ ' .. shown.text, 'statusline %q, display text %q', s, tostring(shown.text))
    local busy_at, ready_at
    for i, h in ipairs(status.history) do
      if not busy_at and (h:match('^RAG … [%d,]+/[%d,]+$') or h == 'RAG … indexing' or h == 'RAG …') then
        busy_at = i
      end
      if h:match('^RAG ✓') then
        ready_at = i
      end
    end
    check(busy_at, 'never saw a busy string; history: %s', table.concat(status.history, ' | '))
    check(ready_at and ready_at > busy_at, 'ready did not follow busy; history: %s', table.concat(status.history, ' | '))
    -- a plain statusline expression works too
    vim.o.statusline = "%{luaeval(\"require'ragls'.status()\")}"
    check(vim.api.nvim_eval_statusline(vim.o.statusline, {}).str == s, 'statusline expression mismatch')
    -- formatting of the other states
    check(status.format({ state = 'indexing', done = 1234, total = 5000 }) == 'RAG … 1,234/5,000', 'indexing format')
    local ready_st = { state = 'ready', phase = 'idle', chunks = 18000, display = { health = 'ok', text = '18,000 chunks', tooltip = {} } }
    check(status.format({ state = 'ready', status = ready_st }) == 'RAG ✓ 18,000 chunks', 'ready format')
    -- the client maps nothing: a display that contradicts the fields is shown as it is
    local odd = { state = 'ready', phase = 'idle', chunks = 5, filesFailed = 0, display = { health = 'error', text = 'from the server 7', tooltip = { 'only' } } }
    check(status.format({ state = 'ready', status = odd }) == 'RAG ✗ from the server 7', 'display wins: %q', status.format({ state = 'ready', status = odd }))
    -- an older server without display: its state
    check(status.format({ state = 'ready', status = { state = 'ready', phase = 'idle', chunks = 5 } }) == 'RAG ✓ ready', 'old server')
    check(vim.deep_equal(status.shown({ state = 'error', phase = 'waiting' }).tooltip, { 'State: error (waiting)' }), 'old server tooltip')
    check(status.format({ state = 'error' }) == 'RAG ✗', 'error format (server exited)')
    check(status.format({ state = 'starting' }) == 'RAG …', 'starting format')
  end)

  for file, min in pairs({ ['status-cases.json'] = 10, ['status-folder-cases.json'] = 4 }) do
  case('statusline: the server display of every case (tests/fixtures/' .. file .. ')', function()
    local f = assert(io.open(os.getenv('RAGLS_PLUGIN_DIR') .. '/../../tests/fixtures/' .. file))
    local tbl = vim.fn.json_decode(f:read('*a'))
    f:close()
    check(#tbl.cases >= min, 'only %d cases', #tbl.cases)
    local icons = { prefix = 'RAG', ready = '✓', error = '✗', busy = '…', warning = '⚠' }
    local glyphs = { ok = '✓', indexing = '…', warning = '⚠', error = '✗' }
    for _, c in ipairs(tbl.cases) do
      -- the status as the server sends it: its fields and its display (tests/unit/test_status_cases.py)
      local st = vim.tbl_extend('force', tbl.base, c.status, { display = c.display })
      check(vim.deep_equal(status.shown(st), c.display), '%s: shown %s', c.name, vim.inspect(status.shown(st)))
      -- the statusline renders it (state as apply_index_status leaves it)
      local line = status.format({ state = st.state, status = st }, icons)
      local want = 'RAG ' .. glyphs[c.display.health] .. ' ' .. c.display.text
      check(line == want, '%s: statusline %q, want %q', c.name, line, want)
      -- :RagStatus shows the statusline and the tooltip lines as they are
      local lines = require('ragls.commands').status_lines(st)
      check(lines[1] == 'statusline: ' .. want, '%s: %q', c.name, lines[1])
      check(vim.deep_equal(vim.list_slice(lines, 2, #c.display.tooltip + 1), c.display.tooltip), '%s: lines %s', c.name, vim.inspect(lines))
    end
  end)
  end

  case('protocol: every camelCase field the plugin reads is in `ragls schema --protocol` or the settings', function()
    local server = os.getenv('RAGLS_SERVER')
    local out = vim.fn.system({ server, 'schema', '--protocol' })
    check(vim.v.shell_error == 0, 'ragls schema --protocol failed: %s', out)
    local proto = vim.fn.json_decode(out)
    check(type(proto.methods['rag/statusChanged']) == 'table' and proto.methods['rag/statusChanged'].kind == 'notification', 'rag/statusChanged')
    for _, m in ipairs({ 'rag/retrieve', 'rag/indexStatus', 'rag/reindex' }) do
      check(type(proto.methods[m]) == 'table' and proto.methods[m].kind == 'request', '%s not a request', m)
    end
    local known = {}
    for _, def in pairs(proto['$defs']) do
      for name in pairs(type(def.properties) == 'table' and def.properties or {}) do
        known[name] = true
      end
    end
    check(known.display and known.health and known.tooltip and known.nestedIn, 'the schema lacks the status display')
    local flat = vim.fn.json_decode(vim.fn.system({ server, 'schema', '--flat' }))
    for key in pairs(flat) do
      for part in key:gmatch('[^.]+') do
        known[part] = true
      end
    end
    -- LSP and JSON Schema names the plugin reads too (not rag/* payloads)
    for _, n in ipairs({ 'workspaceFolders', 'workDoneProgress', 'exclusiveMinimum', 'anyOf', 'textDocument', 'rootUri' }) do
      known[n] = true
    end
    local unknown = {}
    local dir = os.getenv('RAGLS_PLUGIN_DIR')
    for _, file in ipairs(vim.fn.globpath(dir, 'lua/**/*.lua', false, true)) do
      local fh = assert(io.open(file))
      local text = fh:read('*a')
      fh:close()
      for name in text:gmatch('[%w_%]]%.(%l+%u[%w]*)') do
        if not known[name] then
          table.insert(unknown, vim.fn.fnamemodify(file, ':t') .. ': ' .. name)
        end
      end
    end
    check(#unknown == 0, 'fields the server does not send: %s', table.concat(unknown, ', '))
  end)

  case('degraded: embedding provider down (HTTP 500 on 127.0.0.1) gives results plus a warning', function()
    -- a provider that answers every request with 500
    local srv = vim.loop.new_tcp()
    srv:bind('127.0.0.1', 0)
    local hits = 0
    srv:listen(16, function()
      local c = vim.loop.new_tcp()
      srv:accept(c)
      local buf_in = ''
      c:read_start(function(_, data)
        if not data then
          c:close()
          return
        end
        buf_in = buf_in .. data
        local head_end = buf_in:find('\r\n\r\n', 1, true)
        local len = tonumber(buf_in:lower():match('content%-length:%s*(%d+)') or '0')
        if head_end and #buf_in >= head_end + 3 + len then
          hits = hits + 1
          c:read_stop()
          local body = '{"error":"down"}'
          c:write('HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: ' .. #body .. '\r\nConnection: close\r\n\r\n' .. body, function()
            c:shutdown(function()
              c:close()
            end)
          end)
        end
      end)
    end)
    local port = srv:getsockname().port
    local tmp = vim.fn.tempname()
    vim.fn.mkdir(tmp, 'p')
    vim.fn.system({ 'cp', '-r', ws, tmp .. '/ws' })
    local root = tmp .. '/ws'
    local cfg = {
      name = 'ragls-degraded',
      cmd = { server },
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = 'ws' } },
      cmd_env = { RAGLS_CACHE_DIR = tmp .. '/cache', XDG_CACHE_HOME = tmp .. '/xdg' },
      init_options = { embedder = { provider = 'ollama', baseUrl = 'http://127.0.0.1:' .. port, model = 'tiny', dimensions = 8, maxRetries = 0, timeoutS = 2 } },
    }
    local id
    if util.has('0.11') then
      id = vim.lsp.start(cfg, { attach = false })
    else
      id = vim.lsp.start_client(cfg)
    end
    local c = assert(vim.lsp.get_client_by_id(id), 'degraded client did not start')
    local function sync(method, params)
      local done, r_err, r_res = false, nil, nil
      util.request(c, method, params, function(err, result)
        done, r_err, r_res = true, err, result
      end)
      check(vim.wait(30000, function()
        return done
      end, 20), '%s timed out', method)
      check(not r_err, '%s: %s', method, vim.inspect(r_err))
      return r_res
    end
    local st
    check(vim.wait(120000, function()
      st = sync('rag/indexStatus', vim.empty_dict())
      local lex = type(st.lexical) == 'table' and st.lexical.done or 0
      return st.filesTotal > 0 and lex >= st.filesTotal - st.filesFailed
    end, 300), 'lexical index never complete: %s', vim.inspect(st))
    local res = sync('rag/retrieve', { query = 'invoice compute_total', topK = 3 })
    util.stop(c, true)
    srv:close()
    check(hits > 0, 'the provider was never asked')
    check(res.error == nil or res.error == vim.NIL, 'error set: %s', tostring(res.error))
    check(#res.chunks > 0 and res.chunks[1].path == 'billing/invoice.py', 'chunks: %s', vim.inspect(res.chunks))
    check(type(res.warnings) == 'table' and #res.warnings > 0 and res.warnings[1]:find('lexical only', 1, true), 'warnings: %s', vim.inspect(res.warnings))
    local note = ragls.degraded_note(res)
    check(note and note:find('^degraded search: '), 'note %s', tostring(note))
    -- the server's display of a degraded index is never plain "ok"
    check(type(st.display) == 'table' and st.display.health ~= 'ok', 'status display %s', vim.inspect(st.display))
    -- a protocol-1 answer (error with chunks) is degraded too, and a failed one is not
    check(ragls.degraded_note({ error = 'lexical only', chunks = { 1 } }) == 'degraded search: lexical only', 'v1 note')
    check(ragls.degraded_note({ error = 'store down', chunks = {}, warnings = {} }) == nil, 'failure is not degraded')
    vim.fn.delete(tmp, 'rf')
  end)

  case('statusline: rag/statusChanged with state error shows ✗, then recovers', function()
    need_ready()
    local h = lsp.handlers()['rag/statusChanged']
    local st = status.get(client.id)
    local saved = vim.deepcopy(st.status)
    local shown = { health = 'error', text = 'error', tooltip = { 'State: error (error)' } }
    h(nil, vim.tbl_extend('force', saved, { state = 'error', phase = 'error', display = shown }), { client_id = client.id })
    check(ragls.status() == 'RAG ✗ error', 'got %q', ragls.status())
    h(nil, saved, { client_id = client.id })
    check(ragls.status():match('^RAG ✓'), 'got %q', ragls.status())
  end)

  case(':RagSearch fills the quickfix list with billing/invoice.py / Invoice.compute_total', function()
    need_ready()
    vim.fn.setqflist({}, 'r')
    local before = events.RaglsSearchDone or 0
    vim.cmd('RagSearch ' .. QUERY)
    wait(30000, function()
      return (events.RaglsSearchDone or 0) > before
    end, 'RagSearch')
    local qf = vim.fn.getqflist({ title = 1, items = 1 })
    check(qf.title == 'RagSearch: ' .. QUERY, 'title %q', qf.title)
    check(#qf.items > 0, 'empty quickfix')
    local found
    for i = 1, math.min(3, #qf.items) do
      local it = qf.items[i]
      local name = vim.api.nvim_buf_get_name(it.bufnr)
      if name:sub(-#'billing/invoice.py') == 'billing/invoice.py' and it.text:find('Invoice.compute_total', 1, true) then
        found = it
        break
      end
    end
    local summary = {}
    for i = 1, math.min(5, #qf.items) do
      table.insert(summary, vim.api.nvim_buf_get_name(qf.items[i].bufnr):sub(#ws + 2) .. ':' .. qf.items[i].lnum .. ' ' .. qf.items[i].text)
    end
    check(found, 'billing/invoice.py Invoice.compute_total not in top 3:\n%s', table.concat(summary, '\n'))
    -- the range covers the `def compute_total` line of the fixture
    local def_line
    for i, l in ipairs(vim.fn.readfile(ws .. '/billing/invoice.py')) do
      if l:find('def compute_total', 1, true) then
        def_line = i
        break
      end
    end
    check(def_line, 'fixture has no def compute_total')
    check(found.lnum <= def_line and found.end_lnum >= def_line, 'range %d-%d does not cover line %d', found.lnum, found.end_lnum, def_line)
    check(vim.fn.getqflist({ winid = 1 }).winid ~= 0, 'quickfix window not opened')
    vim.cmd('cclose')
  end)

  local function check_block(ctx)
    check(type(ctx) == 'string' and ctx ~= '', 'empty context')
    check(ctx:sub(1, #'<rag_context>\n') == '<rag_context>\n', 'does not start with <rag_context>: %q', ctx:sub(1, 40))
    check(ctx:match('</rag_context>%s*$'), 'does not end with </rag_context>')
    local _, opens = ctx:gsub('<code_context ', '')
    local _, closes = ctx:gsub('</code_context>', '')
    check(opens > 0 and opens == closes, '%d <code_context> vs %d </code_context>', opens, closes)
    local first_file
    for attrs in ctx:gmatch('<code_context ([^>]*)>') do
      local file = attrs:match('file="([^"]+)"')
      local a, b = attrs:match('lines="(%d+)%-(%d+)"')
      check(file and a and b, 'bad attributes: %s', attrs)
      check(tonumber(a) >= 1 and tonumber(a) <= tonumber(b), 'bad lines %s-%s', a, b)
      first_file = first_file or file
    end
    check(ctx:find('<code_context file="billing/invoice.py"', 1, true), 'billing/invoice.py missing from context')
    check(ctx:find('compute_total', 1, true), 'compute_total missing from context')
    return first_file
  end

  case(':RagContext puts a well-formed <rag_context> block in a register and a scratch buffer', function()
    need_ready()
    vim.fn.setreg('r', '')
    local before = events.RaglsContextDone or 0
    vim.cmd('RagContext ' .. QUERY)
    wait(30000, function()
      return (events.RaglsContextDone or 0) > before
    end, 'RagContext')
    local reg = vim.fn.getreg('r')
    check_block(reg)
    local sbuf = vim.fn.bufnr('ragls://context')
    check(sbuf ~= -1, 'scratch buffer missing')
    local text = table.concat(vim.api.nvim_buf_get_lines(sbuf, 0, -1, false), '\n')
    check(text:find('<rag_context>', 1, true) and text:find('</rag_context>', 1, true), 'scratch buffer has no block')
    check(vim.bo[sbuf].buftype == 'nofile', 'scratch buffer is not nofile')
    check(#util.get_clients({ bufnr = sbuf, name = 'ragls' }) == 0, 'ragls attached to the scratch buffer')
    vim.cmd('only')
    vim.cmd('buffer ' .. buf)
  end)

  case('feedback: :RagFeedback rates the last answer, :RagMark marks the cursor line; the real server stores both', function()
    need_ready()
    local fb = require('ragls.feedback')
    local function stored()
      local out = vim.fn.system({ server, 'feedback', ws, '--json' })
      check(vim.v.shell_error == 0, 'ragls feedback failed: %s', out)
      return vim.fn.json_decode(out).ratings
    end
    local function feedback_cmd(cmd)
      local before = events.RaglsFeedbackDone or 0
      vim.cmd(cmd)
      wait(15000, function()
        return (events.RaglsFeedbackDone or 0) > before
      end, cmd)
    end
    local before = events.RaglsSearchDone or 0
    vim.cmd('RagSearch ' .. QUERY)
    wait(30000, function()
      return (events.RaglsSearchDone or 0) > before
    end, 'RagSearch')
    vim.cmd('cclose')
    local first = fb.last
    check(first and type(first.id) == 'string' and #first.id >= 16, 'no resultId kept: %s', vim.inspect(first))
    feedback_cmd('RagFeedback down not the code I meant')
    local r = stored()
    check(#r == 1 and r[1].id == first.id and r[1].rating == 'down' and r[1].query == QUERY, 'stored: %s', vim.inspect(r))
    check(r[1].comment == 'not the code I meant', 'comment: %s', vim.inspect(r[1].comment))
    -- mark a line the answer showed: the user's own "down" stays, the comment too
    local file = ws .. '/billing/invoice.py'
    local def_line
    for i, l in ipairs(vim.fn.readfile(file)) do
      if l:find('def compute_total', 1, true) then
        def_line = i
        break
      end
    end
    vim.cmd('edit ' .. vim.fn.fnameescape(file))
    vim.api.nvim_win_set_cursor(0, { def_line, 0 })
    feedback_cmd('RagFeedback mark')
    r = stored()
    check(#r == 1 and r[1].rating == 'down' and r[1].comment == 'not the code I meant', 'after mark: %s', vim.inspect(r))
    check(vim.deep_equal(r[1].relevant, { { path = 'billing/invoice.py', line = def_line } }), 'relevant: %s', vim.inspect(r[1].relevant))
    -- a new answer, not rated: a mark inside one of its chunks rates it "up"
    local cbefore = events.RaglsContextDone or 0
    vim.cmd('RagContext! ' .. QUERY)
    wait(30000, function()
      return (events.RaglsContextDone or 0) > cbefore
    end, 'RagContext')
    check(fb.last.id ~= first.id, 'the new answer was not kept')
    check(fb.in_answer(fb.last, file, def_line), 'compute_total is not in the answer')
    vim.cmd('buffer ' .. vim.fn.bufnr(file))
    vim.api.nvim_win_set_cursor(0, { def_line, 0 })
    feedback_cmd('RagMark')
    r = stored()
    check(#r == 2 and r[2].id == fb.last.id and r[2].rating == 'up', 'second answer: %s', vim.inspect(r[2]))
    check(vim.deep_equal(r[2].relevant, { { path = 'billing/invoice.py', line = def_line } }), 'relevant: %s', vim.inspect(r[2].relevant))
    -- the rule without a rating: no mark in the answer is "down"
    check(fb.mark_rating({ chunks = fb.last.chunks, marks = { { path = file, line = 100000 } } }) == 'down', 'mark outside the answer')
    -- a wrong verb sends nothing
    local n = events.RaglsFeedbackDone or 0
    local ok, why = pcall(vim.cmd, 'RagFeedback sideways')
    check(not ok and tostring(why):find('up, down or mark', 1, true), 'a wrong verb: %s', tostring(why))
    check((events.RaglsFeedbackDone or 0) == n, 'a wrong verb sent a rating')
    vim.cmd('buffer ' .. buf)
  end)

  case('chat: context() callback, context_sync() and prepend()', function()
    need_ready()
    local got
    ragls.context(QUERY, { topK = 3 }, function(ctx, result, err)
      got = { ctx = ctx, result = result, err = err }
    end)
    wait(30000, function()
      return got ~= nil
    end, 'context callback')
    check(not got.err, 'error: %s', tostring(got.err))
    check_block(got.ctx)
    check(#got.result.chunks <= 3, 'topK ignored')
    local ctx2, _, err2 = ragls.context_sync(QUERY, { maxChars = 100000 })
    check(not err2, 'sync error: %s', tostring(err2))
    check_block(ctx2)
    local msg = 'How is the invoice total computed?'
    local p = ragls.prepend(msg)
    check(p:sub(1, 13) == '<rag_context>', 'prepend does not start with the block')
    check(p:sub(-#msg) == msg and p:find('</rag_context>\n\n' .. msg, 1, true), 'prepend layout wrong')
    -- a budget too small for any chunk yields '' and prepend leaves the message alone
    local tiny = ragls.context_sync(QUERY, { maxChars = 10 })
    check(tiny == '', 'maxChars=10 gave a block')
    check(ragls.prepend(msg, { maxChars = 10 }) == msg, 'prepend changed the message without context')
  end)

  -- a chunk of the fixture the query must bring back (billing/invoice.py, Invoice.compute_total)
  local KNOWN_FILE = 'file="billing/invoice.py"'
  local KNOWN_LINE = 'subtotal = sum((i.unit_price * i.quantity for i in self.items), Decimal(0))'
  local function check_known_chunk(text)
    check_block(text)
    check(text:find(KNOWN_FILE, 1, true), 'no %s block in:\n%s', KNOWN_FILE, text:sub(1, 400))
    check(text:find(KNOWN_LINE, 1, true), 'the compute_total chunk is missing:\n%s', text:sub(1, 400))
  end

  -- runs a CodeCompanion tool the way codecompanion does: cmds[1](tool system, args, { output_cb })
  function run_tool(tool, tools_self, args)
    local got
    tool.cmds[1](tools_self, args, {
      output_cb = function(msg)
        got = msg
      end,
    })
    wait(30000, function()
      return got ~= nil
    end, 'the tool\'s output_cb')
    return got
  end

  case('chat: CodeCompanion tool calls rag/retrieve on the real server', function()
    need_ready()
    local cc = require('ragls.integrations.codecompanion')
    local entry = cc.tool_config()
    check(type(entry.description) == 'string' and type(entry.callback) == 'function', 'tools entry %s', vim.inspect(entry))
    -- what codecompanion does with the entry: resolve the callback, then run cmds[1] with the
    -- tool system as self and the model's arguments
    local tool = entry.callback()
    local fn = tool.schema['function']
    check(tool.schema.type == 'function' and fn.name == tool.name and fn.name == 'rag', 'schema %s', vim.inspect(tool.schema))
    check(vim.deep_equal(fn.parameters.required, { 'query' }) and fn.parameters.properties.query.type == 'string', 'parameters')
    local tools_self = { chat = { buffer_context = { bufnr = buf } } }
    local function call(args)
      return run_tool(tool, tools_self, args)
    end
    local ok_msg = call({ query = QUERY })
    check(ok_msg.status == 'success', 'status %s: %s', ok_msg.status, tostring(ok_msg.data))
    check_known_chunk(ok_msg.data)
    -- the model's filters reach the server
    local web = call({ query = QUERY, paths = { 'web/**' } })
    check(web.status == 'success', 'filtered: %s', tostring(web.data))
    for file in web.data:gmatch('<code_context file="([^"]+)"') do
      check(file:match('^web/'), 'paths filter ignored: %s', file)
    end
    local bad = call({ query = '  ' })
    check(bad.status == 'error' and bad.data:find('query is empty', 1, true), 'empty query: %s', vim.inspect(bad))
    -- while the index is being built, an empty answer says so (state pushed through the
    -- real rag/statusChanged handler; the server itself answers the query)
    local h = lsp.handlers()['rag/statusChanged']
    local saved = vim.deepcopy(status.get(client.id).status)
    h(nil, vim.tbl_extend('force', saved, { state = 'indexing', phase = 'dense', filesIndexed = 3, filesTotal = 9 }), { client_id = client.id })
    local tiny = require('ragls.integrations.codecompanion').tool({ maxChars = 10 })
    local busy = run_tool(tiny, tools_self, { query = QUERY })
    h(nil, saved, { client_id = client.id })
    check(busy.status == 'error' and busy.data:find('still being built', 1, true), 'indexing: %s', vim.inspect(busy))
    -- output handlers put the text into the chat, in codecompanion v19 and v17/v18 argument order
    for _, order in ipairs({ 'v19', 'v18' }) do
      local added = {}
      local chat = {
        add_tool_output = function(_, self, for_llm, for_user)
          table.insert(added, { self = self, for_llm = for_llm, for_user = for_user })
        end,
      }
      local t = vim.tbl_extend('force', vim.deepcopy(tool), { args = { query = QUERY } })
      if order == 'v19' then
        t.output.success(t, { ok_msg.data }, { tools = { chat = chat }, cmd = {} })
        t.output.error(t, { bad.data }, { tools = { chat = chat }, cmd = {} })
      else
        t.output.success(t, { chat = chat }, {}, { ok_msg.data })
        t.output.error(t, { chat = chat }, {}, { bad.data })
      end
      check(#added == 2, '%s: %d outputs', order, #added)
      check(added[1].for_llm == ok_msg.data, '%s: llm output differs', order)
      check(added[1].for_user:match('^ragls: %d+ code chunk'), '%s: user output %q', order, tostring(added[1].for_user))
      check(added[2].for_llm == bad.data, '%s: error output %q', order, tostring(added[2].for_llm))
    end
  end)

  -- rag/retrieve intent (server protocol 4). In the fixture, "deploy the branch to staging" is
  -- answered by docs/deployment.md as a question; as a change to make, code comes first (docs
  -- weigh 0.3 of their score).
  local CHANGE_QUERY = 'deploy the branch to staging'
  local function first_file(text)
    return type(text) == 'string' and text:match('<code_context file="([^"]+)"') or nil
  end
  local function is_doc(path)
    return type(path) == 'string' and path:match('%.md$') ~= nil
  end

  case('chat: intent "change" puts code before docs (Lua API, CodeCompanion tool, CopilotChat)', function()
    need_ready()
    local search = require('ragls.integrations.search')
    -- the schema the models see offers intent with its two values (shared by both plugins)
    local tool = require('ragls.integrations.codecompanion').tool()
    local p = tool.schema['function'].parameters.properties.intent
    check(p and p.type == 'string' and vim.deep_equal(p.enum, { 'question', 'change' }), 'codecompanion intent %s', vim.inspect(p))
    check(type(p.description) == 'string' and p.description:find('"change"', 1, true), 'intent description %s', vim.inspect(p))
    check(tool.schema['function'].description:find('intent: "change"', 1, true), 'tool description does not mention intent')
    local cp = require('ragls.integrations.copilotchat').functions().rag
    check(cp.schema.properties.intent == p, 'copilotchat schema differs: %s', vim.inspect(cp.schema.properties.intent))

    -- only "change" goes on the wire ("question" is the server's default)
    local sent = {}
    local orig_request = lsp.request
    lsp.request = function(method, params, ...)
      if method == 'rag/retrieve' then
        table.insert(sent, params)
      end
      return orig_request(method, params, ...)
    end
    local q_err, q_res, c_err, c_res, d_err, d_res
    local pok, perr = pcall(function()
      q_err, q_res = ragls.retrieve_sync(CHANGE_QUERY, { intent = 'question' })
      c_err, c_res = ragls.retrieve_sync(CHANGE_QUERY, { intent = 'change' })
      d_err, d_res = ragls.retrieve_sync(CHANGE_QUERY)
    end)
    lsp.request = orig_request
    check(pok, tostring(perr))
    check(#sent == 3, '%d rag/retrieve requests', #sent)
    check(sent[1].intent == nil and sent[2].intent == 'change' and sent[3].intent == nil, 'intents sent: %s', vim.inspect(sent))
    -- Lua API: the first chunk moves from the doc to code
    check(not q_err and not c_err and not d_err, 'retrieve: %s', vim.inspect(q_err or c_err or d_err))
    local function paths(res)
      local out = {}
      for i = 1, math.min(5, #res.chunks) do
        table.insert(out, res.chunks[i].path)
      end
      return table.concat(out, ', ')
    end
    check(#q_res.chunks > 0 and q_res.chunks[1].path == 'docs/deployment.md', 'question: first %s', paths(q_res))
    check(#d_res.chunks > 0 and d_res.chunks[1].path == 'docs/deployment.md', 'default: first %s', paths(d_res))
    check(#c_res.chunks > 0 and not is_doc(c_res.chunks[1].path), 'change: first %s', paths(c_res))
    local c_first = c_res.chunks[1].path

    -- the CodeCompanion tool: the model's intent reaches the server
    local tools_self = { chat = { buffer_context = { bufnr = buf } } }
    local tq = run_tool(tool, tools_self, { query = CHANGE_QUERY, intent = 'question' })
    check(tq.status == 'success' and first_file(tq.data) == 'docs/deployment.md', 'tool question: %s, first %s', tq.status, tostring(first_file(tq.data)))
    local tc = run_tool(tool, tools_self, { query = CHANGE_QUERY, intent = 'change' })
    check(tc.status == 'success' and first_file(tc.data) == c_first, 'tool change: %s, first %s (Lua API: %s)', tc.status, tostring(first_file(tc.data)), c_first)
    -- JSON null means "not given"
    local tn = run_tool(tool, tools_self, { query = CHANGE_QUERY, intent = vim.NIL })
    check(tn.status == 'success' and first_file(tn.data) == 'docs/deployment.md', 'tool null intent: %s, first %s', tn.status, tostring(first_file(tn.data)))
    -- a tool configured with intent = 'change' uses it unless the model says otherwise
    local ctool = require('ragls.integrations.codecompanion').tool({ intent = 'change' })
    local dc = run_tool(ctool, tools_self, { query = CHANGE_QUERY })
    check(not is_doc(first_file(dc.data)), 'default change: first %s', tostring(first_file(dc.data)))
    local dq = run_tool(ctool, tools_self, { query = CHANGE_QUERY, intent = 'question' })
    check(first_file(dq.data) == 'docs/deployment.md', 'model question over default change: first %s', tostring(first_file(dq.data)))

    -- an invalid intent is an error the model can act on, sent nowhere
    local before = #sent
    local bad = run_tool(tool, tools_self, { query = CHANGE_QUERY, intent = 'edit' })
    check(bad.status == 'error' and bad.data:find('intent must be "question" or "change"', 1, true) and bad.data:find('"edit"', 1, true), 'invalid intent: %s', vim.inspect(bad))
    local ok_run, text_run = search.run_sync({ query = CHANGE_QUERY, intent = 3 }, { bufnr = buf })
    check(not ok_run and text_run:find('intent must be', 1, true), 'intent 3: %s', tostring(text_run))
    -- and through the Lua API: an error, no result, no request
    local e1, r1 = ragls.retrieve_sync(CHANGE_QUERY, { intent = 'Change' })
    check(e1 and tostring(e1.message):find('intent must be "question" or "change"', 1, true) and r1 == nil, 'retrieve_sync invalid: %s', vim.inspect(e1))
    local got
    ragls.retrieve(CHANGE_QUERY, { intent = 'fix' }, function(err, result)
      got = { err = err, result = result }
    end)
    check(got and got.err and tostring(got.err.message):find('intent', 1, true) and got.result == nil, 'retrieve cb invalid: %s', vim.inspect(got))
    local ctx, _, cerr = ragls.context_sync(CHANGE_QUERY, { intent = 'fix' })
    check(ctx == '' and type(cerr) == 'string' and cerr:find('intent', 1, true), 'context_sync invalid: %q %s', ctx, tostring(cerr))
    check(#sent == before, 'an invalid intent was sent to the server')

    -- CopilotChat: the model's intent in the function input
    local rq = cp.resolve({ query = CHANGE_QUERY, intent = 'question' }, { bufnr = buf })
    check(first_file(rq[1].data) == 'docs/deployment.md', 'copilotchat question: first %s', tostring(first_file(rq[1].data)))
    local rc = cp.resolve({ query = CHANGE_QUERY, intent = 'change' }, { bufnr = buf })
    check(first_file(rc[1].data) == c_first, 'copilotchat change: first %s', tostring(first_file(rc[1].data)))
    local rb = cp.resolve({ query = CHANGE_QUERY, intent = 'edit' }, { bufnr = buf })
    check(rb[1].data:find('intent must be', 1, true), 'copilotchat invalid: %s', tostring(rb[1].data))
  end)

  case('chat: CopilotChat function resolves with the real server', function()
    need_ready()
    local cc = require('ragls.integrations.copilotchat').functions()
    check(cc.rag and type(cc.rag.resolve) == 'function' and cc.rag.uri, 'copilotchat spec')
    check(vim.deep_equal(cc.rag.schema.required, { 'query' }), 'schema')
    local res = cc.rag.resolve({ query = QUERY }, { bufnr = buf })
    check(type(res) == 'table' and res[1] and res[1].data, 'resolve returned nothing')
    check_known_chunk(res[1].data)
    check(res[1].uri == 'rag://' .. QUERY and res[1].mimetype == 'text/plain', 'resource %s', vim.inspect(res[1]):sub(1, 200))
    local web = cc.rag.resolve({ query = QUERY, paths = { 'web/**' } }, { bufnr = buf })
    for file in web[1].data:gmatch('<code_context file="([^"]+)"') do
      check(file:match('^web/'), 'paths filter ignored: %s', file)
    end
    -- query taken from the prompt when the #rag reference carries no input (older releases)
    local res2 = cc.rag.resolve({}, { bufnr = buf }, QUERY)
    check_known_chunk(res2[1].data)
    -- a bare #rag (current CopilotChat passes only input and source) uses the user's message,
    -- read through CopilotChat's chat window API (a stand-in here: the plugin is not installed)
    package.loaded['CopilotChat'] = {
      chat = {
        get_message = function(_, role)
          return role == 'user' and { content = '#rag @copilot\n' .. QUERY } or nil
        end,
      },
    }
    local res3 = cc.rag.resolve({}, { bufnr = buf })
    package.loaded['CopilotChat'] = nil
    check_known_chunk(res3[1].data)
    check(res3[1].uri == 'rag://' .. QUERY, 'fallback query %s', res3[1].uri)
    local none = cc.rag.resolve({}, { bufnr = buf })
    check(none[1].data:find('no query', 1, true), 'no-query text %q', tostring(none[1].data))
    -- v3 contexts
    local ctxs = require('ragls.integrations.copilotchat').contexts()
    local r4 = ctxs.rag.resolve(QUERY, { bufnr = buf })
    check_known_chunk(r4[1].content)
  end)

  case('chat: CodeCompanion /rag slash command adds the block to the chat', function()
    need_ready()
    local sc = require('ragls.integrations.codecompanion').slash_command()
    check(type(sc.callback) == 'function' and sc.description, 'codecompanion spec')
    local added = {}
    local fake_chat = {
      add_context = function(self, data, source, id)
        table.insert(added, { data = data, source = source, id = id })
      end,
    }
    local orig_input = vim.ui.input
    vim.ui.input = function(_, on_confirm)
      on_confirm(QUERY)
    end
    local ok, err = pcall(sc.callback, fake_chat)
    vim.ui.input = orig_input
    check(ok, tostring(err))
    wait(30000, function()
      return #added > 0
    end, 'chat:add_context')
    check(added[1].data.role == 'user', 'role %s', tostring(added[1].data.role))
    check_known_chunk(added[1].data.content)
    check(added[1].source == 'ragls', 'source %s', tostring(added[1].source))
  end)

  local function wait_ready(ms)
    vim.wait(600) -- let a pending change (debounced on the server) start first
    wait(ms or 60000, function()
      local _, st = ragls.index_status_sync({ timeout_ms = 5000 })
      return st and st.state == 'ready'
    end, 'index ready')
  end

  local function ignored_paths_returned()
    local bad = {}
    for _, q in ipairs({ 'left pad a string', 'generated build output', 'API token secret', 'debug log' }) do
      local err, res = ragls.retrieve_sync(q, { topK = 50, maxChars = 0 })
      check(not err, 'retrieve %q: %s', q, vim.inspect(err))
      for _, ch in ipairs(res.chunks) do
        local path = ch.path
        if path:match('^node_modules/') or path:match('^build/') or path == '.env' or path == 'debug.log' then
          bad[path] = true
        end
      end
    end
    return vim.tbl_keys(bad)
  end

  case('ignored files (.gitignore, node_modules/, build/, .env) never come back', function()
    need_ready()
    local bad = ignored_paths_returned()
    check(#bad == 0, 'ignored file(s) returned: %s', table.concat(bad, ', '))
  end)

  case('opening ignored files in the editor (didOpen) does not index them', function()
    need_ready()
    local opened = {}
    for _, rel in ipairs({ '.env', 'build/generated.py', 'node_modules/leftpad/index.js', 'debug.log' }) do
      if vim.fn.filereadable(ws .. '/' .. rel) == 1 then
        vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/' .. rel))
        table.insert(opened, vim.api.nvim_get_current_buf())
      end
    end
    vim.cmd('buffer ' .. buf)
    vim.wait(1000) -- longer than the server's open-buffer debounce
    wait_ready()
    local bad = ignored_paths_returned()
    for _, b in ipairs(opened) do
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
    wait_ready()
    check(#bad == 0, 'ignored file(s) indexed after being opened: %s', table.concat(bad, ', '))
  end, { known_bug = 'the server indexes didOpen text of ignored files' })

  case(':RagStatus shows the index status', function()
    need_ready()
    wait_ready()
    local before = events.RaglsStatusShown or 0
    vim.cmd('RagStatus')
    wait(10000, function()
      return (events.RaglsStatusShown or 0) > before
    end, 'RagStatus')
    local lines = require('ragls.commands').last_status_lines
    local text = table.concat(lines, '\n')
    check(text:find('State: ready', 1, true), 'no ready state in:\n%s', text)
    check(text:find('Files: [%d,]+/[%d,]+ indexed'), 'no file counts in:\n%s', text)
  end)

  case('errors: invalid params surface as errors and the server stays up', function()
    need_ready()
    local err = ragls.retrieve_sync(QUERY, { topK = 1000 })
    check(err and (err.code == -32602 or tostring(err.message):find('topK')), 'no InvalidParams error: %s', vim.inspect(err))
    local e2 = ragls.retrieve_sync('   ')
    check(e2 and e2.message, 'empty query not rejected')
    local e3, st = ragls.index_status_sync()
    check(not e3 and st.state, 'server not answering after bad params')
  end)

  case(':RagReindex starts a re-scan and the index returns to ready', function()
    need_ready()
    local before = events.RaglsReindexDone or 0
    vim.cmd('RagReindex')
    wait(10000, function()
      return (events.RaglsReindexDone or 0) > before
    end, 'RagReindex reply')
    wait(120000, function()
      local _, st = ragls.index_status_sync({ timeout_ms = 5000 })
      return st and st.state == 'ready'
    end, 'ready after reindex')
    check(ragls.status():match('^RAG ✓'), 'status %q', ragls.status())
  end)

  case(':checkhealth ragls reports server, version and index', function()
    need_ready()
    vim.cmd('checkhealth ragls')
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
    check(text:find('server: ', 1, true), 'no server line:\n%s', text)
    check(text:find('version: ', 1, true), 'no version line:\n%s', text)
    check(text:find('State: ready', 1, true), 'no index state:\n%s', text)
    check(text:find('settings match the server', 1, true), 'settings not checked against the schema:\n%s', text)
    for line in text:gmatch('[^\n]+') do
      check(not line:match('ERROR'), 'health error: %s\n%s', line, text)
    end
    vim.cmd('tabclose')
  end)

  case('config: default server command and root markers', function()
    local config = require('ragls.config')
    local tmp = vim.fn.tempname()
    vim.fn.mkdir(tmp .. '/proj/.venv/bin', 'p')
    vim.fn.mkdir(tmp .. '/proj/pkg/sub', 'p')
    local f = assert(io.open(tmp .. '/proj/go.mod', 'w'))
    f:write('module x\n')
    f:close()
    local o = config.build({})
    check(config.find_root(tmp .. '/proj/pkg/sub/file.go', o) == tmp .. '/proj', 'go.mod root not found')
    check(vim.deep_equal(config.resolve_cmd(tmp .. '/proj', o), { 'ragls' }), 'PATH default')
    local exe = tmp .. '/proj/.venv/bin/ragls'
    f = assert(io.open(exe, 'w'))
    f:write('#!/bin/sh\n')
    f:close()
    vim.loop.fs_chmod(exe, 493)
    -- a workspace's own program is never the default: PATH, with the reason
    local srv = config.server(tmp .. '/proj', o)
    check(vim.deep_equal(srv.cmd, { 'ragls' }) and srv.source == 'path' and srv.untrusted == exe, 'untrusted .venv: %s', vim.inspect(srv))
    -- trusted_folders lists exact roots: the folder, not a parent of it
    local t = config.server(tmp .. '/proj', config.build({ trusted_folders = { tmp .. '/proj/' } }))
    check(vim.deep_equal(t.cmd, { exe }) and t.source == 'workspace' and t.why:find('trusted_folders', 1, true), 'trusted: %s', vim.inspect(t))
    local p = config.server(tmp .. '/proj', config.build({ trusted_folders = { tmp } }))
    check(p.source == 'path', 'a trusted parent trusted the child: %s', vim.inspect(p))
    check(vim.deep_equal(config.resolve_cmd(tmp .. '/proj', config.build({ cmd = { 'x', '--y' } })), { 'x', '--y' }), 'cmd override')
    -- settings given at the top level land in the `ragls` section and initializationOptions
    local o2 = config.build({ embedder = { provider = 'local', batchSize = 8 }, retrieval = { topK = 3 } })
    check(config.settings_payload(o2).ragls.embedder.batchSize == 8, 'settings payload')
    check(config.init_options(o2).retrieval.topK == 3, 'init options')
    -- :checkhealth lints against the server's own schema; snake_case is fine (the server takes both)
    local health = require('ragls.health')
    local schema = assert(health.server_schema(os.getenv('RAGLS_SERVER')))
    local lint, infos = health.lint_settings({ max_file_bytes = 1, embedder = { api_key_env = 'X', model = 'm' }, fancyNew = 1 }, schema)
    check(#lint == 0, 'lint: %s', vim.inspect(lint))
    check(#infos == 1 and infos[1]:find('fancyNew', 1, true), 'infos: %s', vim.inspect(infos))
    lint = health.lint_settings({ retrieval = { topK = 500, mode = 'fuzzy' }, embedder = { batchSize = 1.5 }, indexing = 3 }, schema)
    table.sort(lint)
    check(#lint == 4, 'lint: %s', vim.inspect(lint))
    local all = table.concat(lint, '\n')
    for _, want in ipairs({ 'retrieval.topK` is above', 'retrieval.mode` must be one of', 'embedder.batchSize` must be an integer', '`indexing` must be a table' }) do
      check(all:find(want, 1, true), 'no %q in %s', want, all)
    end
    vim.fn.delete(tmp, 'rf')
  end)

  case('settings: workspace/configuration serves the ragls section', function()
    need_ready()
    local settings = util.client_settings(client)
    check(settings.ragls and settings.ragls.retrieval and settings.ragls.retrieval.topK == 8, 'settings %s', vim.inspect(settings))
    local handler = vim.lsp.handlers['workspace/configuration']
    local res = handler(nil, { items = { { section = 'ragls' } } }, { client_id = client.id, method = 'workspace/configuration' })
    check(type(res) == 'table' and res[1].retrieval.topK == 8, 'workspace/configuration answer %s', vim.inspect(res))
  end)

  case('docs: :helptags accepts doc/ragls.txt and :help finds the tags', function()
    local tmp = vim.fn.tempname()
    vim.fn.mkdir(tmp .. '/doc', 'p')
    vim.fn.writefile(vim.fn.readfile(plugin_dir .. '/doc/ragls.txt'), tmp .. '/doc/ragls.txt')
    vim.cmd('helptags ' .. vim.fn.fnameescape(tmp .. '/doc'))
    local tags = table.concat(vim.fn.readfile(tmp .. '/doc/tags'), '\n')
    for _, t in ipairs({ 'ragls.txt', 'ragls-setup', ':RagSearch', ':RagContext', 'ragls.status()', 'ragls-copilotchat', 'ragls-codecompanion', 'ragls-lspconfig', 'ragls-trust', ':RagTrust', 'ragls-intent' }) do
      check(tags:find(t .. '\t', 1, true), 'tag %s missing', t)
    end
    vim.opt.rtp:append(tmp)
    vim.cmd('help ragls-statusline')
    check(vim.bo.filetype == 'help', 'help did not open')
    vim.cmd('helpclose')
    vim.fn.delete(tmp, 'rf')
  end)

  case('shutdown: stopping the client clears the statusline', function()
    util.stop(client)
    wait(15000, function()
      return util.is_stopped(client)
    end, 'client stop')
    wait(15000, function()
      return ragls.status() == ''
    end, 'status cleared (server process exited)')
  end)

  -- Trust: a workspace that ships an executable .venv/bin/ragls which would write a marker
  -- file and then run the real server. The runner puts the real server on PATH as `ragls`.
  local function evil_workspace(name)
    local root = vim.fn.tempname() .. '-' .. name
    vim.fn.mkdir(root .. '/.venv/bin', 'p')
    vim.fn.writefile({}, root .. '/.ragls.toml')
    for _, f in ipairs({ 'a', 'b', 'c', 'd' }) do
      vim.fn.writefile({ 'def probe_' .. f .. '():', '    return 1' }, root .. '/' .. f .. '.py')
    end
    local marker = root .. '.marker'
    local exe = root .. '/.venv/bin/ragls'
    vim.fn.writefile({
      '#!/bin/sh',
      'echo started >> ' .. vim.fn.shellescape(marker),
      'exec ' .. vim.fn.shellescape(server) .. ' "$@"',
    }, exe)
    vim.loop.fs_chmod(exe, 493)
    return root, marker, exe
  end

  local function running_clients()
    local out = {}
    for _, c in ipairs(util.get_clients({ name = 'ragls' })) do
      if not util.is_stopped(c) then
        table.insert(out, c)
      end
    end
    return out
  end

  local function stop_all()
    local cs = running_clients()
    for _, c in ipairs(cs) do
      util.stop(c)
    end
    wait(15000, function()
      return #running_clients() == 0
    end, 'ragls clients to stop')
  end

  -- wipes every buffer (setup() attaches the loaded ones) and stops every client, after the
  -- attach callbacks already scheduled have run
  local function leave_buffers()
    vim.cmd('silent! %bwipeout!')
    vim.wait(300)
    stop_all()
  end

  -- opens a file and waits for an initialised ragls client on it
  local function open_and_init(path)
    vim.cmd('edit ' .. vim.fn.fnameescape(path))
    local b = vim.api.nvim_get_current_buf()
    wait(20000, function()
      return util.get_clients({ bufnr = b, name = 'ragls' })[1] ~= nil
    end, 'ragls to attach to ' .. path)
    local c = util.get_clients({ bufnr = b, name = 'ragls' })[1]
    wait(30000, function()
      return c.initialized == true or util.is_stopped(c)
    end, 'initialize')
    check(not util.is_stopped(c), 'the server exited during initialize')
    return c, b
  end

  local function health_text()
    vim.cmd('checkhealth ragls')
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
    vim.cmd('tabclose')
    return text
  end

  local exists = function(p)
    return vim.fn.filereadable(p) == 1
  end
  local evil_root, evil_marker, evil_exe = evil_workspace('evil')

  case('trust: a workspace .venv/bin/ragls never runs on open; ragls on PATH attaches; one warning', function()
    -- only buffers of the trust workspace from here on (setup() attaches loaded buffers)
    vim.cmd('silent! %bwipeout!')
    check(vim.fn.exepath('ragls') ~= '' and vim.fn.exepath('ragls') ~= evil_exe, 'no ragls on PATH for the test')
    local msgs = {}
    local orig = vim.notify
    vim.notify = function(m, level)
      table.insert(msgs, { m = m, level = level })
    end
    local ok, err = pcall(function()
      ragls.setup({ attach_mode = forced_mode })
      local c = open_and_init(evil_root .. '/a.py')
      check(util.client_root(c) == evil_root, 'root %s', tostring(util.client_root(c)))
      local err2, st = ragls.index_status_sync({ timeout_ms = 10000 })
      check(not err2 and st and st.state, 'the PATH server does not answer: %s', vim.inspect(err2))
      vim.cmd('edit ' .. vim.fn.fnameescape(evil_root .. '/b.py'))
      vim.wait(500)
      check(not exists(evil_marker), 'the workspace program ran: %s exists', evil_marker)
      local srv = require('ragls.config').server(evil_root)
      check(srv.source == 'path' and srv.untrusted == evil_exe, 'server %s', vim.inspect(srv))
      local h = health_text()
      check(h:find('`ragls` on PATH', 1, true) and h:find(evil_exe .. ' is not started', 1, true), 'health:\n%s', h)
      check(h:find('trusted_folders', 1, true), 'health gives no way to trust:\n%s', h)
    end)
    vim.notify = orig
    leave_buffers()
    check(ok, tostring(err))
    local warns = vim.tbl_filter(function(m)
      return m.level == vim.log.levels.WARN and m.m:find(evil_exe, 1, true) ~= nil
    end, msgs)
    check(#warns == 1, 'want one warning about %s, got: %s', evil_exe, vim.inspect(msgs))
    check(warns[1].m:find('trust', 1, true) and warns[1].m:find('cmd', 1, true), 'warning says not how to trust: %s', warns[1].m)
    check(not exists(evil_marker), 'the workspace program ran')
  end)

  case('trust: with cmd set to that exact path, the workspace program runs', function()
    ragls.setup({ attach_mode = forced_mode, cmd = { evil_exe } })
    local ok, err = pcall(function()
      open_and_init(evil_root .. '/c.py')
      check(exists(evil_marker), 'the configured program did not run')
      local h = health_text()
      check(h:find('cmd from setup()', 1, true), 'health does not say why:\n%s', h)
    end)
    leave_buffers()
    vim.fn.delete(evil_marker)
    check(ok, tostring(err))
  end)

  case('trust: a folder listed in trusted_folders runs its .venv/bin/ragls', function()
    ragls.setup({ attach_mode = forced_mode, trusted_folders = { evil_root } })
    local ok, err = pcall(function()
      open_and_init(evil_root .. '/d.py')
      check(exists(evil_marker), 'the trusted folder\'s program did not run')
      local srv = require('ragls.config').server(evil_root)
      check(srv.source == 'workspace' and srv.why:find('trusted_folders', 1, true), 'server %s', vim.inspect(srv))
    end)
    leave_buffers()
    vim.fn.delete(evil_marker)
    check(ok, tostring(err))
  end)

  if vim.secure and vim.fn.has('nvim-0.11') == 1 then
    case('trust: 0.11 folder trusted through vim.secure.trust runs its program; deny/edit revoke', function()
      local root2, marker2, exe2 = evil_workspace('secure')
      local config = require('ragls.config')
      ragls.setup({ attach_mode = forced_mode })
      check(config.server(root2).source == 'path', 'trusted before vim.secure.trust')
      -- Neovim's own database: allow the folder (a buffer named after the directory)
      local db = vim.fn.bufadd(root2)
      local tok, tmsg = vim.secure.trust({ action = 'allow', bufnr = db })
      vim.api.nvim_buf_delete(db, { force = true })
      check(tok, 'vim.secure.trust: %s', tostring(tmsg))
      check(config.server(root2).source == 'workspace', 'not trusted after vim.secure.trust: %s', vim.inspect(config.server(root2)))
      local ok, err = pcall(function()
        open_and_init(root2 .. '/a.py')
        check(exists(marker2), 'the trusted folder\'s program did not run')
      end)
      leave_buffers()
      check(ok, tostring(err))
      -- deny wins over the earlier allow
      vim.secure.trust({ action = 'deny', path = root2 })
      check(config.server(root2).source == 'path', 'denied folder still trusted')
      vim.secure.trust({ action = 'remove', path = root2 })
      -- trusting the program file pins its content: an edited file is untrusted again
      -- (noautocmd: this buffer must not start a server)
      vim.cmd('noautocmd edit ' .. vim.fn.fnameescape(exe2))
      local pb = vim.api.nvim_get_current_buf()
      check(vim.secure.trust({ action = 'allow', bufnr = pb }), 'trust the file')
      vim.cmd('bwipeout! ' .. pb)
      check(config.server(root2).source == 'workspace', 'trusted file not used')
      local f = assert(io.open(exe2, 'a'))
      f:write('# changed\n')
      f:close()
      check(config.server(root2).source == 'path', 'an edited trusted file is still trusted')
      leave_buffers()
      vim.fn.delete(root2, 'rf')
      vim.fn.delete(marker2)
    end)

    case('trust: 0.11 :RagTrust asks Neovim, stores the answer, restarts ragls with the program', function()
      local root3, marker3 = evil_workspace('ragtrust')
      ragls.setup({ attach_mode = forced_mode })
      local ok, err = pcall(function()
        local c = open_and_init(root3 .. '/a.py')
        check(not exists(marker3), 'ran before trust')
        -- the user's answer to Neovim's own prompt (vim.secure.read asks through confirm())
        local orig_confirm = vim.fn.confirm
        local asked
        vim.fn.confirm = function(msg)
          asked = msg
          return 4 -- [a]llow
        end
        local cok, cerr = pcall(vim.cmd, 'RagTrust')
        vim.fn.confirm = orig_confirm
        check(cok, tostring(cerr))
        check(asked and asked:find(root3, 1, true), 'Neovim did not ask about %s: %s', root3, tostring(asked))
        local db = table.concat(vim.fn.readfile(vim.fn.stdpath('state') .. '/trust'), '\n')
        check(db:find('directory ' .. root3, 1, true), 'trust database: %s', db)
        wait(30000, function()
          return exists(marker3)
        end, 'the trusted program to start after :RagTrust')
        wait(10000, function()
          return util.is_stopped(c)
        end, 'the PATH client to stop')
        local b = vim.api.nvim_get_current_buf()
        wait(20000, function()
          local nc = util.get_clients({ bufnr = b, name = 'ragls' })[1]
          return nc ~= nil and nc.id ~= c.id and nc.initialized == true
        end, 'the buffer to attach to the restarted server')
      end)
      leave_buffers()
      vim.secure.trust({ action = 'remove', path = root3 })
      vim.fn.delete(root3, 'rf')
      vim.fn.delete(marker3)
      check(ok, tostring(err))
    end)
  end

  case('trust: back to the suite\'s explicit server', function()
    leave_buffers()
    ragls.setup({ attach_mode = forced_mode, cmd = { server }, settings = { retrieval = { topK = 8 } } })
    check(require('ragls.config').server(ws).source == 'setup', 'setup not restored')
    vim.fn.delete(evil_root, 'rf')
    vim.fn.delete(evil_marker)
  end)

  -- Issue 16: multi-root workspaces. Three small folders; the token and the function exist only
  -- in beta, so a result that holds them came from the second folder's index.
  local MR_TOKEN = 'QUOKKA_LEDGER_SENTINEL_7731'
  local MR_QUERY = 'how does reconcile_quokka_ledger match the quokka ledger entries'
  local mr = vim.fn.tempname() .. '-mr'
  local function mr_write(rel, lines)
    vim.fn.mkdir(vim.fn.fnamemodify(mr .. '/' .. rel, ':h'), 'p')
    vim.fn.writefile(lines, mr .. '/' .. rel)
  end
  mr_write('alpha/.ragls.toml', {})
  mr_write('alpha/inventory/stock.py', { 'def restock(items, threshold=5):', '    # Reorder every item below the threshold.', '    return [i for i in items if i.count < threshold]' })
  mr_write('beta/ledger/reconcile.py', {
    MR_TOKEN .. ' = "quokka"',
    '',
    '',
    'def reconcile_quokka_ledger(entries, statement):',
    '    # Match every quokka ledger entry to a statement line by amount and date.',
    '    unmatched = [e for e in entries if (e.amount, e.date) not in statement]',
    '    return ' .. MR_TOKEN .. ', unmatched',
  })
  mr_write('gamma/notes/todo.md', { '# gamma', '', 'Plans for the wombat scheduler.' })
  local mr_client

  case('multi-root: result lists show folder/path and open the file by uri', function()
    local commands = require('ragls.commands')
    local ch = {
      uri = vim.uri_from_fname(mr .. '/beta/ledger/reconcile.py'),
      path = 'ledger/reconcile.py',
      folder = 'beta',
      folderUri = vim.uri_from_fname(mr .. '/beta'),
      range = { start = { line = 3, character = 0 }, ['end'] = { line = 7, character = 0 } },
      symbol = 'reconcile_quokka_ledger',
      kind = 'function',
      language = 'python',
      score = 0.5,
      content = 'def reconcile_quokka_ledger(entries, statement):\n',
    }
    local old = vim.deepcopy(ch)
    old.folder, old.folderUri = nil, nil -- a version-2 server
    check(commands.chunk_path(ch, true) == 'beta/ledger/reconcile.py', 'chunk_path %s', commands.chunk_path(ch, true))
    check(commands.chunk_path(ch, false) == 'ledger/reconcile.py', 'one folder: plain path')
    check(commands.chunk_path(old, true) == 'ledger/reconcile.py', 'version 2: plain path')
    vim.fn.setqflist({}, ' ', { title = 'mr', items = commands.qf_items({ ch, old }, true) })
    local qf = vim.fn.getqflist({ items = 1 }).items
    check(vim.api.nvim_buf_get_name(qf[1].bufnr) == mr .. '/beta/ledger/reconcile.py', 'file %s', vim.api.nvim_buf_get_name(qf[1].bufnr))
    check(qf[1].lnum == 4 and qf[1].module == 'beta/ledger/reconcile.py', 'item %s', vim.inspect(qf[1]))
    check((qf[2].module or '') == '', 'a chunk without folder keeps the file name: %s', vim.inspect(qf[2]))
    local shown = vim.fn.execute('clist')
    check(shown:find('beta/ledger/reconcile.py', 1, true), ':clist does not show folder/path:\n%s', shown)
    local single = commands.qf_items({ ch }, false)
    check(single[1].module == nil, 'single folder: no module')
    vim.fn.setqflist({}, 'r')
  end)

  case('multi-root: every folder is sent at initialize, named by its base name; :RagAddFolder adds one', function()
    leave_buffers()
    ragls.setup({ attach_mode = forced_mode, cmd = { server }, workspace_folders = { mr .. '/beta' } })
    local c = open_and_init(mr .. '/alpha/inventory/stock.py')
    mr_client = c
    check(util.client_root(c) == mr .. '/alpha', 'root %s', tostring(util.client_root(c)))
    local names, uris = {}, {}
    for _, f in ipairs(c.workspace_folders or {}) do
      table.insert(names, f.name)
      table.insert(uris, f.uri)
    end
    check(vim.deep_equal(names, { 'alpha', 'beta' }), 'folders %s', vim.inspect(c.workspace_folders))
    check(uris[2] == vim.uri_from_fname(mr .. '/beta'), 'uri %s', tostring(uris[2]))
    check(lsp.is_multi_root(c), 'not multi-root')
    vim.cmd('RagAddFolder ' .. vim.fn.fnameescape(mr .. '/gamma'))
    check(#c.workspace_folders == 3 and c.workspace_folders[3].name == 'gamma', 'after add: %s', vim.inspect(c.workspace_folders))
    local msgs = {}
    local orig = vim.notify
    vim.notify = function(m)
      table.insert(msgs, m)
    end
    vim.cmd('RagAddFolder ' .. vim.fn.fnameescape(mr .. '/gamma'))
    vim.notify = orig
    check(#c.workspace_folders == 3 and msgs[1] and msgs[1]:find('already', 1, true), 'adding twice: %s', vim.inspect(msgs))
  end)

  case('multi-root (server protocol 3): status lists the folders, results come from the second one; :RagRemoveFolder drops it', function()
    local c = assert(mr_client, 'no multi-root client')
    local err0, st = ragls.index_status_sync({ client = c })
    check(not err0 and type(st) == 'table', 'rag/indexStatus: %s', vim.inspect(err0))
    -- an older server indexes only the first folder: fail now, not after the wait below
    check((tonumber(st.protocolVersion) or 1) >= 3, 'the server speaks protocol %s, not 3 (multi-root)', tostring(st.protocolVersion))
    wait(60000, function()
      local err, s = ragls.index_status_sync({ client = c })
      st = s or st
      return not err and type(s) == 'table' and s.state == 'ready' and type(s.folders) == 'table' and #s.folders == 3
    end, 'a ready status with 3 folders')
    local lines = table.concat(require('ragls.commands').status_lines(st, c), '\n')
    for _, n in ipairs({ 'alpha', 'beta', 'gamma' }) do
      check(lines:find('Folder ' .. n .. ': ready', 1, true), 'no folder line for %s in:\n%s', n, lines)
    end
    local err, result = ragls.retrieve_sync(MR_QUERY, { client = c, topK = 5 })
    check(not err and result and #result.chunks > 0, 'retrieve: %s', vim.inspect(err))
    local hit
    for _, ch in ipairs(result.chunks) do
      if ch.folder == 'beta' and ch.path == 'ledger/reconcile.py' and ch.symbol == 'reconcile_quokka_ledger' then
        hit = ch
      end
    end
    check(hit, 'no beta/ledger/reconcile.py chunk: %s', vim.inspect(result.chunks))
    check(hit.content:find(MR_TOKEN, 1, true), 'the chunk lacks the token')
    check(result.context:find('<code_context file="beta/ledger/reconcile.py"', 1, true), 'context lacks folder/path:\n%s', result.context)
    vim.fn.setqflist({}, 'r')
    local before = events.RaglsSearchDone or 0
    vim.cmd('RagSearch ' .. MR_QUERY)
    wait(30000, function()
      return (events.RaglsSearchDone or 0) > before
    end, 'RagSearch')
    local shown = vim.fn.execute('clist')
    check(shown:find('beta/ledger/reconcile.py', 1, true), ':clist does not show beta/ledger/reconcile.py:\n%s', shown)
    vim.cmd('cclose')
    -- :RagRemoveFolder: the server stops searching beta
    vim.cmd('RagRemoveFolder ' .. vim.fn.fnameescape(mr .. '/beta'))
    check(#c.workspace_folders == 2, 'after remove: %s', vim.inspect(c.workspace_folders))
    local left
    wait(30000, function()
      local e, r = ragls.retrieve_sync(MR_QUERY, { client = c, topK = 5 })
      if e or not r then
        return false
      end
      left = r.chunks
      for _, ch in ipairs(r.chunks) do
        if ch.folder == 'beta' then
          return false
        end
      end
      return true
    end, 'results without the removed folder beta')
    check(#left > 0, 'the other folders still answer')
  end)

  case('multi-root: back to the suite\'s setup', function()
    leave_buffers()
    ragls.setup({ attach_mode = forced_mode, cmd = { server }, settings = { retrieval = { topK = 8 } } })
    vim.fn.delete(mr, 'rf')
  end)

  if vim.fn.has('nvim-0.11') == 1 and not forced_mode then
    case('0.11: the documented raw vim.lsp.config snippet attaches and answers', function()
      need_ready()
      -- retire the setup() config so that only the snippet's client runs
      vim.lsp.enable('ragls', false)
      pcall(vim.api.nvim_clear_autocmds, { group = 'ragls' })
      -- the snippet from docs/clients/neovim.md, with the server path filled in
      vim.lsp.config('ragls', {
        cmd = { server },
        root_markers = { '.ragls.toml', '.git', 'pyproject.toml', 'package.json', 'go.mod', 'Cargo.toml' },
        init_options = { retrieval = { topK = 8 } },
        settings = { ragls = { retrieval = { topK = 8 } } },
        workspace_required = true,
      })
      vim.lsp.enable('ragls')
      local target = ws .. '/services/geo/distance.go'
      if vim.fn.filereadable(target) == 0 then
        target = ws .. '/billing/invoice.py' -- already loaded: re-read it so FileType fires
      end
      vim.cmd('edit! ' .. vim.fn.fnameescape(target))
      local b = vim.api.nvim_get_current_buf()
      wait(20000, function()
        return vim.lsp.get_clients({ bufnr = b, name = 'ragls' })[1] ~= nil
      end, 'snippet client to attach')
      local c = vim.lsp.get_clients({ bufnr = b, name = 'ragls' })[1]
      check(c.root_dir == ws, 'root %s', tostring(c.root_dir))
      check(c.id ~= client.id, 'old client reused')
      local res, rerr
      wait(60000, function()
        local r = c:request_sync('rag/indexStatus', vim.empty_dict(), 5000, b)
        if r and r.result then
          res = r.result
          return true
        end
        rerr = r and r.err
        return false
      end, 'rag/indexStatus from the snippet client')
      check(res.state, 'no state: %s', vim.inspect(rerr))
      -- the plugin's commands work with a client they did not start
      local err, result = ragls.retrieve_sync(QUERY, { bufnr = b })
      check(not err and result and #result.chunks > 0, 'retrieve through snippet client: %s', vim.inspect(err))
      c:stop()
      wait(15000, function()
        return c:is_stopped()
      end, 'snippet client stop')
    end)
  end

  case('missing server: one warning, no client, no error', function()
    local msgs = {}
    local orig = vim.notify
    vim.notify = function(m, level)
      table.insert(msgs, { m = m, level = level })
    end
    local proj = vim.fn.tempname()
    vim.fn.mkdir(proj, 'p')
    vim.fn.writefile({ 'module example.com/x' }, proj .. '/go.mod')
    vim.fn.writefile({ 'package main' }, proj .. '/main.go')
    vim.fn.writefile({ '# x' }, proj .. '/README.md')
    local ok, err = pcall(function()
      ragls.setup({ cmd = { proj .. '/no/such/ragls' }, attach_mode = forced_mode })
      vim.cmd('edit ' .. vim.fn.fnameescape(proj .. '/main.go'))
      vim.cmd('edit ' .. vim.fn.fnameescape(proj .. '/README.md'))
      vim.wait(500)
      -- chat tools answer with a short error instead of failing
      local got = run_tool(require('ragls.integrations.codecompanion').tool(), { chat = {} }, { query = QUERY })
      check(got.status == 'error' and got.data:find('no ragls server', 1, true), 'tool without server: %s', vim.inspect(got))
      local res = require('ragls.integrations.copilotchat').functions().rag.resolve({ query = QUERY }, {})
      check(res[1].data:find('no ragls server', 1, true), 'copilotchat without server: %s', vim.inspect(res))
    end)
    vim.fn.delete(proj, 'rf')
    vim.notify = orig
    check(ok, tostring(err))
    local running = {}
    for _, c in ipairs(util.get_clients({ name = 'ragls' })) do
      if not util.is_stopped(c) then
        table.insert(running, string.format('%d %s %s', c.id, tostring(util.client_root(c)), vim.inspect(c.config.cmd)))
      end
    end
    check(#running == 0, '%d ragls client(s) running: %s', #running, table.concat(running, '; '))
    check(#msgs == 1 and msgs[1].m:find('server not found', 1, true), 'messages: %s', vim.inspect(msgs))
  end)
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  results.failed = results.failed + 1
  emit('not ok ' .. label .. ': harness error: ' .. tostring(err):gsub('\n', '\n#   '))
end
finish()
