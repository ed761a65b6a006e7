/**
 * Issue 17, over the real server: the embedding provider (an HTTP server on 127.0.0.1 that
 * answers 500) is down, yet rag/retrieve answers with results plus `warnings` and no `error`;
 * the extension shows that as a degraded note, and the status as the server displays it.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { degradedNote, retrievalFailure } from '../../src/lib/format';
import type { RetrieveResult } from '../../src/lib/protocol';
import { StatusModel } from '../../src/lib/status';
import { RaglsTestClient } from '../support/lspClient';
import { EXPECTED_PATH, IS_CI, copyFixture, isExecutable, serverEnv, serverPath } from '../support/env';

const SERVER = serverPath();
const available = isExecutable(SERVER);
if (!available && IS_CI) {
  test('ragls server is available', () => assert.fail(`ragls not found at ${SERVER} (set RAGLS_SERVER); CI=true makes this a failure`));
}

describe('embedding provider down', { skip: available ? false : `ragls not found at ${SERVER}` }, () => {
  let client: RaglsTestClient;
  let provider: http.Server;
  let hits = 0;
  let tmp: string;
  let init: { capabilities: Record<string, unknown> };

  before(async () => {
    provider = http.createServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const port = (provider.address() as AddressInfo).port;
    const ws = copyFixture();
    tmp = path.dirname(ws);
    client = new RaglsTestClient(SERVER, ws, serverEnv(fs.mkdtempSync(path.join(os.tmpdir(), 'ragls-cache-'))));
    init = await client.initialize({
      embedder: { provider: 'ollama', baseUrl: `http://127.0.0.1:${port}`, model: 'tiny', dimensions: 8, maxRetries: 0, timeoutS: 2 },
    });
  });

  after(async () => {
    if (client) await client.shutdown();
    if (provider) provider.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('initialize reports protocol version 5', () => {
    assert.deepEqual(init.capabilities.experimental, { ragls: { protocolVersion: 6 } });
  });

  test('rag/retrieve answers lexically with a warning, not an error', async () => {
    await client.waitFor(
      'lexical vectors for every file',
      async () => {
        const st = await client.indexStatus();
        return st.filesTotal > 0 && (st.lexical?.done ?? 0) >= st.filesTotal - st.filesFailed ? st : undefined;
      },
      120_000,
      300,
    );
    const res: RetrieveResult = await client.conn.sendRequest('rag/retrieve', { query: 'invoice compute_total', topK: 3 });
    assert.ok(hits > 0, 'the provider was asked');
    assert.equal(res.error, null);
    assert.ok(res.chunks.length > 0 && res.context.includes('<rag_context>'));
    assert.equal(res.chunks[0].path, EXPECTED_PATH);
    assert.ok(res.warnings?.some((w) => w.includes('lexical only')), JSON.stringify(res.warnings));
    assert.equal(retrievalFailure(res), undefined);
    assert.match(degradedNote(res) ?? '', /^Degraded search: .*lexical only/);
  });

  test('the status bar shows the degraded index as the server displays it', async () => {
    const st = await client.indexStatus();
    const m = new StatusModel();
    m.setLifecycle('running');
    m.applyStatus(st);
    const v = m.view();
    assert.ok(st.state !== 'ready' || st.filesFailed > 0, JSON.stringify(st));
    assert.notEqual(st.display.health, 'ok', JSON.stringify(st.display));
    assert.ok(v.severity === 'warning' || v.state === 'indexing', v.text);
    assert.ok(v.text.endsWith(` RAG ${st.display.text}`), `${v.text} vs ${st.display.text}`);
    assert.deepEqual(v.details, st.display.tooltip);
    assert.equal(v.details[0], `State: ${st.state} (${st.phase})`);
  });
});
