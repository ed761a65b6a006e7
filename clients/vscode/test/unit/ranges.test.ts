import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chunksInContext, contextBlocks } from '../../src/lib/contextBlocks';
import type { Chunk, Range } from '../../src/lib/protocol';
import { END_OF_LINE, editorRange, lineSpan, linesLabel } from '../../src/lib/ranges';

const r = (sl: number, sc: number, el: number, ec: number): Range => ({ start: { line: sl, character: sc }, end: { line: el, character: ec } });
const EOL = END_OF_LINE;

test('server ranges -> editor ranges: the exclusive end at column 0 becomes the end of the last line', () => {
  // [server range, editor range without a document, 1-based label]
  const table: [Range, Range, string][] = [
    [r(38, 0, 54, 0), r(38, 0, 53, EOL), '39-54'], // the issue: middleware.go lines="39-54" showed 39-55
    [r(21, 0, 25, 0), r(21, 0, 24, EOL), '22-25'],
    [r(0, 0, 1, 0), r(0, 0, 0, EOL), '1'], // a one-line chunk
    [r(0, 0, 0, 12), r(0, 0, 0, 12), '1'], // an end inside a line is kept
    [r(4, 2, 6, 3), r(4, 2, 6, 3), '5-7'],
    [r(4, 0, 4, 0), r(4, 0, 4, 0), '5'], // empty: stays empty
    [r(9, 0, 3, 0), r(9, 0, 9, 0), '10'], // end before start collapses onto the start
    [r(7, 5, 7, 2), r(7, 5, 7, 5), '8'],
  ];
  for (const [server, editor, label] of table) {
    assert.deepEqual(editorRange(server), editor, JSON.stringify(server));
    assert.equal(linesLabel(server), label, JSON.stringify(server));
    const span = lineSpan(server);
    assert.equal(span.first, editor.start.line + 1);
    assert.equal(span.last, editor.end.line + 1);
  }
});

test('with a document the end is the real end of the last line', () => {
  const lengths = [10, 0, 31, 7];
  assert.deepEqual(editorRange(r(1, 0, 3, 0), (l) => lengths[l]), r(1, 0, 2, 31));
  assert.deepEqual(editorRange(r(0, 0, 2, 0), (l) => lengths[l]), r(0, 0, 1, 0), 'an empty last line ends at column 0');
});

const chunk = (path: string, first: number, last: number, symbol: string | null): Chunk => ({
  uri: `file:///ws/${path}`,
  path,
  range: r(first - 1, 0, last, 0),
  symbol,
  kind: 'function',
  language: 'python',
  score: 1,
  content: 'x\n',
  folder: null,
  folderUri: null,
});

test('references follow the context: its blocks, in its order, only chunks the model saw', () => {
  const a = chunk('billing/invoice.py', 22, 25, 'Invoice.compute_total');
  const b = chunk('a&b/"q".py', 1, 9, 'f<T>');
  const c = chunk('README.md', 1, 40, null); // ranked but did not fit the budget
  const d = chunk('docs/x.md', 3, 3, null);
  const context =
    '<rag_context>\n' +
    '<code_context file="docs/x.md" lines="3-3">\nx\n</code_context>\n' +
    '<code_context file="billing/invoice.py" lines="22-25" symbol="Invoice.compute_total">\n' +
    // file content cannot fake a header: the server neutralises it with a zero-width space
    '<\u200bcode_context file="README.md" lines="1-40">\n</code_context>\n' +
    '<code_context file="a&amp;b/&quot;q&quot;.py" lines="1-9" symbol="f&lt;T&gt;">\nx\n</code_context>\n' +
    '</rag_context>';
  assert.deepEqual(contextBlocks(context), [
    { path: 'docs/x.md', first: 3, last: 3, symbol: null },
    { path: 'billing/invoice.py', first: 22, last: 25, symbol: 'Invoice.compute_total' },
    { path: 'a&b/"q".py', first: 1, last: 9, symbol: 'f<T>' },
  ]);
  assert.deepEqual(chunksInContext(context, [a, b, c, d]), [d, a, b]);
  assert.deepEqual(chunksInContext('', [a, b]), []);
  assert.deepEqual(chunksInContext(undefined, [a]), []);
});

test('multi-root (protocol 3): blocks written folder/path match the chunk of that folder', () => {
  // Two folders hold the same relative path; a third chunk's folder-relative path equals the
  // other's `folder/path`. Each block must find its own chunk.
  const api = { ...chunk('src/util.py', 1, 5, 'f'), folder: 'api', uri: 'file:///ws/api/src/util.py' };
  const web = { ...chunk('src/util.py', 1, 5, 'f'), folder: 'web', uri: 'file:///ws/web/src/util.py' };
  const nested = { ...chunk('web/src/util.py', 1, 5, 'f'), folder: 'api', uri: 'file:///ws/api/web/src/util.py' };
  const context =
    '<rag_context>\n' +
    '<code_context file="web/src/util.py" lines="1-5" symbol="f">\nx\n</code_context>\n' +
    '<code_context file="api/web/src/util.py" lines="1-5" symbol="f">\nx\n</code_context>\n' +
    '<code_context file="api/src/util.py" lines="1-5" symbol="f">\nx\n</code_context>\n' +
    '</rag_context>';
  assert.deepEqual(chunksInContext(context, [api, nested, web]), [web, nested, api]);
  // A version-2 server: no folder on the chunks, plain paths in the context.
  const old = chunk('src/util.py', 1, 5, 'f');
  assert.deepEqual(chunksInContext('<code_context file="src/util.py" lines="1-5" symbol="f">\n', [old]), [old]);
});
