import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestartBackoff } from '../../src/lib/backoff';
import { INSTALL_HINT, expandPath, resolveServerCommand } from '../../src/lib/serverPath';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { explicitSettings, pruneUnset, serverSettings, settingAt, type Inspected } from '../../src/lib/settings';
import { PACKAGE_ROOT } from '../support/env';

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

test('pruneUnset drops null, undefined, empty strings and functions, keeps 0/false/[]', () => {
  assert.deepEqual(pruneUnset({ a: 0, b: false, c: '', d: [], e: { f: null }, g: () => 1 }), { a: 0, b: false, d: [] });
  assert.equal(pruneUnset(null), undefined);
  assert.deepEqual(pruneUnset([1, null, 2]), [1, 2]);
});

test('only explicitly set settings are sent, the most specific scope winning', () => {
  const values: Record<string, Inspected> = {
    'server.path': { globalValue: '/opt/ragls' },
    'chat.showReferences': { globalValue: false },
    'retrieval.topK': { globalValue: 8, workspaceValue: 12 },
    'retrieval.maxChars': {},
    'embedder.provider': { workspaceValue: 'ollama', workspaceFolderValue: 'openai' },
    'embedder.baseUrl': { globalValue: '' },
    'indexing.watch': { globalValue: false },
    exclude: { workspaceValue: ['fixtures/'] },
  };
  const keys = ['ragls.server.path', 'ragls.chat.showReferences', 'ragls.retrieval.topK', 'ragls.retrieval.maxChars',
    'ragls.embedder.provider', 'ragls.embedder.baseUrl', 'ragls.indexing.watch', 'ragls.exclude', 'ragls.include', 'other.key'];
  const explicit = explicitSettings(keys, (k) => values[k]);
  const sent = serverSettings(explicit);
  assert.deepEqual(sent, {
    retrieval: { topK: 12 },
    embedder: { provider: 'openai' },
    indexing: { watch: false },
    exclude: ['fixtures/'],
  });
  assert.equal(settingAt(sent, 'retrieval.topK'), 12);
  assert.equal(settingAt(sent, 'retrieval.maxChars'), undefined);
  assert.equal(settingAt(sent, 'nope.deeper'), undefined);
});

test('package.json contributes the server settings under their server names', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
  const keys = Object.keys(pkg.contributes.configuration.properties);
  for (const k of ['include', 'exclude', 'maxFileBytes', 'embedder.provider', 'embedder.model', 'embedder.baseUrl',
    'embedder.apiKeyEnv', 'embedder.dimensions', 'embedder.batchSize', 'embedder.threads', 'qdrant.url',
    'qdrant.apiKeyEnv', 'qdrant.path', 'retrieval.topK', 'retrieval.maxChars', 'retrieval.maxPerFile',
    'indexing.watch', 'indexing.debounceMs', 'server.path']) {
    assert.ok(keys.includes(`ragls.${k}`), `missing ragls.${k}`);
  }
  for (const k of keys) {
    const d = pkg.contributes.configuration.properties[k];
    assert.ok(d.markdownDescription || d.description, `${k} is documented`);
  }
  // Everything a user sets, all at once, comes out with the server's key names.
  const all = explicitSettings(keys, (k) => ({ globalValue: pkg.contributes.configuration.properties[`ragls.${k}`].default }));
  const sent = serverSettings(all) as Record<string, unknown>;
  assert.equal(sent.server, undefined);
  assert.equal(sent.chat, undefined);
  assert.equal(sent.trace, undefined);
  assert.equal(settingAt(sent, 'retrieval.topK'), 20);
  assert.equal(settingAt(sent, 'embedder.provider'), 'local');
  // The README lists every setting and command.
  const readme = fs.readFileSync(path.join(PACKAGE_ROOT, 'README.md'), 'utf8');
  for (const k of keys) assert.ok(readme.includes(`\`${k}\``), `README lists ${k}`);
  for (const c of pkg.contributes.commands) assert.ok(readme.includes(`RAG: ${c.title}`), `README lists RAG: ${c.title}`);
});

const exe = (set: string[]) => (p: string) => set.includes(p);
const base = { workspaceFolders: ['/ws'], envPath: '/usr/bin:/opt/bin', platform: 'linux' as NodeJS.Platform, home: '/home/u', workspaceTrusted: true };

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

test('server path: never the workspace .venv by default; PATH, then a clear failure', () => {
  const both = exe(['/ws/.venv/bin/ragls', '/ws/venv/bin/ragls', '/usr/bin/ragls']);
  for (const workspaceTrusted of [true, false]) {
    const r = resolveServerCommand({ ...base, workspaceTrusted, configured: '', isExecutable: both });
    assert.deepEqual(r, { ok: true, command: '/usr/bin/ragls', source: 'path' }, `trusted=${workspaceTrusted}: no workspace binaries`);
  }
  const onlyVenv = resolveServerCommand({ ...base, configured: '', isExecutable: exe(['/ws/.venv/bin/ragls']) });
  assert.equal(onlyVenv.ok, false, 'a workspace .venv alone is not used');
  if (!onlyVenv.ok) assert.ok(!onlyVenv.tried.some((t) => t.startsWith('/ws/')), onlyVenv.tried.join(', '));
  // PATH entries that are relative or inside an untrusted workspace are not searched.
  const sneaky = { ...base, envPath: '.:/ws/bin:/usr/bin', configured: '', isExecutable: exe(['ragls', '/ws/bin/ragls', '/usr/bin/ragls']) };
  assert.deepEqual(resolveServerCommand({ ...sneaky, workspaceTrusted: false }), { ok: true, command: '/usr/bin/ragls', source: 'path' });
  assert.deepEqual(resolveServerCommand({ ...sneaky, workspaceTrusted: true }), { ok: true, command: '/ws/bin/ragls', source: 'path' });
  const onPath = resolveServerCommand({ ...base, configured: undefined, isExecutable: exe(['/opt/bin/ragls']) });
  assert.deepEqual(onPath, { ok: true, command: '/opt/bin/ragls', source: 'path' });
  const none = resolveServerCommand({ ...base, configured: undefined, isExecutable: exe([]) });
  assert.equal(none.ok, false);
  if (!none.ok) {
    assert.ok(none.tried.includes('/usr/bin/ragls'));
    assert.match(none.message, /not found/);
    assert.ok(none.message.includes('PATH searched: /usr/bin:/opt/bin.'), 'names the PATH it searched');
    assert.match(none.message, /login shell/, 'says where that PATH comes from');
  }
  const empty = resolveServerCommand({ ...base, envPath: undefined, configured: '', isExecutable: exe([]) });
  assert.ok(!empty.ok && empty.message.includes('PATH searched: (empty)'));
  assert.match(INSTALL_HINT, /ragls\.server\.path/);
  assert.match(INSTALL_HINT, /pipx install ragls/);
  const win = resolveServerCommand({ ...base, platform: 'win32', envPath: 'C:\\bin', configured: '', isExecutable: () => false });
  assert.equal(win.ok, false);
});

test('server path: a configured path inside the workspace runs only in a trusted workspace', () => {
  const venv = exe(['/ws/.venv/bin/ragls']);
  for (const configured of ['${workspaceFolder}/.venv/bin/ragls', '.venv/bin/ragls', '/ws/.venv/bin/ragls']) {
    assert.deepEqual(resolveServerCommand({ ...base, configured, isExecutable: venv }), { ok: true, command: '/ws/.venv/bin/ragls', source: 'setting' });
    const r = resolveServerCommand({ ...base, workspaceTrusted: false, configured, isExecutable: venv });
    assert.equal(r.ok, false, configured);
    if (!r.ok) {
      assert.match(r.message, /not trusted/);
      assert.deepEqual(r.tried, [], 'nothing in the workspace was even probed');
    }
  }
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
