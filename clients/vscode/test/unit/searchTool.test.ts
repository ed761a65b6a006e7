import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import type { RetrieveResult } from '../../src/lib/protocol';
import { SEARCH_TOOL_NAME, searchToolParams, searchToolText } from '../../src/lib/searchTool';
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
  const empty: RetrieveResult = { context: '', chunks: [], tookMs: 1, error: null, warnings: [] };
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
  assert.deepEqual(Object.keys(tool.inputSchema.properties).sort(), ['folders', 'intent', 'languages', 'paths', 'query', 'topK']);
  assert.deepEqual(tool.inputSchema.properties.intent.enum, ['question', 'change']);
  assert.deepEqual(tool.inputSchema.required, ['query']);
  assert.ok(tool.modelDescription.length > 200, 'a description written for a model');
  assert.ok(pkg.contributes.chatParticipants.some((p: { id: string }) => p.id === 'ragls.rag'), '@rag stays');
});
