/**
 * Lifecycle of the ragls process: locate it, start it through vscode-languageclient over
 * stdio, restart it with backoff when it dies, push setting changes, and feed the status
 * model from `$/progress`, `rag/statusChanged` and `rag/indexStatus`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as readline from 'node:readline';
import type { Readable } from 'node:stream';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  LanguageClient,
  State,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
  type ClientCapabilities,
  type CloseHandlerResult,
  type ErrorHandlerResult,
  type FeatureState,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from 'vscode-languageclient/node';
import { RestartBackoff } from './lib/backoff';
import {
  Methods,
  followsFolderChanges,
  type IndexStatus,
  type RagRequests,
  type ReindexResult,
  type RetrieveParams,
  type RetrieveResult,
  type WorkDoneProgressValue,
} from './lib/protocol';
import { INSTALL_HINT, resolveServerCommand } from './lib/serverPath';
import { explicitSettings, ignoredWorkspaceKeys, serverSettings, settingAt } from './lib/settings';
import { ServerLogClassifier } from './lib/serverLog';
import { StatusModel } from './lib/status';

const CLIENT_ID = 'ragls';

function isExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    if (process.platform === 'win32') return true;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Writes a server stream into the channel line by line, each at the level the server logged it. */
function pipeServerLog(input: Readable, channel: vscode.LogOutputChannel): void {
  const classifier = new ServerLogClassifier();
  readline
    .createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 })
    .on('line', (line) => {
      const { level, text } = classifier.classify(line);
      channel[level](text);
    });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'object' && e && 'message' in e) return String((e as { message: unknown }).message);
  return String(e);
}

/**
 * Takes over `window/workDoneProgress/create` so the server's `$/progress` drives our status
 * bar item instead of a second, generic window progress. Registered after the built-in
 * progress feature, so its handler is the one that stays (also after restarts).
 */
class ProgressTap implements StaticFeature {
  constructor(
    private readonly client: LanguageClient,
    private readonly sink: (token: string | number, value: WorkDoneProgressValue) => void,
  ) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.window = capabilities.window ?? {};
    capabilities.window.workDoneProgress = true;
  }

  initialize(): void {
    this.client.onRequest(WorkDoneProgressCreateRequest.type, (params) => {
      const token = params.token;
      const disposable = this.client.onProgress(WorkDoneProgress.type, token, (value) => {
        this.sink(token, value as WorkDoneProgressValue);
        if (value.kind === 'end') disposable.dispose();
      });
    });
  }

  getState(): FeatureState {
    return { kind: 'static' };
  }

  clear(): void {}
}

export class RaglsServer implements vscode.Disposable {
  readonly model = new StatusModel();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private client: LanguageClient | undefined;
  private readonly backoff = new RestartBackoff();
  /** Bumped on every user-driven start/stop, so a pending crash-restart can tell it is stale. */
  private generation = 0;
  private stopping = false;
  private pollTimer: ReturnType<typeof setInterval> | undefined;
  private lastStatusAt = 0;
  private readonly disposables: vscode.Disposable[] = [];
  private running: Promise<void> | undefined;
  private resolveRunning: (() => void) | undefined;
  private notFoundShown = false;

  constructor(
    private readonly log: vscode.LogOutputChannel,
    /** Every `ragls.*` key the extension contributes (from its package.json). */
    private readonly settingKeys: readonly string[],
    /** Full keys read from user settings only (package.json `restrictedConfigurations`). */
    private readonly userOnly: ReadonlySet<string>,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigChanged(e)),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.onFoldersChanged()),
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.restart()),
    );
  }

  private fire(): void {
    this.changed.fire();
  }

  private folders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  }

  private resetRunningPromise(): void {
    this.running = new Promise<void>((resolve) => (this.resolveRunning = resolve));
  }

  /** Resolves once the server answered initialize, or rejects after `timeoutMs`. */
  async whenRunning(timeoutMs = 15_000): Promise<LanguageClient> {
    if (this.client && this.client.state === State.Running) return this.client;
    if (!this.running || this.model.lifecycle === 'notFound' || this.model.lifecycle === 'stopped' || this.model.lifecycle === 'noWorkspace') {
      throw new Error(this.notRunningMessage());
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(this.notRunningMessage())), timeoutMs);
    });
    try {
      await Promise.race([this.running, timeout]);
    } finally {
      if (timer) clearTimeout(timer);
    }
    if (!this.client || this.client.state !== State.Running) throw new Error(this.notRunningMessage());
    return this.client;
  }

  private notRunningMessage(): string {
    switch (this.model.lifecycle) {
      case 'notFound':
        return 'the ragls server was not found';
      case 'noWorkspace':
        return 'no folder is open';
      case 'stopped':
        return 'the ragls server is not running';
      default:
        return 'the ragls server is not ready yet';
    }
  }

  /** What the server gets: the explicitly set `ragls.*` settings minus client-only keys. */
  settingsForServer(): Record<string, unknown> {
    const cfg = vscode.workspace.getConfiguration('ragls');
    return serverSettings(explicitSettings(this.settingKeys, (key) => cfg.inspect(key), this.userOnly));
  }

  /** A client-side user-scope-only setting (`server.path`, `server.extraEnv`). */
  private userSetting<T>(key: string): T | undefined {
    return vscode.workspace.getConfiguration('ragls').inspect<T>(key)?.globalValue;
  }

  private ignoredLogged = '';

  /** Says once per distinct set which workspace values of sensitive settings were ignored. */
  private logIgnoredWorkspaceSettings(): void {
    const cfg = vscode.workspace.getConfiguration('ragls');
    const ignored = ignoredWorkspaceKeys(this.userOnly, (key) => cfg.inspect(key)).join(', ');
    if (!ignored || ignored === this.ignoredLogged) return;
    this.ignoredLogged = ignored;
    this.log.warn(
      `Ignored workspace/folder values of ${ignored}: these settings choose what runs or where code and ` +
        'credentials go, so ragls reads them from your user settings only.',
    );
  }

  /** `retrieval.topK` / `retrieval.maxChars` if set, so commands and chat match the server. */
  retrievalSettings(): { topK?: number | null; maxChars?: number | null } {
    const s = this.settingsForServer();
    return { topK: settingAt(s, 'retrieval.topK') as number | undefined, maxChars: settingAt(s, 'retrieval.maxChars') as number | undefined };
  }

  async start(): Promise<void> {
    const generation = ++this.generation;
    const folders = this.folders();
    if (folders.length === 0) {
      this.model.setLifecycle('noWorkspace');
      this.fire();
      return;
    }
    this.logIgnoredWorkspaceSettings();
    const configured = this.userSetting<string>('server.path');
    if (configured) this.log.info(`ragls.server.path: ${configured}`);
    const resolved = resolveServerCommand({
      configured,
      workspaceFolders: folders,
      envPath: process.env.PATH,
      platform: process.platform,
      home: os.homedir(),
      isExecutable,
      workspaceTrusted: vscode.workspace.isTrusted,
    });
    if (!resolved.ok) {
      const msg = `${resolved.message} ${INSTALL_HINT}`;
      this.log.error(`${resolved.message} Tried: ${resolved.tried.join(', ')}`);
      this.model.setLifecycle('notFound', msg);
      this.fire();
      if (!this.notFoundShown) {
        this.notFoundShown = true;
        void vscode.window.showErrorMessage(msg, 'Open Settings', 'Retry', 'Show Log').then((pick) => {
          this.notFoundShown = false;
          if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'ragls.server.path');
          else if (pick === 'Retry') void this.restart();
          else if (pick === 'Show Log') this.log.show(true);
        });
      }
      return;
    }
    this.log.info(`Starting ${resolved.command} (from ${resolved.source})`);

    const extraEnv = this.userSetting<Record<string, string>>('server.extraEnv') ?? {};
    // No `transport`: TransportKind.stdio would append `--stdio`, and ragls takes no arguments.
    // Without it the client still talks LSP over the process's stdin/stdout.
    const serverOptions: ServerOptions = {
      command: resolved.command,
      args: [],
      options: { cwd: folders[0], env: { ...process.env, ...extraEnv } },
    };
    const clientOptions: LanguageClientOptions = {
      // ragls indexes files from disk and re-indexes open, unsaved buffers from these.
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.log,
      // The default writes every stderr line as an error; ragls logs at INFO most of the time.
      stdioOptions: { stdout: pipeServerLog, stderr: pipeServerLog },
      initializationOptions: () => this.settingsForServer(),
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const defaults = await next(params, token);
            if (!Array.isArray(defaults)) return defaults;
            return params.items.map((item, i) => {
              const section = item.section;
              if (section === 'ragls') return this.settingsForServer();
              if (section && section.startsWith('ragls.')) {
                return settingAt(this.settingsForServer(), section.slice('ragls.'.length)) ?? null;
              }
              return defaults[i];
            });
          },
        },
      },
      errorHandler: {
        error: (error, _message, count): ErrorHandlerResult => {
          this.log.error(`Connection error: ${errorMessage(error)}`);
          return { action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true };
        },
        closed: async (): Promise<CloseHandlerResult> => {
          if (this.stopping || generation !== this.generation) return { action: CloseAction.DoNotRestart, handled: true };
          const delay = this.backoff.crashed();
          if (delay === undefined) {
            const msg = `The ragls server exited ${this.backoff.crashCount} times in a row; it is not restarted again.`;
            this.log.error(msg);
            this.model.setLifecycle('stopped', `${msg} See the log, then run "RAG: Restart Server".`);
            this.fire();
            void vscode.window.showErrorMessage(msg, 'Show Log', 'Restart').then((pick) => {
              if (pick === 'Show Log') this.log.show(true);
              else if (pick === 'Restart') void this.restart();
            });
            return { action: CloseAction.DoNotRestart, handled: true };
          }
          const secs = Math.round(delay / 100) / 10;
          this.log.warn(`The ragls server exited; restarting in ${secs}s (attempt ${this.backoff.crashCount}).`);
          this.model.setLifecycle('restarting', `The ragls server exited; restarting in ${secs}s (attempt ${this.backoff.crashCount}).`);
          this.fire();
          await sleep(delay);
          if (this.stopping || generation !== this.generation) return { action: CloseAction.DoNotRestart, handled: true };
          return { action: CloseAction.Restart, handled: true };
        },
      },
    };

    const client = new LanguageClient(CLIENT_ID, 'ragls', serverOptions, clientOptions);
    client.registerFeature(
      new ProgressTap(client, (token, value) => {
        this.model.applyProgress(token, value);
        this.fire();
        if (value.kind === 'end') void this.refreshStatus();
      }),
    );
    client.onNotification(Methods.statusChanged, (status: IndexStatus) => {
      this.lastStatusAt = Date.now();
      this.model.applyStatus(status);
      this.fire();
    });
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Running) {
        this.backoff.started();
        this.model.setLifecycle('running');
        this.resolveRunning?.();
        this.fire();
        void this.refreshStatus();
      } else if (e.newState === State.Starting) {
        if (this.model.lifecycle !== 'restarting') this.model.setLifecycle('starting');
        this.fire();
      }
    });
    this.client = client;
    this.stopping = false;
    this.resetRunningPromise();
    this.model.setLifecycle('starting');
    this.fire();
    this.startPolling();
    try {
      await client.start();
    } catch (e) {
      if (this.client !== client) return;
      const msg = `The ragls server failed to start: ${errorMessage(e)}`;
      this.log.error(msg);
      if (this.model.lifecycle !== 'restarting') {
        this.model.setLifecycle('stopped', msg);
        this.fire();
      }
    }
  }

  /** Fallback poll: only while indexing and the server has been quiet for a while. */
  private startPolling(): void {
    if (this.pollTimer) return;
    this.pollTimer = setInterval(() => {
      const state = this.model.view().state;
      if (this.model.lifecycle !== 'running') return;
      if ((state === 'indexing' || state === 'starting') && Date.now() - this.lastStatusAt > 5000) {
        void this.refreshStatus();
      }
    }, 5000);
  }

  async refreshStatus(): Promise<IndexStatus | undefined> {
    const client = this.client;
    if (!client || client.state !== State.Running) return undefined;
    try {
      const status = await client.sendRequest<IndexStatus>(Methods.indexStatus, {});
      this.lastStatusAt = Date.now();
      this.model.applyStatus(status);
      this.fire();
      return status;
    } catch (e) {
      this.log.warn(`rag/indexStatus failed: ${errorMessage(e)}`);
      return undefined;
    }
  }

  async retrieve(params: RetrieveParams, token?: vscode.CancellationToken): Promise<RetrieveResult> {
    const client = await this.whenRunning();
    // Never pass an undefined token: the client would send the params positionally, as [params, null].
    return token
      ? client.sendRequest<RetrieveResult>(Methods.retrieve, params, token)
      : client.sendRequest<RetrieveResult>(Methods.retrieve, params);
  }

  /** Any rag/* request of the protocol (the code graph's too), once the server runs. */
  async request<M extends keyof RagRequests>(method: M, params: RagRequests[M]['params'], token?: vscode.CancellationToken): Promise<RagRequests[M]['result']> {
    const client = await this.whenRunning();
    // As retrieve: never an undefined token.
    return token
      ? client.sendRequest<RagRequests[M]['result']>(method, params, token)
      : client.sendRequest<RagRequests[M]['result']>(method, params);
  }

  async reindex(full: boolean): Promise<ReindexResult> {
    const client = await this.whenRunning(5000);
    const result = await client.sendRequest<ReindexResult>(Methods.reindex, { full });
    void this.refreshStatus();
    return result;
  }

  async stop(): Promise<void> {
    this.generation++;
    this.stopping = true;
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        if (client.state !== State.Stopped) await client.stop(3000);
      } catch (e) {
        this.log.warn(`Stopping the server: ${errorMessage(e)}`);
      }
      try {
        await client.dispose(1000);
      } catch {
        // already stopped
      }
    }
  }

  async restart(): Promise<void> {
    this.log.info('Restarting the ragls server');
    await this.stop();
    this.backoff.reset();
    await this.start();
  }

  /**
   * A folder was added to or removed from the workspace. The LanguageClient sends every folder at
   * initialize and forwards `workspace/didChangeWorkspaceFolders` itself when the server asks for
   * it (protocol 3); the server then indexes the added folder and drops the removed one without a
   * restart. An older server only knows its first folder: restart it. So does the first folder
   * opened (nothing ran) and the last one closed.
   */
  private onFoldersChanged(): void {
    const client = this.client;
    const live = client !== undefined && client.state === State.Running;
    if (live && this.folders().length > 0 && followsFolderChanges(client.initializeResult?.capabilities)) {
      this.log.info(`Workspace folders changed: ${this.folders().length} folder(s); the server follows the change`);
      return;
    }
    void this.restart();
  }

  private onConfigChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration('ragls')) return;
    if (e.affectsConfiguration('ragls.server')) {
      void this.restart();
      return;
    }
    this.logIgnoredWorkspaceSettings();
    const client = this.client;
    if (client && client.state === State.Running) {
      // The server re-pulls `workspace/configuration` (answered by the middleware above).
      void client
        .sendNotification(DidChangeConfigurationNotification.type, { settings: { ragls: this.settingsForServer() } })
        .catch((err) => this.log.warn(`didChangeConfiguration failed: ${errorMessage(err)}`));
    }
  }

  dispose(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}
