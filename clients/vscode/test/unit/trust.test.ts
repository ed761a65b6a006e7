/**
 * Issue 12: a cloned repository is untrusted input. The sensitive settings come from the
 * server (`ragls schema --sensitive`, the one definition); package.json must restrict
 * exactly those (plus the client's own `server.*`), and the extension reads them from user
 * settings only. A program inside the workspace is never started on its own.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { resolveServerCommand } from '../../src/lib/serverPath';
import { explicitSettings, ignoredWorkspaceKeys, serverSettings, userScopeOnlyKeys, type Inspected } from '../../src/lib/settings';
import { CLIENT_SENSITIVE } from '../../src/lib/settingsSchema';
import { IS_CI, PACKAGE_ROOT, isExecutable, serverPath } from '../support/env';


const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
const SERVER = serverPath();
const available = isExecutable(SERVER);
if (!available && IS_CI) {
  test('ragls server is available', () => assert.fail(`ragls not found at ${SERVER} (set RAGLS_SERVER); CI=true makes this a failure`));
}

describe('sensitive settings match the server', { skip: available ? false : `ragls not found at ${SERVER}` }, () => {
  test('restrictedConfigurations and the user-scope-only list are `ragls schema --sensitive` + server.*', () => {
    const r = spawnSync(SERVER, ['schema', '--sensitive'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    const fromServer = r.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
    assert.ok(fromServer.includes('qdrant.url') && fromServer.includes('embedder.apiKeyEnv'), r.stdout);
    const expected = [...CLIENT_SENSITIVE, ...fromServer.map((k) => `ragls.${k}`)].sort();
    const restricted = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations as string[];
    assert.deepEqual([...restricted].sort(), expected, 'package.json restrictedConfigurations');
    assert.deepEqual(userScopeOnlyKeys(pkg).sort(), expected, 'the keys the extension reads from user scope only');
    const props = pkg.contributes.configuration.properties;
    for (const k of expected) {
      assert.ok(props[k], `${k} is contributed as a setting`);
      assert.equal(props[k].scope, 'machine', `${k}: machine scope, so workspace settings cannot set it`);
      assert.match(props[k].markdownDescription, /User settings only/, `${k} says so`);
    }
  });
});

test('capabilities.untrustedWorkspaces is declared as limited', () => {
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
  assert.ok(pkg.capabilities.untrustedWorkspaces.description.length > 20);
});

test('sensitive settings are read from user scope only, even in a trusted workspace', () => {
  const userOnly = new Set(userScopeOnlyKeys(pkg));
  const values: Record<string, Inspected> = {
    // what a cloned repository's .vscode/settings.json would try
    'qdrant.url': { workspaceValue: 'http://evil.example:6333' },
    'embedder.provider': { globalValue: 'local', workspaceFolderValue: 'openai' },
    'embedder.baseUrl': { workspaceValue: 'https://evil.example/v1' },
    'embedder.apiKeyEnv': { globalValue: 'MY_KEY', workspaceValue: 'AWS_SECRET_ACCESS_KEY' },
    trustedFolders: { workspaceValue: ['/'] },
    'server.path': { workspaceValue: '${workspaceFolder}/.venv/bin/ragls' },
    // ordinary settings still follow the most specific scope
    'retrieval.topK': { globalValue: 5, workspaceValue: 9 },
    exclude: { workspaceFolderValue: ['gen/'] },
  };
  const keys = Object.keys(pkg.contributes.configuration.properties);
  const sent = serverSettings(explicitSettings(keys, (k) => values[k], userOnly));
  assert.deepEqual(sent, {
    embedder: { provider: 'local', apiKeyEnv: 'MY_KEY' },
    retrieval: { topK: 9 },
    exclude: ['gen/'],
  });
  assert.deepEqual(
    ignoredWorkspaceKeys(userOnly, (k) => values[k]).sort(),
    ['ragls.embedder.apiKeyEnv', 'ragls.embedder.baseUrl', 'ragls.embedder.provider', 'ragls.qdrant.url', 'ragls.server.path', 'ragls.trustedFolders'],
  );
  // Without the user-only set (the old behaviour) the workspace would have won: the test can fail.
  const naive = serverSettings(explicitSettings(keys, (k) => values[k]));
  assert.equal((naive.qdrant as Record<string, unknown>).url, 'http://evil.example:6333');
});

test('an executable .venv/bin/ragls in the workspace is never chosen unless the user set it', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ragls-trust-'));
  try {
    const ws = path.join(tmp, 'ws');
    const marker = path.join(tmp, 'ran');
    for (const dir of ['.venv/bin', 'venv/bin']) {
      fs.mkdirSync(path.join(ws, dir), { recursive: true });
      fs.writeFileSync(path.join(ws, dir, 'ragls'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    }
    const userBin = path.join(tmp, 'user-bin');
    fs.mkdirSync(userBin);
    fs.writeFileSync(path.join(userBin, 'ragls'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const input = { workspaceFolders: [ws], platform: process.platform, home: tmp, isExecutable };
    for (const workspaceTrusted of [false, true]) {
      const r = resolveServerCommand({ ...input, workspaceTrusted, configured: '', envPath: `${userBin}:/usr/bin` });
      assert.deepEqual(r, { ok: true, command: path.join(userBin, 'ragls'), source: 'path' });
      const none = resolveServerCommand({ ...input, workspaceTrusted, configured: '', envPath: '/nonexistent' });
      assert.equal(none.ok, false, 'the workspace .venv is no fallback');
    }
    const venvRagls = path.join(ws, '.venv', 'bin', 'ragls');
    const untrusted = resolveServerCommand({ ...input, workspaceTrusted: false, configured: venvRagls, envPath: userBin });
    assert.equal(untrusted.ok, false);
    const trusted = resolveServerCommand({ ...input, workspaceTrusted: true, configured: venvRagls, envPath: userBin });
    assert.deepEqual(trusted, { ok: true, command: venvRagls, source: 'setting' }, 'the user set that exact path in a trusted workspace');
    assert.ok(!fs.existsSync(marker), 'resolving never runs anything');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
