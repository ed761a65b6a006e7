import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { ReferencesResult, RelatedResult, RepoMapResult, RetrieveResult } from '../../src/lib/protocol';
import {
  LIMIT_MAX,
  MAX_TOKENS_MAX,
  MAX_TOKENS_MIN,
  PATH_MAX_CHARS,
  SEARCH_TOOL_NAME,
  SYMBOL_MAX_CHARS,
  TOOL_ACTION_NAMES,
  referencesText,
  relatedText,
  repoMapText,
  searchToolParams,
  searchToolText,
  toolErrorMessage,
  toolInvocationMessage,
  toolRequest,
  toolResultText,
  type ToolRequest,
} from '../../src/lib/searchTool';
import { PACKAGE_ROOT } from '../support/env';

test('tool input -> rag/retrieve params, with errors a model can act on', () => {
  assert.deepEqual(searchToolParams({ query: ' where is tax added ' }, undefined), { query: 'where is tax added' });
  assert.deepEqual(searchToolParams({ query: 'q', topK: 8, paths: ['src/**', ' '], languages: ['Python'] }, { topK: 5, maxChars: 6000 }), {
    query: 'q',
    topK: 8,
    maxChars: 6000,
    paths: ['src/**'],
    languages: ['python'],
  });
  assert.deepEqual(searchToolParams({ query: 'q', topK: null, paths: [] }, { topK: 4 }), { query: 'q', topK: 4 });
  assert.deepEqual(searchToolParams({ query: 'q', folders: [' web ', ''] }, undefined), { query: 'q', folders: ['web'] });
  assert.throws(() => searchToolParams({ query: 'q', folders: 'web' }, undefined), /folders must be a list of strings/);
  assert.throws(() => searchToolParams({}, undefined), /query must be a non-empty string/);
  assert.throws(() => searchToolParams({ query: '  ' }, undefined), /query/);
  assert.throws(() => searchToolParams(undefined, undefined), /query/);
  assert.throws(() => searchToolParams({ query: 'q', topK: 0 }, undefined), /topK must be an integer from 1 to 100/);
  assert.throws(() => searchToolParams({ query: 'q', topK: 2.5 }, undefined), /topK/);
  assert.throws(() => searchToolParams({ query: 'q', paths: 'src/**' }, undefined), /paths must be a list of strings/);
  assert.throws(() => searchToolParams({ query: 'q', languages: Array(51).fill('go') }, undefined), /at most 50/);
  // A planned edit ranks with the git history (rag/retrieve intent "change"); questions send no intent.
  assert.deepEqual(searchToolParams({ query: 'retry uploads on timeout', intent: 'change' }, undefined), { query: 'retry uploads on timeout', intent: 'change' });
  assert.deepEqual(searchToolParams({ query: 'q', intent: 'question' }, undefined), { query: 'q' });
  assert.throws(() => searchToolParams({ query: 'q', intent: 'edit' }, undefined), /intent must be "question" or "change"/);
});

test('tool result text: the context, or why there is none', () => {
  const params = { query: 'q' };
  const empty: RetrieveResult = { context: '', chunks: [], tookMs: 1, error: null, warnings: [], resultId: null };
  assert.equal(searchToolText({ ...empty, context: '<rag_context>\nx\n</rag_context>' }, params), '<rag_context>\nx\n</rag_context>');
  assert.match(searchToolText({ ...empty, error: 'store down' }, params), /could not search the index: store down/);
  assert.match(searchToolText(empty, { query: 'q', paths: ['src/**'] }), /No indexed code matches "q" within paths src\/\*\*/);
  assert.match(searchToolText(empty, { query: 'q', folders: ['web'] }), /within folders web/);
  // an older server (protocol 1) sends neither `error` nor `warnings` when all is well
  assert.match(searchToolText({ context: '', chunks: [], tookMs: 1 } as unknown as RetrieveResult, params), /No indexed code matches "q"/);
});

test('package.json contributes the tool as #ragls with a schema matching the params', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
  const tool = pkg.contributes.languageModelTools.find((t: { name: string }) => t.name === SEARCH_TOOL_NAME);
  assert.ok(tool, 'ragls_search is contributed');
  assert.equal(tool.toolReferenceName, 'ragls');
  assert.equal(tool.canBeReferencedInPrompt, true);
  const props = tool.inputSchema.properties;
  assert.deepEqual(Object.keys(props).sort(), ['action', 'folders', 'intent', 'languages', 'limit', 'maxTokens', 'path', 'paths', 'query', 'symbol', 'topK']);
  assert.deepEqual(props.intent.enum, ['question', 'change']);
  assert.deepEqual(props.action.enum, TOOL_ACTION_NAMES);
  // No field is required by the schema: query (search) and symbol (references) are, per action,
  // checked by toolRequest. The bounds are those toolRequest enforces (and the server's params:
  // protocolSchema.test.ts).
  assert.equal(tool.inputSchema.required, undefined);
  assert.deepEqual([props.symbol.type, props.symbol.minLength, props.symbol.maxLength], ['string', 1, SYMBOL_MAX_CHARS]);
  assert.deepEqual([props.path.type, props.path.minLength, props.path.maxLength], ['string', 1, PATH_MAX_CHARS]);
  assert.deepEqual([props.limit.type, props.limit.minimum, props.limit.maximum], ['integer', 1, LIMIT_MAX]);
  assert.deepEqual([props.maxTokens.type, props.maxTokens.minimum, props.maxTokens.maximum], ['integer', MAX_TOKENS_MIN, MAX_TOKENS_MAX]);
  assert.ok(tool.modelDescription.length > 200, 'a description written for a model');
  for (const action of ['references', 'related', 'repoMap']) assert.ok(tool.modelDescription.includes(`"${action}"`), `the model is told of ${action}`);
  assert.ok(pkg.contributes.chatParticipants.some((p: { id: string }) => p.id === 'ragls.rag'), '@rag stays');
});

test('tool input -> the code graph requests (action), with errors a model can act on', () => {
  // No action, or "search": rag/retrieve as before.
  assert.deepEqual(toolRequest({ query: 'q' }, { topK: 4 }), { action: 'search', method: 'rag/retrieve', params: { query: 'q', topK: 4 } });
  assert.deepEqual(toolRequest({ action: 'search', query: 'q', intent: 'change' }, undefined).params, { query: 'q', intent: 'change' });
  assert.throws(() => toolRequest({ symbol: 'Invoice' }, undefined), /query must be a non-empty string for action "search"; .*action "references"/);
  assert.throws(() => toolRequest({ action: 'callers', symbol: 'x' }, undefined), /action must be one of "search", "references", "related", "repoMap"/);
  assert.throws(() => toolRequest({ action: 3 }, undefined), /action must be one of/);
  // references: symbol required, path and limit optional; search-only fields are ignored.
  assert.deepEqual(toolRequest({ action: 'references', symbol: ' Invoice.compute_total ', topK: 3 }, { topK: 9 }), {
    action: 'references',
    method: 'rag/references',
    params: { symbol: 'Invoice.compute_total' },
  });
  assert.deepEqual(toolRequest({ action: 'references', symbol: 'total', path: 'api/billing/invoice.py', limit: 20 }, undefined).params, {
    symbol: 'total',
    path: 'api/billing/invoice.py',
    limit: 20,
  });
  assert.deepEqual(toolRequest({ action: 'references', symbol: 'x', path: ' ', limit: null }, undefined).params, { symbol: 'x' });
  assert.throws(() => toolRequest({ action: 'references', query: 'Invoice' }, undefined), /action "references" needs symbol/);
  assert.throws(() => toolRequest({ action: 'references', symbol: '  ' }, undefined), /needs symbol/);
  assert.throws(() => toolRequest({ action: 'references', symbol: 'x'.repeat(501) }, undefined), /symbol holds at most 500 characters/);
  assert.throws(() => toolRequest({ action: 'references', symbol: 42 }, undefined), /symbol must be a string/);
  assert.throws(() => toolRequest({ action: 'references', symbol: 'x', limit: 501 }, undefined), /limit must be an integer from 1 to 500/);
  assert.throws(() => toolRequest({ action: 'references', symbol: 'x', limit: 0 }, undefined), /limit must be an integer/);
  // related: symbol and/or path.
  assert.deepEqual(toolRequest({ action: 'related', symbol: 'Invoice' }, undefined), { action: 'related', method: 'rag/related', params: { symbol: 'Invoice' } });
  assert.deepEqual(toolRequest({ action: 'related', path: 'billing/invoice.py', limit: 5 }, undefined).params, { path: 'billing/invoice.py', limit: 5 });
  assert.deepEqual(toolRequest({ action: 'related', symbol: 'f', path: 'a.py' }, undefined).params, { symbol: 'f', path: 'a.py' });
  assert.throws(() => toolRequest({ action: 'related' }, undefined), /action "related" needs symbol .*and\/or path/);
  assert.throws(() => toolRequest({ action: 'related', path: ['a.py'] }, undefined), /path must be a string/);
  // repoMap: everything optional.
  assert.deepEqual(toolRequest({ action: 'repoMap' }, undefined), { action: 'repoMap', method: 'rag/repoMap', params: {} });
  assert.deepEqual(toolRequest({ action: 'repoMap', query: ' invoices ', maxTokens: 2048 }, undefined).params, { query: 'invoices', maxTokens: 2048 });
  assert.deepEqual(toolRequest({ action: 'repoMap', query: '' }, undefined).params, {});
  assert.equal((toolRequest({ action: 'repoMap', query: 'q'.repeat(5000) }, undefined).params as { query: string }).query.length, 4000);
  assert.throws(() => toolRequest({ action: 'repoMap', maxTokens: 10 }, undefined), /maxTokens must be an integer from 64 to 32000/);
  assert.throws(() => toolRequest({ action: 'repoMap', query: 5 }, undefined), /query must be a string/);
});

const loc = (path: string, line: number, symbol: string | null, kind: 'call' | 'reference' | 'import', folder: string | null = null) => ({
  path,
  line,
  symbol,
  kind,
  folder,
  folderUri: folder ? `file:///w/${folder}` : null,
});
const rel = (path: string, line: number, symbol: string | null, folder: string | null = null) => ({ path, line, symbol, folder, folderUri: folder ? `file:///w/${folder}` : null });

test('references as text: one "path:line symbol (kind)" line per use, warnings shown', () => {
  const result: ReferencesResult = {
    locations: [loc('billing/invoice.py', 43, 'send_payment_reminder', 'reference'), loc('web/app.py', 3, null, 'import'), loc('web/app.py', 17, 'Cart.total', 'call')],
    warnings: ['3 files are still waiting to be indexed'],
    error: null,
  };
  const text = referencesText(result, { symbol: 'Invoice' });
  assert.equal(
    text,
    '3 uses of "Invoice" (1 call, 1 reference, 1 import), as path:line, the definition holding the use, (kind):\n' +
      'billing/invoice.py:43 send_payment_reminder (reference)\n' +
      'web/app.py:3 (import)\n' +
      'web/app.py:17 Cart.total (call)\n\n' +
      'Warnings from ragls (the answer may be incomplete):\n- 3 files are still waiting to be indexed',
  );
  // Multi-root: folder/path, as the server names the folder.
  const multi: ReferencesResult = { locations: [loc('billing/invoice.py', 43, 'f', 'call', 'api')], warnings: [], error: null };
  assert.match(referencesText(multi, { symbol: 'x', path: 'api/billing/invoice.py' }, true), /^1 use of "x" defined in api\/billing\/invoice\.py \(1 call\), .*\napi\/billing\/invoice\.py:43 f \(call\)$/);
  assert.match(referencesText(multi, { symbol: 'x' }, false), /\nbilling\/invoice\.py:43 f \(call\)$/, 'one folder: the folder-relative path');
  assert.equal(
    referencesText({ locations: [], warnings: [], error: null }, { symbol: 'nope' }),
    'No uses of "nope" found in the index. Check the name (e.g. "total" or "Invoice.total"), or search for it.',
  );
  assert.equal(
    referencesText({ locations: [], warnings: ['w'], error: 'the index is not open' }, { symbol: 'x' }),
    'ragls could not find the references of "x": the index is not open\n\nWarnings from ragls (the answer may be incomplete):\n- w',
  );
});

test('related as text: a section per list', () => {
  const result: RelatedResult = {
    definition: [rel('billing/invoice.py', 29, 'Invoice.compute_total')],
    callers: [rel('web/cart.py', 12, 'Cart.total')],
    callees: [],
    imports: [rel('billing/tax.py', 1, 'from billing.tax import rate')],
    importedBy: [rel('web/cart.py', 2, null)],
    warnings: [],
    error: null,
  };
  assert.equal(
    relatedText(result, { symbol: 'compute_total' }),
    'Related to "compute_total":\n\n' +
      'Definition (best first; the lists below are of the first):\n- billing/invoice.py:29 Invoice.compute_total\n\n' +
      'Callers (uses of it: path:line, the definition holding the use):\n- web/cart.py:12 Cart.total\n\n' +
      'Callees (the workspace definitions it calls):\n(none)\n\n' +
      'Imports (workspace files its file imports: the import as written):\n- billing/tax.py:1 from billing.tax import rate\n\n' +
      'Imported by (import statements of other files):\n- web/cart.py:2',
  );
  const multi = { ...result, definition: [rel('billing/invoice.py', 29, 'Invoice.compute_total', 'api')], warnings: ['more than 50 callers'] };
  const text = relatedText(multi, { path: 'api/billing/invoice.py' }, true);
  assert.ok(text.startsWith('Related to the file api/billing/invoice.py:\n'), text);
  assert.ok(text.includes('- api/billing/invoice.py:29 Invoice.compute_total'), text);
  assert.ok(text.endsWith('\n\nWarnings from ragls (the answer may be incomplete):\n- more than 50 callers'), text);
  assert.match(relatedText(multi, { symbol: 'f', path: 'a.py' }, true), /^Related to "f" in a\.py:/);
  const empty: RelatedResult = { definition: [], callers: [], callees: [], imports: [], importedBy: [], warnings: [], error: null };
  assert.equal(relatedText(empty, { symbol: 'nope' }), 'Nothing in the index relates to "nope". Check the name or path, or search for it.');
  assert.match(relatedText({ ...empty, error: 'store down' }, { symbol: 'x' }), /^ragls could not find what relates to "x": store down$/);
});

test('repo map as text: the server outline as written, warnings shown', () => {
  const result: RepoMapResult = {
    text: 'billing/invoice.py:\n  16: class Invoice:\n    29: def compute_total(self) -> Decimal:\n',
    files: [{ path: 'billing/invoice.py', score: 2.5, definitions: [], folder: null, folderUri: null }],
    tokens: 17,
    warnings: [],
    error: null,
  };
  assert.equal(
    repoMapText(result, {}),
    'Repository map: 1 file, their most used definitions as "line: signature", about 17 tokens.\n\n' +
      'billing/invoice.py:\n  16: class Invoice:\n    29: def compute_total(self) -> Decimal:',
  );
  assert.match(repoMapText({ ...result, warnings: ['indexing'] }, { query: 'tax' }), /^Repository map \(files about "tax" first\): .*\n- indexing$/s);
  assert.equal(repoMapText({ ...result, text: '', files: [], tokens: 0 }, {}), 'The repository map is empty: nothing is indexed yet.');
  assert.equal(repoMapText({ ...result, text: '', files: [], error: 'the index is not open' }, {}), 'ragls could not build the repository map: the index is not open');
});

test('toolResultText dispatches by action; errors are one line, never a stack', () => {
  const search = toolRequest({ query: 'q' }, undefined);
  assert.match(toolResultText(search, { context: '', chunks: [], tookMs: 1, error: null, warnings: [] }), /No indexed code matches "q"/);
  const refs = toolRequest({ action: 'references', symbol: 'x' }, undefined);
  assert.equal(toolResultText(refs, { locations: [loc('a.py', 1, null, 'call', 'f1')], warnings: [], error: null }, true), '1 use of "x" (1 call), as path:line, the definition holding the use, (kind):\nf1/a.py:1 (call)');
  const map: ToolRequest = toolRequest({ action: 'repoMap' }, undefined);
  assert.match(toolResultText(map, { text: 'a.py:\n  1: def f():', files: [], tokens: 4, warnings: [], error: null }), /a\.py:\n {2}1: def f\(\):$/);

  const err = new Error('boom\n    at Object.<anonymous> (/x/server.js:1:1)');
  assert.equal(toolErrorMessage(refs, err), 'ragls could not answer rag/references: boom');
  assert.equal(toolErrorMessage(search, new Error('the ragls server is not ready yet')), 'ragls could not search the workspace index: the ragls server is not ready yet');
  assert.equal(toolErrorMessage(map, 'down'), 'ragls could not build the repository map: down');
  assert.equal(
    toolErrorMessage(refs, Object.assign(new Error('Method Not Found: rag/references'), { code: -32601 })),
    'this ragls server has no rag/references (it predates protocol 5, the code graph): update ragls; action "search" still works',
  );
  assert.equal(toolErrorMessage(refs, { code: -32602, message: 'symbol: String should have at least 1 character' }), 'ragls rejected the references input: symbol: String should have at least 1 character');

  assert.equal(toolInvocationMessage({ query: 'where is tax' }), 'Searching the workspace index for "where is tax"');
  assert.equal(toolInvocationMessage({ action: 'references', symbol: 'Invoice' }), 'Finding the uses of Invoice in the workspace index');
  assert.equal(toolInvocationMessage({ action: 'related', path: 'a.py' }), 'Finding what relates to a.py in the workspace index');
  assert.equal(toolInvocationMessage({ action: 'repoMap' }), 'Mapping the repository');
  assert.equal(toolInvocationMessage({ action: 'bogus', query: 'q' }), 'Searching the workspace index for "q"');
});
