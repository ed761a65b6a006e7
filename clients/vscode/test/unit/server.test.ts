/**
 * Drives the real ragls server through vscode-jsonrpc, as the extension does:
 * initialize, `$/progress`, rag/statusChanged, rag/indexStatus reaching ready, and
 * rag/retrieve returning the fixture function. Skipped when the server is missing,
 * except under CI=true, where a missing server is a failure.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chatRetrieveParams } from '../../src/lib/chatCommands';
import { prependContext } from '../../src/lib/format';
import { searchToolParams, searchToolText, toolErrorMessage, toolRequest, toolResultText } from '../../src/lib/searchTool';
import { followsFolderChanges, type IndexStatus, type RetrieveResult } from '../../src/lib/protocol';
import { CODICONS, StatusModel, formatNumber } from '../../src/lib/status';
import { RaglsTestClient } from '../support/lspClient';
import { EXPECTED_PATH, EXPECTED_SYMBOL, IS_CI, QUERY, copyFixture, isExecutable, serverEnv, serverPath } from '../support/env';

const SERVER = serverPath();
const available = isExecutable(SERVER);
if (!available && IS_CI) {
  test('ragls server is available', () => {
    assert.fail(`ragls not found at ${SERVER} (set RAGLS_SERVER); CI=true makes this a failure`);
  });
}

describe('real ragls server over vscode-jsonrpc', { skip: available ? false : `ragls not found at ${SERVER}` }, () => {
  let client: RaglsTestClient;
  let tmp: string;
  let ready: IndexStatus;
  let init: { capabilities: Record<string, unknown>; serverInfo?: { name: string; version?: string } };

  before(async () => {
    const ws = copyFixture();
    tmp = path.dirname(ws);
    client = new RaglsTestClient(SERVER, ws, serverEnv(fs.mkdtempSync(path.join(os.tmpdir(), 'ragls-cache-'))));
    init = await client.initialize({ indexing: { debounceMs: 200 } });
  });

  after(async () => {
    if (client) {
      const code = await client.shutdown();
      assert.equal(code, 0, `server exit code ${code}\n${client.stderr.slice(-2000)}`);
    }
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('initialize answers with capabilities', () => {
    assert.equal(typeof init.capabilities, 'object');
  });

  test('the server follows workspace folder changes (protocol 3): no restart on a folder change', () => {
    assert.equal(followsFolderChanges(init.capabilities), true, JSON.stringify(init.capabilities.workspace));
  });

  test('rag/indexStatus reaches ready', async () => {
    ready = await client.waitFor(
      'state ready',
      async () => {
        const st = await client.indexStatus();
        if (st.state === 'error') throw new Error(`index state error: ${JSON.stringify(st.errors?.slice(-3))}`);
        return st.state === 'ready' ? st : undefined;
      },
      240_000,
      500,
    );
    assert.equal(ready.filesIndexed + ready.filesFailed, ready.filesTotal);
    assert.ok(ready.filesTotal > 0, 'some files indexed');
    assert.ok(ready.chunks > 0, 'chunks in the store');
    assert.ok(ready.filesSkipped > 0, 'ignored/secret files are counted as skipped');
  });

  test('the status bar shows the display the server sent, as it is', () => {
    assert.ok(ready, 'the index never became ready');
    const shown = ready.display;
    assert.ok(shown, 'a display in rag/indexStatus');
    assert.equal(shown.health, ready.filesFailed > 0 ? 'warning' : 'ok');
    assert.equal(shown.text, `${formatNumber(ready.chunks)} chunks${ready.filesFailed ? `, ${ready.filesFailed} failed` : ''}`);
    const m = new StatusModel();
    m.setLifecycle('running');
    m.applyStatus(ready);
    assert.equal(m.view().text, `${CODICONS[shown.health]} RAG ${shown.text}`);
    assert.deepEqual(m.view().details, shown.tooltip);
    assert.equal(shown.tooltip[0], 'State: ready (idle)');
  });

  test('$/progress reported the indexing run (begin, end)', async () => {
    assert.ok(ready, 'the index never became ready');
    const ev = await client.waitFor('progress end', () => (client.progress.some((p) => p.value.kind === 'end') ? client.progress : undefined), 10_000);
    const begin = ev.find((p) => p.value.kind === 'begin');
    assert.ok(begin, 'a begin');
    assert.equal(begin.value.kind === 'begin' && begin.value.title, 'ragls: indexing');
    const end = ev.find((p) => p.value.kind === 'end' && p.token === begin.token);
    assert.ok(end, 'an end for the same token');
  });

  test('rag/statusChanged notified the state changes', async () => {
    await client.waitFor('a ready statusChanged', () => (client.statusChanged.some((s) => s.state === 'ready') ? true : undefined), 10_000);
    assert.ok(client.statusChanged.length >= 1);
  });

  test('the server pulled the ragls section of workspace/configuration', async () => {
    await client.waitFor('workspace/configuration', () => (client.configurationRequests.length ? true : undefined), 10_000);
    const items = (client.configurationRequests[0] as { items: { section?: string }[] }).items;
    assert.ok(items.some((i) => i.section === 'ragls'), JSON.stringify(items));
  });

  test('rag/retrieve returns the fixture function in a <rag_context> block', async () => {
    assert.ok(ready, 'the index never became ready');
    const res: RetrieveResult = await client.conn.sendRequest('rag/retrieve', { query: QUERY, topK: 5, maxChars: 4000 });
    assert.ok(!res.error, `error: ${res.error}`);
    const hit = res.chunks.find((c) => c.path === EXPECTED_PATH && c.symbol === EXPECTED_SYMBOL);
    assert.ok(hit, `no ${EXPECTED_SYMBOL} in ${JSON.stringify(res.chunks.map((c) => [c.path, c.symbol]))}`);
    assert.ok(hit.uri.startsWith('file://'));
    assert.ok(hit.content.includes('def compute_total'));
    assert.ok(res.context.startsWith('<rag_context>'));
    assert.match(res.context, /<code_context file="billing\/invoice\.py" lines="\d+-\d+" symbol="Invoice\.compute_total">/);
    assert.ok(res.context.length <= 4000);
    for (const c of res.chunks) {
      assert.doesNotMatch(c.path, /^(build|node_modules)\/|^\.env$|debug\.log$/, `ignored file indexed: ${c.path}`);
    }
    // What @rag sends to the model.
    const prompt = prependContext(res.context, QUERY);
    assert.ok(prompt.startsWith('<rag_context>\n'));
    assert.ok(prompt.endsWith(`</rag_context>\n\n${QUERY}`));
  });

  test('the #ragls tool input goes through rag/retrieve with its filters', async () => {
    assert.ok(ready, 'the index never became ready');
    const params = searchToolParams({ query: QUERY, topK: 3, paths: ['billing/**'], languages: ['Python'] }, undefined);
    const res: RetrieveResult = await client.conn.sendRequest('rag/retrieve', params);
    const text = searchToolText(res, params);
    assert.match(text, /^<rag_context>\n<code_context file="billing\/invoice\.py" lines="\d+-\d+" symbol="Invoice\.compute_total">/);
    assert.ok(res.chunks.length <= 3 && res.chunks.every((c) => c.path.startsWith('billing/') && c.language === 'python'));
    const none = searchToolParams({ query: QUERY, languages: ['cobol'] }, undefined);
    const empty: RetrieveResult = await client.conn.sendRequest('rag/retrieve', none);
    assert.equal(searchToolText(empty, none), `No indexed code matches "${QUERY}" within languages cobol. Try other words, an identifier, or fewer filters.`);
  });

  // Issue 53: the tool's graph actions, through the server's rag/references, rag/related and
  // rag/repoMap, as the text the model reads. In the fixture `Invoice` is used once, as the type
  // of send_payment_reminder's parameter (billing/invoice.py:43).
  test('the #ragls tool graph actions (references, related, repoMap) read the real code graph', async () => {
    assert.ok(ready, 'the index never became ready');
    const refs = toolRequest({ action: 'references', symbol: 'Invoice' }, undefined);
    const refsText = toolResultText(refs, await client.conn.sendRequest(refs.method, refs.params));
    assert.match(refsText, /^\d+ uses? of "Invoice" /, refsText);
    assert.match(refsText, /\nbilling\/invoice\.py:43 send_payment_reminder \(reference\)(\n|$)/, refsText);
    const related = toolRequest({ action: 'related', symbol: 'Invoice.compute_total' }, undefined);
    const relatedOut = toolResultText(related, await client.conn.sendRequest(related.method, related.params));
    assert.match(relatedOut, /^Related to "Invoice\.compute_total":\n\nDefinition [^\n]*:\n- billing\/invoice\.py:29 Invoice\.compute_total\n/, relatedOut);
    const map = toolRequest({ action: 'repoMap', query: 'invoice total', maxTokens: 512 }, undefined);
    const mapText = toolResultText(map, await client.conn.sendRequest(map.method, map.params));
    assert.match(mapText, /^Repository map \(files about "invoice total" first\): \d+ files?, /, mapText);
    assert.match(mapText, /\nbilling\/invoice\.py:\n/, mapText);
    assert.match(mapText, /\n {2}16: class Invoice:\n/, mapText);
    // Params the tool would never send are a JSON-RPC error that toolErrorMessage says in one line.
    const bad = toolRequest({ action: 'references', symbol: 'x' }, undefined);
    const err = await client.conn.sendRequest(bad.method, { symbol: 'x', limit: 5000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.match(toolErrorMessage(bad, err), /^ragls rejected the references input: .*limit/);
  });

  // The same words as an @rag question and as @rag /change (protocol 4 intent). As a question the
  // fixture's docs/deployment.md ranks first; as a change documentation weighs 0.3 and code comes
  // first (the fixture copy is no git repository, so no commit history takes part).
  test('@rag /change retrieves with intent "change": code before docs', async () => {
    assert.ok(ready, 'the index never became ready');
    const task = 'deploy the branch to staging';
    const asQuestion: RetrieveResult = await client.conn.sendRequest('rag/retrieve', chatRetrieveParams(undefined, task, { topK: 5, maxChars: 4000 }));
    const asChange: RetrieveResult = await client.conn.sendRequest('rag/retrieve', chatRetrieveParams('change', task, { topK: 5, maxChars: 4000 }));
    const paths = (r: RetrieveResult) => r.chunks.map((c) => c.path);
    assert.ok(!asQuestion.error && !asChange.error, `errors: ${asQuestion.error} / ${asChange.error}`);
    assert.equal(asQuestion.chunks[0]?.path, 'docs/deployment.md', `question: ${paths(asQuestion)}`);
    const top = asChange.chunks[0]?.path ?? '';
    assert.ok(top && !top.endsWith('.md'), `change, a code file first: ${paths(asChange)}`);
    assert.ok(paths(asChange).indexOf('docs/deployment.md') !== 0, `change: ${paths(asChange)}`);
    assert.ok(asChange.context.startsWith(`<rag_context>\n<code_context file="${top}"`), asChange.context.slice(0, 200));
  });

  test('invalid params and unknown methods are JSON-RPC errors, server stays up', async () => {
    assert.ok(ready, 'the index never became ready');
    await assert.rejects(client.conn.sendRequest('rag/retrieve', { query: QUERY, topK: 1000 }), (e: { code?: number }) => e.code === -32602);
    await assert.rejects(client.conn.sendRequest('rag/noSuchMethod', {}), (e: { code?: number }) => e.code === -32601);
    const st = await client.indexStatus();
    assert.equal(st.state, 'ready');
  });

  test('didChangeConfiguration makes the server pull the settings again', async () => {
    const before = client.configurationRequests.length;
    client.settings = { retrieval: { topK: 3 } };
    await client.conn.sendNotification('workspace/didChangeConfiguration', { settings: { ragls: client.settings } });
    await client.waitFor('a new workspace/configuration', () => (client.configurationRequests.length > before ? true : undefined), 10_000);
  });

  test('rag/reindex answers started', async () => {
    assert.ok(ready, 'the index never became ready');
    const res: { started: boolean } = await client.conn.sendRequest('rag/reindex', { full: false });
    assert.equal(typeof res.started, 'boolean');
    await client.waitFor(
      'ready after reindex',
      async () => ((await client.indexStatus()).state === 'ready' ? true : undefined),
      120_000,
      500,
    );
  });
});
