/**
 * ragls for VS Code. The extension stays thin: the ragls server indexes and retrieves;
 * this starts it, shows its state and puts its context in front of chat messages.
 */
import * as vscode from 'vscode';
import { registerChat } from './chat';
import { registerCommands } from './commands';
import { userScopeOnlyKeys } from './lib/settings';
import { registerSearchTool } from './searchTool';
import { RaglsServer } from './server';
import { StatusBar } from './statusBar';

let server: RaglsServer | undefined;

export interface RaglsApi {
  /** For tests and other extensions: the current status bar state. */
  state(): string;
}

export async function activate(context: vscode.ExtensionContext): Promise<RaglsApi> {
  const log = vscode.window.createOutputChannel('ragls', { log: true });
  context.subscriptions.push(log);
  const properties = (context.extension.packageJSON?.contributes?.configuration?.properties ?? {}) as Record<string, unknown>;
  const s = new RaglsServer(log, Object.keys(properties), new Set(userScopeOnlyKeys(context.extension.packageJSON)));
  server = s;
  context.subscriptions.push(s, new StatusBar(s));
  registerCommands(context, s, log);
  registerChat(context, s, log);
  registerSearchTool(context, s, log);
  void s.start();
  return { state: () => s.model.view().state };
}

export async function deactivate(): Promise<void> {
  const s = server;
  server = undefined;
  if (s) await s.stop();
}
