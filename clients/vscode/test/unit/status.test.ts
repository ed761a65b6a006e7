import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { IndexStatus, StatusDisplay } from '../../src/lib/protocol';
import { CODICONS, StatusModel, displayOf, parseCounts, statusDetails } from '../../src/lib/status';
import { followsFolderChanges } from '../../src/lib/protocol';
import { REPO_ROOT } from '../support/env';

interface CaseTable {
  base: Omit<IndexStatus, 'display'>;
  cases: { name: string; status: Partial<IndexStatus>; display: StatusDisplay }[];
}

function table(file: string): CaseTable {
  return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'tests', 'fixtures', file), 'utf8')) as CaseTable;
}

const BASE = table('status-cases.json').base;

/** A status as the server sends it: its fields and, apart, what the server says to show. */
function status(over: Partial<IndexStatus>, display: StatusDisplay): IndexStatus {
  return { ...BASE, ...over, display };
}

const READY: StatusDisplay = { health: 'ok', text: '1,234 chunks', tooltip: ['State: ready (idle)', 'Chunks: 1,234'] };

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

test('progress drives the spinner and n/N, then the status shows the server display', () => {
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
  m.applyStatus(status({}, READY));
  const v = m.view();
  assert.equal(v.state, 'ready');
  assert.equal(v.text, '$(database) RAG 1,234 chunks');
  assert.deepEqual(v.details, READY.tooltip);
  assert.equal(v.severity, 'normal');
  assert.equal(v.spinning, false);
});

test('statusChanged while indexing shows the server text, a newer progress its own n/N', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  const indexing = { state: 'indexing', phase: 'dense', filesIndexed: 2, filesFailed: 1 } as const;
  m.applyStatus(status(indexing, { health: 'indexing', text: 'server says 3 of 9', tooltip: ['t'] }));
  assert.equal(m.view().text, '$(sync~spin) RAG server says 3 of 9');
  assert.ok(m.view().spinning);
  m.applyProgress('p', { kind: 'report', message: '5/9 files' });
  assert.equal(m.view().text, '$(sync~spin) RAG 5/9');
  m.applyStatus(status(indexing, { health: 'indexing', text: 'indexing', tooltip: ['t'] }));
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
  m.applyStatus(status({}, READY));
  m.applyProgress('w', { kind: 'begin', title: 'ragls: indexing', message: '0/1 files' });
  assert.equal(m.view().state, 'indexing');
  assert.equal(m.view().text, '$(sync~spin) RAG 0/1');
  m.applyProgress('w', { kind: 'end', message: '1 files' });
  assert.equal(m.view().state, 'ready');
  assert.equal(m.view().text, '$(database) RAG 1,234 chunks');
});

test('the health picks the icon and the colour; the text and tooltip are the server strings', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  m.applyStatus(status({ state: 'error', phase: 'error' }, { health: 'error', text: 'err text', tooltip: ['a.py: boom'] }));
  let v = m.view();
  assert.deepEqual([v.state, v.severity, v.text, v.details], ['error', 'warning', '$(error) RAG err text', ['a.py: boom']]);
  m.applyStatus(status({}, { health: 'warning', text: 'warn text', tooltip: [] }));
  v = m.view();
  assert.deepEqual([v.state, v.severity, v.text], ['ready', 'warning', '$(warning) RAG warn text']);
});

test('the client maps nothing: whatever the fields say, the display is shown', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  // a ready status with no failure, whose display the server made an error: the display wins
  const shown: StatusDisplay = { health: 'error', text: 'from the server 7', tooltip: ['only', 'these lines'] };
  m.applyStatus(status({ state: 'ready', filesFailed: 0, warnings: [] }, shown));
  const v = m.view();
  assert.equal(v.text, '$(error) RAG from the server 7');
  assert.deepEqual(v.details, ['only', 'these lines']);
  assert.equal(v.severity, 'warning');
  assert.deepEqual(statusDetails(m.status), ['only', 'these lines']);
});

test('restarting the server clears the stale status', () => {
  const m = new StatusModel();
  m.setLifecycle('running');
  m.applyStatus(status({}, READY));
  m.setLifecycle('starting');
  assert.equal(m.status, undefined);
  assert.equal(m.view().state, 'starting');
});

for (const [file, min] of [
  ['status-cases.json', 10],
  ['status-folder-cases.json', 4],
] as const) {
  test(`every display of the status case table renders as the server wrote it (tests/fixtures/${file})`, () => {
    const t = table(file);
    assert.ok(t.cases.length >= min);
    for (const c of t.cases) {
      const st = { ...t.base, ...c.status, display: c.display } as IndexStatus;
      const m = new StatusModel();
      m.setLifecycle('running');
      m.applyStatus(st);
      assert.equal(m.view().text, `${CODICONS[c.display.health]} RAG ${c.display.text}`, c.name);
      assert.deepEqual(m.view().details, c.display.tooltip, c.name);
    }
  });
}

test('an old server without display: its state, no mapping', () => {
  assert.deepEqual(statusDetails(undefined), []);
  const old = { ...BASE, state: 'ready', phase: 'idle' } as IndexStatus;
  assert.deepEqual(displayOf(old), { health: 'ok', text: 'ready', tooltip: ['State: ready (idle)'] });
  const m = new StatusModel();
  m.setLifecycle('running');
  m.applyStatus({ ...BASE, state: 'error', phase: 'waiting' } as IndexStatus);
  assert.equal(m.view().text, '$(error) RAG error');
  assert.deepEqual(m.view().details, ['State: error (waiting)']);
});

test('followsFolderChanges reads the server capability (protocol 3), not an old server', () => {
  assert.equal(followsFolderChanges({ workspace: { workspaceFolders: { supported: true, changeNotifications: true } } }), true);
  assert.equal(followsFolderChanges({ workspace: { workspaceFolders: { supported: true, changeNotifications: 'id-1' } } }), true);
  assert.equal(followsFolderChanges({ workspace: { workspaceFolders: { supported: true } } }), false);
  assert.equal(followsFolderChanges({ textDocumentSync: 1 }), false);
  assert.equal(followsFolderChanges(undefined), false);
});
