import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MAX_QUERY_CHARS,
  chunkLocationLabel,
  chunkPath,
  copiedSummary,
  degradedNote,
  escapeMarkdown,
  formatScore,
  hitLabel,
  prependContext,
  retrievalFailure,
  retrieveParams,
  searchResultLines,
  toQuery,
} from '../../src/lib/format';
import { lineSpan } from '../../src/lib/ranges';
import type { Chunk, RetrieveResult } from '../../src/lib/protocol';

const chunk: Chunk = {
  uri: 'file:///ws/billing/invoice.py',
  path: 'billing/invoice.py',
  range: { start: { line: 21, character: 0 }, end: { line: 25, character: 0 } },
  symbol: 'Invoice.compute_total',
  kind: 'method',
  language: 'python',
  score: 0.8312,
  content: '    def compute_total(self) -> Decimal:\n        """Sum every line item and add the sales tax."""\n',
  folder: null,
  folderUri: null,
};

const context =
  '<rag_context>\n<code_context file="billing/invoice.py" lines="22-25" symbol="Invoice.compute_total">\n' +
  chunk.content +
  '</code_context>\n</rag_context>';

test('prependContext puts the block in front of the prompt', () => {
  const out = prependContext(context, 'how is tax added?');
  assert.ok(out.startsWith('<rag_context>\n'));
  assert.ok(out.endsWith('</rag_context>\n\nhow is tax added?'));
});

test('prependContext leaves the prompt alone without context', () => {
  assert.equal(prependContext('', 'q'), 'q');
  assert.equal(prependContext(undefined, 'q'), 'q');
  assert.equal(prependContext(null, 'q'), 'q');
  assert.equal(prependContext('  \n', 'q'), 'q');
});

test('lineSpan turns an exclusive LSP end into 1-based inclusive lines', () => {
  assert.deepEqual(lineSpan(chunk.range), { first: 22, last: 25 });
  assert.deepEqual(lineSpan({ start: { line: 0, character: 0 }, end: { line: 0, character: 12 } }), { first: 1, last: 1 });
  assert.deepEqual(lineSpan({ start: { line: 4, character: 0 }, end: { line: 4, character: 0 } }), { first: 5, last: 5 });
  assert.deepEqual(lineSpan({ start: { line: 4, character: 2 }, end: { line: 6, character: 3 } }), { first: 5, last: 7 });
});

test('hit labels name the symbol, the location and the kind', () => {
  const h = hitLabel(chunk);
  assert.equal(h.label, '$(symbol-method) Invoice.compute_total');
  assert.equal(h.description, 'billing/invoice.py:22-25');
  assert.match(h.detail, /^method · python · score 0\.831 · def compute_total\(self\) -> Decimal:$/);
  const anon = hitLabel({ ...chunk, symbol: null, kind: 'weird', content: '\n\n' + 'x'.repeat(300) });
  assert.equal(anon.label, '$(symbol-misc) invoice.py');
  assert.ok(anon.detail.endsWith('…'));
  assert.equal(chunkLocationLabel(chunk), 'billing/invoice.py:22-25');
});

test('search result lines are numbered markdown', () => {
  const lines = searchResultLines([chunk, { ...chunk, symbol: null, path: 'docs/a_b.md', kind: 'section', language: 'markdown' }]);
  assert.equal(lines[0], '1. `Invoice.compute_total` billing/invoice.py:22-25 (method, python, score 0.831)');
  assert.equal(lines[1], '2. docs/a\\_b.md:22-25 (section, markdown, score 0.831)');
  assert.equal(escapeMarkdown('a*b'), 'a\\*b');
});

test('scores are short', () => {
  assert.equal(formatScore(0.016393), '0.0164');
  assert.equal(formatScore(12.3456), '12.3');
  assert.equal(formatScore(1234.5), '1235');
});

test('queries are clamped to what the server accepts', () => {
  assert.equal(toQuery('  hello  '), 'hello');
  assert.equal(toQuery('x'.repeat(MAX_QUERY_CHARS + 10)).length, MAX_QUERY_CHARS);
  assert.deepEqual(retrieveParams(' q ', undefined), { query: 'q' });
  assert.deepEqual(retrieveParams('q', { topK: null, maxChars: undefined }), { query: 'q' });
  assert.deepEqual(retrieveParams('q', { topK: 8, maxChars: 0 }), { query: 'q', topK: 8, maxChars: 0 });
  // intent "change" is sent; a question is the server's default and is left out.
  assert.deepEqual(retrieveParams('q', { topK: 8 }, 'change'), { query: 'q', topK: 8, intent: 'change' });
  assert.deepEqual(retrieveParams('q', undefined, 'question'), { query: 'q' });
});

test('copy summary counts blocks and files', () => {
  assert.equal(
    copiedSummary(context, [chunk, chunk]),
    `Copied <rag_context> with 1 chunk from 1 file (${context.length} characters).`,
  );
});

test('degraded results (protocol 2 warnings, or a protocol-1 error with chunks) are a note, not a failure', () => {
  const base = { context: '<rag_context>…</rag_context>', chunks: [chunk], tookMs: 3, resultId: null };
  assert.equal(degradedNote({ ...base, error: null, warnings: [] }), undefined);
  assert.equal(retrievalFailure({ ...base, error: null, warnings: [] }), undefined);
  const v2 = { ...base, error: null, warnings: ['dense search unavailable (HTTP 500); results are lexical only'] };
  assert.equal(degradedNote(v2), 'Degraded search: dense search unavailable (HTTP 500); results are lexical only');
  assert.equal(retrievalFailure(v2), undefined);
  // protocol 1 (an older server): no `warnings`
  const v1 = { ...base, error: 'dense search unavailable; results are lexical only' } as RetrieveResult;
  assert.match(degradedNote(v1) ?? '', /lexical only/);
  assert.equal(retrievalFailure(v1), undefined, 'an old server that still returned results did not fail');
  const failed = { context: '', chunks: [], tookMs: 0, error: 'retrieval failed: store down', warnings: [], resultId: null };
  assert.equal(retrievalFailure(failed), 'retrieval failed: store down');
  assert.equal(degradedNote(failed), undefined);
});

test('multi-root (protocol 3): labels read folder/path, single folder and version 2 stay plain', () => {
  const inWeb: Chunk = { ...chunk, folder: 'web', folderUri: 'file:///ws/web', uri: 'file:///ws/web/billing/invoice.py' };
  assert.equal(chunkPath(inWeb, true), 'web/billing/invoice.py');
  assert.equal(chunkPath(inWeb, false), 'billing/invoice.py', 'one folder: the path as before');
  assert.equal(chunkPath(chunk, true), 'billing/invoice.py', 'a version-2 chunk has no folder');
  assert.equal(chunkPath({ ...chunk, folder: null }, true), 'billing/invoice.py');
  assert.equal(chunkLocationLabel(inWeb, true), 'web/billing/invoice.py:22-25');
  assert.equal(hitLabel(inWeb, true).description, 'web/billing/invoice.py:22-25');
  assert.equal(hitLabel(inWeb).description, 'billing/invoice.py:22-25');
  const inApi: Chunk = { ...inWeb, folder: 'api_v2', uri: 'file:///ws/api_v2/billing/invoice.py' };
  assert.deepEqual(searchResultLines([inWeb, inApi], true), [
    '1. `Invoice.compute_total` web/billing/invoice.py:22-25 (method, python, score 0.831)',
    '2. `Invoice.compute_total` api\\_v2/billing/invoice.py:22-25 (method, python, score 0.831)',
  ]);
  // The same relative path in two folders is two files.
  assert.match(copiedSummary(context, [inWeb, inApi]), /from 2 files/);
});
