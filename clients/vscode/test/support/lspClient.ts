/**
 * A minimal LSP client over vscode-jsonrpc that drives the real ragls process the way
 * the extension does: declares workDoneProgress, answers workspace/configuration.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ProgressType,
  createMessageConnection,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import type { IndexStatus, WorkDoneProgressValue } from '../../src/lib/protocol';

export interface ProgressEvent {
  token: string | number;
  value: WorkDoneProgressValue;
  at: number;
}

export class RaglsTestClient {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly conn: MessageConnection;
  readonly progress: ProgressEvent[] = [];
  readonly statusChanged: IndexStatus[] = [];
  readonly configurationRequests: unknown[] = [];
  readonly logs: string[] = [];
  stderr = '';
  exited: Promise<number | null>;
  settings: Record<string, unknown> = {};

  constructor(command: string, readonly workspace: string, env: NodeJS.ProcessEnv) {
    this.proc = spawn(command, [], { cwd: workspace, env, stdio: 'pipe' });
    this.proc.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      if (this.stderr.length > 200_000) this.stderr = this.stderr.slice(-100_000);
    });
    this.exited = new Promise((resolve) => this.proc.on('exit', (code) => resolve(code)));
    this.conn = createMessageConnection(new StreamMessageReader(this.proc.stdout), new StreamMessageWriter(this.proc.stdin));
    const progressType = new ProgressType<WorkDoneProgressValue>();
    this.conn.onRequest('window/workDoneProgress/create', (params: { token: string | number }) => {
      this.conn.onProgress(progressType, params.token, (value) => {
        this.progress.push({ token: params.token, value, at: Date.now() });
      });
      return null;
    });
    this.conn.onRequest('workspace/configuration', (params: { items: { section?: string }[] }) => {
      this.configurationRequests.push(params);
      return params.items.map((item) => (item.section === 'ragls' || !item.section ? this.settings : null));
    });
    this.conn.onRequest('client/registerCapability', () => null);
    this.conn.onRequest('client/unregisterCapability', () => null);
    this.conn.onRequest('window/showMessageRequest', () => null);
    this.conn.onNotification('rag/statusChanged', (st: IndexStatus) => {
      this.statusChanged.push(st);
    });
    this.conn.onNotification('window/logMessage', (p: { message: string }) => {
      this.logs.push(p.message);
    });
    this.conn.onNotification('window/showMessage', (p: { message: string }) => {
      this.logs.push(p.message);
    });
    this.conn.listen();
  }

  async initialize(initializationOptions: Record<string, unknown> = {}): Promise<{ capabilities: Record<string, unknown>; serverInfo?: { name: string; version?: string } }> {
    const uri = pathToFileURL(this.workspace).href;
    const result = await this.conn.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'ragls-vscode-tests' },
      rootUri: uri,
      rootPath: this.workspace,
      workspaceFolders: [{ uri, name: path.basename(this.workspace) }],
      capabilities: {
        window: { workDoneProgress: true },
        workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true }, workspaceFolders: true },
      },
      initializationOptions,
    });
    await this.conn.sendNotification('initialized', {});
    return result as { capabilities: Record<string, unknown> };
  }

  indexStatus(): Promise<IndexStatus> {
    return this.conn.sendRequest('rag/indexStatus', {});
  }

  async waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number, everyMs = 300): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\nstderr tail:\n${this.stderr.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  async shutdown(timeoutMs = 15_000): Promise<number | null> {
    try {
      await Promise.race([this.conn.sendRequest('shutdown'), new Promise((r) => setTimeout(r, timeoutMs))]);
      await this.conn.sendNotification('exit');
    } catch {
      // the process may already be gone
    }
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), timeoutMs);
    const code = await this.exited;
    clearTimeout(timer);
    this.conn.dispose();
    return code;
  }
}
