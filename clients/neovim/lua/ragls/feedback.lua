-- Ratings of answers (rag/feedback, protocol 6): :RagFeedback up|down [comment] rates the last
-- answer, :RagFeedback mark (or :RagMark) marks the cursor's line as the code that was meant.
-- The client only sends; the server stores (docs/feedback.md).
--
-- "The last answer" is the last rag/retrieve result that carried a resultId: :RagSearch,
-- :RagContext, the chat integrations and require('ragls').retrieve/context all count. The rating
-- goes to the server process that gave the answer.
--
-- A mark re-sends the whole rating of the answer (a second rating of one answer replaces the
-- first on the server): every line marked so far, the comment, and the rating the user gave with
-- :RagFeedback up|down; without one, "up" when a marked line lies in one of the answer's chunks
-- (the answer found it), else "down".
local util = require('ragls.util')

local M = {}

--- The answer to rate: { id, client_id, query, chunks = { {uri, first, last} }, rating, comment, marks }
M.last = nil

local MAX_MARKS = 50

local function present(v)
  return v ~= nil and v ~= vim.NIL and v ~= ''
end

--- Remembers a rag/retrieve result (called for every answer). One without a resultId (rating off,
--- an older server) leaves the previous answer in place.
function M.remember(query, result, client_id)
  if type(result) ~= 'table' or not present(result.resultId) then
    return
  end
  local chunks = {}
  for _, ch in ipairs(type(result.chunks) == 'table' and result.chunks or {}) do
    if present(ch.uri) and type(ch.range) == 'table' then
      -- LSP range: 0-based, end exclusive; kept as 1-based inclusive lines
      local first = ch.range.start.line + 1
      local last = math.max(first, ch.range['end'].line)
      table.insert(chunks, { fname = util.normalize(vim.uri_to_fname(ch.uri)), first = first, last = last })
    end
  end
  M.last = { id = result.resultId, client_id = client_id, query = query, chunks = chunks, marks = {} }
end

--- Whether a place (absolute file name, 1-based line) lies in one of the answer's chunks.
function M.in_answer(answer, fname, line)
  fname = util.normalize(fname)
  for _, c in ipairs(answer.chunks or {}) do
    if c.fname == fname and line >= c.first and line <= c.last then
      return true
    end
  end
  return false
end

--- The rating a mark sends: the user's own, else "up" when a mark lies in the answer, else "down".
function M.mark_rating(answer)
  if answer.rating then
    return answer.rating
  end
  for _, m in ipairs(answer.marks or {}) do
    if M.in_answer(answer, m.path, m.line) then
      return 'up'
    end
  end
  return 'down'
end

--- rag/feedback params for the answer as it stands.
function M.params(answer, rating)
  local p = { resultId = answer.id, rating = rating }
  if answer.marks and #answer.marks > 0 then
    p.relevant = answer.marks
  end
  if present(answer.comment) then
    p.comment = answer.comment
  end
  return p
end

local function send(answer, rating, cb)
  local lsp = require('ragls.lsp')
  local client = answer.client_id and vim.lsp.get_client_by_id(answer.client_id) or nil
  if not client or util.is_stopped(client) then
    cb({ message = 'the server that gave the last answer is gone; ask again, then rate' }, nil)
    return
  end
  lsp.request('rag/feedback', M.params(answer, rating), function(err, result)
    cb(err, result)
  end, { client = client })
end

local function report(what, err, result, cb)
  if err then
    vim.notify('[ragls] ' .. what .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
  elseif type(result) == 'table' and result.stored == false then
    vim.notify('[ragls] ' .. what .. ': not stored: ' .. tostring(result.message), vim.log.levels.WARN)
  else
    vim.notify('[ragls] ' .. what .. ' stored' .. (type(result) == 'table' and present(result.message) and (': ' .. result.message) or ''))
  end
  util.fire('RaglsFeedbackDone', { what = what, ok = err == nil, stored = type(result) == 'table' and result.stored == true })
  if cb then
    cb(err, result)
  end
end

--- Rates the last answer "up" or "down" (comment optional). cb(err, result) optional.
function M.rate(rating, comment, cb)
  if rating ~= 'up' and rating ~= 'down' then
    vim.notify('[ragls] RagFeedback: up, down or mark', vim.log.levels.ERROR)
    return
  end
  local answer = M.last
  if not answer then
    report('RagFeedback', { message = 'no answer to rate yet (:RagSearch or :RagContext first)' }, nil, cb)
    return
  end
  answer.rating = rating
  if present(comment) then
    answer.comment = comment
  end
  send(answer, rating, function(err, result)
    report('RagFeedback ' .. rating, err, result, cb)
  end)
end

--- Marks a line (default: the cursor's) as the code the last answer should have found.
function M.mark(bufnr, line, cb)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  line = line or vim.api.nvim_win_get_cursor(0)[1]
  local answer = M.last
  if not answer then
    report('RagMark', { message = 'no answer to mark for yet (:RagSearch or :RagContext first)' }, nil, cb)
    return
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' then
    report('RagMark', { message = 'this buffer is not a file of the workspace' }, nil, cb)
    return
  end
  local place = { path = util.normalize(name), line = line }
  local seen = false
  for _, m in ipairs(answer.marks) do
    seen = seen or (m.path == place.path and m.line == place.line)
  end
  if not seen then
    if #answer.marks >= MAX_MARKS then
      table.remove(answer.marks, 1)
    end
    table.insert(answer.marks, place)
  end
  local rating = M.mark_rating(answer)
  send(answer, rating, function(err, result)
    report(string.format('RagMark %s:%d (%s)', vim.fn.fnamemodify(place.path, ':~:.'), line, rating), err, result, cb)
  end)
end

--- :RagFeedback up|down [comment] | mark
function M.command(args)
  local verb, rest = vim.trim(args or ''):match('^(%S*)%s*(.-)$')
  if verb == 'mark' then
    M.mark()
  else
    M.rate(verb, rest)
  end
end

return M
