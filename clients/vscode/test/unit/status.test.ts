import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IndexStatus } from '../../src/lib/protocol';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StatusModel, parseCounts, statusDetails } from '../../src/lib/status';
import { CODICONS, folderLine, indexView } from '../../src/lib/statusView';
import { followsFolderChanges } from '../../src/lib/protocol';
import { REPO_ROOT } from '../support/env';

function status(over: Partial<IndexStatus> = {}): IndexStatus {
  return {
    state: 'ready',
    phase: 'idle',
    filesTotal: 9,
    filesIndexed: 9,
    filesFailed: 0,
    filesSkipped: 5,
    skippedByReason: { ignored: 4, secret: 1, binary: 0 },
    chunks: 1234,
    lexical: { done: 9, total: 9 },
    dense: { done: 9, total: 9 },
    lastIndexedAt: '2025-01-01T00:00:00Z',
    embedder: { provider: 'local', model: 'all-MiniLM-L6-v2', dimension: 384 },
    store: { kind: 'edge', location: '/tmp/x' },
    cache: { hits: 1, misses: 3, hitRate: 0.25 },
    errors: [],
    workspace: '/ws',
    version: '0.1.0',
    ...over,
  };
}

test('parseCounts reads n/N out of progress messages', () => {
  assert.deepEqual(parseCounts('3/10 files'), { done: 3, total: 10 });
  assert.deepEqual(parseCounts('12 / 40'), { done: 12, total: 40 });
  assert.equal(parseCounts('9 files, 30 chunks'), undefined);
  assert.equal(parseCounts(undefined), undefined);
});

test('lifecycle states before the server runs', () => {
  const m = new StatusModel();
  assert.equal(m.view().state, 'starting');
  assert.equal(m.view().text, '$(sync~spin) RAG');
  m.setLifecycle('notFound', 'not found; install it');
  assert.deepEqual([m.view().state, m.view().severity, m.view().text], ['notFound', 'error', '$(error) RAG: no server']);
  assert.deepEqual(m.view().details, ['not found; install it']);
  m.setLifecycle('restarting', 'in 2s');
  assert.equal(m.view().severity, 'warning');
  assert.ok(m.view().spinning);
  m.setLifecycle('noWorkspace');
  assert.equal(m.view().state, 'noWorkspace');
});

test('progress drives the spinner and n/N, then status drives ready', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  assert.equal(m.view().state, 'starting'); // running, no status yet
  m.applyProgress('t1', { kind: 'begin', title: 'ragls: indexing', message: '0/9 files', percentage: 0 });
  assert.equal(m.view().text, '$(sync~spin) RAG 0/9');
  assert.equal(m.view().state, 'indexing');
  m.applyProgress('t1', { kind: 'report', message: '4/9 files', percentage: 44 });
  assert.equal(m.view().text, '$(sync~spin) RAG 4/9');
  assert.ok(m.view().details[0].includes('ragls: indexing: 4/9 files'));
  m.applyProgress('t1', { kind: 'end', message: '9 files, 1234 chunks' });
  // Progress ended but no status yet: still waiting, not falsely "ready".
  assert.notEqual(m.view().state, 'ready');
  m.applyStatus(status());
  const v = m.view();
  assert.equal(v.state, 'ready');
  assert.equal(v.text, '$(database) RAG 1,234 chunks');
  assert.equal(v.severity, 'normal');
  assert.equal(v.spinning, false);
});

test('statusChanged while indexing shows n/N without progress', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  m.applyStatus(status({ state: 'indexing', phase: 'dense', filesIndexed: 2, filesFailed: 1, chunks: 10 }));
  assert.equal(m.view().text, '$(sync~spin) RAG 3/9');
  m.applyStatus(status({ state: 'indexing', phase: 'discovering', filesTotal: 0, filesIndexed: 0, chunks: 0 }));
  assert.equal(m.view().text, '$(sync~spin) RAG indexing');
});

test('percentage is used when no counts are known', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  m.applyProgress(7, { kind: 'begin', title: 'ragls: indexing', percentage: 40 });
  assert.equal(m.view().text, '$(sync~spin) RAG 40%');
});

test('a watch re-index after ready spins again, then returns to ready', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  m.applyStatus(status());
  m.applyProgress('w', { kind: 'begin', title: 'ragls: indexing', message: '0/1 files' });
  assert.equal(m.view().state, 'indexing');
  assert.equal(m.view().text, '$(sync~spin) RAG 0/1');
  m.applyProgress('w', { kind: 'end', message: '1 files' });
  assert.equal(m.view().state, 'ready');
});

test('error state and failed files use the warning colour', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  m.applyStatus(status({ state: 'error', phase: 'error', errors: [{ path: 'a.py', message: 'boom', time: 't' }] }));
  let v = m.view();
  assert.deepEqual([v.state, v.severity, v.text], ['error', 'warning', '$(error) RAG error']);
  assert.ok(v.details.some((l) => l.includes('a.py: boom')));
  m.applyStatus(status({ filesIndexed: 7, filesFailed: 2 }));
  v = m.view();
  assert.deepEqual([v.state, v.severity], ['ready', 'warning']);
  assert.equal(v.text, '$(warning) RAG 1,234 chunks, 2 failed');
});

test('restarting the server clears the stale status', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  m.applyStatus(status());
  m.setLifecycle('starting');
  assert.equal(m.status, undefined);
  assert.equal(m.view().state, 'starting');
});

for (const [file, min] of [
  ['status-cases.json', 10],
  ['status-folder-cases.json', 4],
] as const) {
  test(`the shared status case table (tests/fixtures/${file})`, () => {
    const table = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'tests', 'fixtures', file), 'utf8'));
    assert.ok(table.cases.length >= min);
    runCases(table);
  });
}

function runCases(table: { base: IndexStatus; cases: { name: string; status: Partial<IndexStatus>; icon: string; text: string; tooltip: string[] }[] }): void {
  for (const c of table.cases) {
    const st = { ...table.base, ...c.status } as IndexStatus;
    assert.deepEqual(indexView(st), { icon: c.icon, text: c.text, tooltip: c.tooltip }, c.name);
    // The status bar renders that view (a running server with no newer progress).
    const m = new StatusModel();
    m.setLifecycle('running');
    m.applyStatus(st);
    assert.equal(m.view().text, `${CODICONS[c.icon as keyof typeof CODICONS]} RAG ${c.text}`, c.name);
    assert.deepEqual(m.view().details, c.tooltip, c.name);
  }
}

test('status details of an old server', () => {
  assert.deepEqual(statusDetails(undefined), []);
  // Unknown/missing optional fields of an older server are tolerated.
  const minimal = statusDetails({ state: 'ready', phase: 'idle', filesTotal: 0, filesIndexed: 0, filesFailed: 0, filesSkipped: 0, chunks: 0 });
  assert.deepEqual(minimal, ['State: ready (idle)', 'Files: 0/0 indexed', 'Chunks: 0']);
});

test('multi-root: totals in the status bar, one detail line per folder', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  const folder = { state: 'ready', phase: 'idle', filesTotal: 2, filesIndexed: 2, filesFailed: 0, chunks: 7 };
  m.applyStatus(
    status({
      protocolVersion: 3,
      chunks: 1234,
      folders: [
        { ...folder, name: 'alpha', uri: 'file:///ws/alpha', chunks: 1227 },
        { ...folder, name: 'beta', uri: 'file:///ws/beta' },
      ],
    }),
  );
  const v = m.view();
  assert.equal(v.text, '$(database) RAG 1,234 chunks');
  assert.deepEqual(
    v.details.filter((l) => l.startsWith('Folder ')),
    ['Folder alpha: ready (idle), 2/2 files, 1,227 chunks', 'Folder beta: ready (idle), 2/2 files, 7 chunks'],
  );
  assert.equal(folderLine({ ...folder, name: 'lib', uri: 'file:///ws/alpha/lib', nestedIn: 'alpha' }), 'Folder lib: inside alpha');
});

test('followsFolderChanges reads the server capability (protocol 3), not an old server', () => {
  assert.equal(followsFolderChanges({ workspace: { workspaceFolders: { supported: true, changeNotifications: true } } }), true);
  assert.equal(followsFolderChanges({ workspace: { workspaceFolders: { supported: true, changeNotifications: 'id-1' } } }), true);
  assert.equal(followsFolderChanges({ workspace: { workspaceFolders: { supported: true } } }), false);
  assert.equal(followsFolderChanges({ textDocumentSync: 1 }), false);
  assert.equal(followsFolderChanges(undefined), false);
});
