/** Paths and environment shared by the test tiers. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** clients/vscode (compiled files live in out/test/support). */
export const PACKAGE_ROOT = path.resolve(__dirname, '..', '..', '..');
export const REPO_ROOT = path.resolve(PACKAGE_ROOT, '..', '..');
export const FIXTURE = path.join(REPO_ROOT, 'tests', 'fixtures', 'polyglot');
export const ARTIFACTS = path.join(REPO_ROOT, '.artifacts', 'vscode');
export const IS_CI = process.env.CI === 'true';

export function serverPath(): string {
  return process.env.RAGLS_SERVER || path.join(REPO_ROOT, '.venv', 'bin', 'ragls');
}

export function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Copy the fixture workspace (with its .gitignore, .env, build/, node_modules/) to a temp dir. */
export function copyFixture(prefix = 'ragls-fixture-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const ws = path.join(dir, 'polyglot');
  fs.cpSync(FIXTURE, ws, { recursive: true });
  return ws;
}

/** Environment for a server under test: caches in a temp dir, never the user's. */
export function serverEnv(cacheRoot: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    XDG_CACHE_HOME: path.join(cacheRoot, 'xdg-cache'),
    RAGLS_CACHE_DIR: path.join(cacheRoot, 'ragls-cache'),
  };
}

export const QUERY = 'calculate the invoice total including tax';
export const EXPECTED_PATH = 'billing/invoice.py';
export const EXPECTED_SYMBOL = 'Invoice.compute_total';
