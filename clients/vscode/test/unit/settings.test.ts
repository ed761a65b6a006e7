import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartBackoff } from '../../src/lib/backoff';
import { INSTALL_HINT, expandPath, resolveServerCommand } from '../../src/lib/serverPath';
import { pruneUnset, serverSettings } from '../../src/lib/settings';

test('serverSettings drops client-only keys and unset values', () => {
  const section = {
    server: { path: '/x/ragls', extraEnv: { A: '1' } },
    chat: { showReferences: true, includeHistory: true },
    trace: { server: 'messages' },
    include: null,
    exclude: ['**/*.min.js'],
    maxFileBytes: null,
    embedder: { provider: 'openai', model: null, baseUrl: null, apiKeyEnv: 'OPENAI_API_KEY', dimensions: null, batchSize: 16, threads: null },
    qdrant: { url: null, apiKeyEnv: null, path: null },
    retrieval: { topK: 8, maxChars: null, maxPerFile: null },
    indexing: { watch: false, debounceMs: null },
  };
  assert.deepEqual(serverSettings(section), {
    exclude: ['**/*.min.js'],
    embedder: { provider: 'openai', apiKeyEnv: 'OPENAI_API_KEY', batchSize: 16 },
    retrieval: { topK: 8 },
    indexing: { watch: false },
  });
  assert.deepEqual(serverSettings(undefined), {});
  assert.deepEqual(serverSettings({ server: { path: '' } }), {});
});

test('pruneUnset keeps falsy but set values and drops functions', () => {
  assert.deepEqual(pruneUnset({ a: 0, b: false, c: '', d: [], e: { f: null }, g: () => 1 }), { a: 0, b: false, c: '', d: [] });
  assert.equal(pruneUnset(null), undefined);
  assert.deepEqual(pruneUnset([1, null, 2]), [1, 2]);
});

const exe = (set: string[]) => (p: string) => set.includes(p);
const base = { workspaceFolders: ['/ws'], envPath: '/usr/bin:/opt/bin', platform: 'linux' as NodeJS.Platform, home: '/home/u' };

test('server path: the setting wins, with ~ and ${workspaceFolder}', () => {
  assert.equal(expandPath('~/bin/ragls', '/ws', '/home/u'), '/home/u/bin/ragls');
  assert.equal(expandPath('${workspaceFolder}/env/bin/ragls', '/ws', '/h'), '/ws/env/bin/ragls');
  assert.equal(expandPath('tools/ragls', '/ws', '/h'), '/ws/tools/ragls');
  const r = resolveServerCommand({ ...base, configured: '~/bin/ragls', isExecutable: exe(['/home/u/bin/ragls', '/ws/.venv/bin/ragls']) });
  assert.deepEqual(r, { ok: true, command: '/home/u/bin/ragls', source: 'setting' });
  const bad = resolveServerCommand({ ...base, configured: '/nope/ragls', isExecutable: exe(['/ws/.venv/bin/ragls']) });
  assert.equal(bad.ok, false);
  if (!bad.ok) assert.match(bad.message, /ragls\.server\.path is set to "\/nope\/ragls"/);
  const bare = resolveServerCommand({ ...base, configured: 'ragls-dev', isExecutable: exe(['/opt/bin/ragls-dev']) });
  assert.deepEqual(bare, { ok: true, command: '/opt/bin/ragls-dev', source: 'setting' });
});

test('server path: workspace .venv before PATH, then a clear failure', () => {
  const venv = resolveServerCommand({ ...base, configured: '', isExecutable: exe(['/ws/.venv/bin/ragls', '/usr/bin/ragls']) });
  assert.deepEqual(venv, { ok: true, command: '/ws/.venv/bin/ragls', source: 'venv' });
  const untrusted = resolveServerCommand({ ...base, configured: '', allowWorkspaceVenv: false, isExecutable: exe(['/ws/.venv/bin/ragls', '/usr/bin/ragls']) });
  assert.deepEqual(untrusted, { ok: true, command: '/usr/bin/ragls', source: 'path' }, 'untrusted: no workspace binaries');
  const onPath = resolveServerCommand({ ...base, configured: undefined, isExecutable: exe(['/opt/bin/ragls']) });
  assert.deepEqual(onPath, { ok: true, command: '/opt/bin/ragls', source: 'path' });
  const none = resolveServerCommand({ ...base, configured: undefined, isExecutable: exe([]) });
  assert.equal(none.ok, false);
  if (!none.ok) {
    assert.ok(none.tried.includes('/ws/.venv/bin/ragls'));
    assert.ok(none.tried.includes('/usr/bin/ragls'));
    assert.match(none.message, /not found/);
  }
  assert.match(INSTALL_HINT, /ragls\.server\.path/);
  const win = resolveServerCommand({ ...base, platform: 'win32', envPath: 'C:\\bin', configured: '', isExecutable: () => false });
  assert.equal(win.ok, false);
});

test('restart backoff grows, caps, gives up, and resets after a stable run', () => {
  let now = 0;
  const b = new RestartBackoff({ initialMs: 1000, maxMs: 5000, maxRestarts: 4, stableAfterMs: 60_000, now: () => now });
  b.started();
  assert.equal(b.crashed(), 1000);
  assert.equal(b.crashed(), 2000);
  assert.equal(b.crashed(), 4000);
  assert.equal(b.crashed(), 5000);
  assert.equal(b.crashed(), undefined);
  b.reset();
  b.started();
  now += 10;
  assert.equal(b.crashed(), 1000);
  b.started();
  now += 61_000;
  assert.equal(b.crashed(), 1000, 'a long run resets the count');
  assert.equal(b.crashCount, 1);
});
