/**
 * `#ragls`: the workspace index as a language-model tool, so agent mode (Copilot or any
 * other chat model) can search it on its own. Calls `rag/retrieve` through the running
 * language client; the `@rag` participant stays as it is.
 */
import * as vscode from 'vscode';
import { SEARCH_TOOL_NAME, searchToolParams, searchToolText } from './lib/searchTool';
import type { RaglsServer } from './server';

export function registerSearchTool(context: vscode.ExtensionContext, server: RaglsServer, log: vscode.LogOutputChannel): void {
  const tool: vscode.LanguageModelTool<unknown> = {
    prepareInvocation(options) {
      const q = (options.input as { query?: unknown } | undefined)?.query;
      return { invocationMessage: `Searching the workspace index for "${typeof q === 'string' ? q.slice(0, 80) : ''}"` };
    },
    async invoke(options, token) {
      const params = searchToolParams(options.input, server.retrievalSettings());
      try {
        const result = await server.retrieve(params, token);
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(searchToolText(result, params))]);
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        log.warn(`#ragls: retrieval failed: ${msg}`);
        throw new Error(`ragls could not search the workspace index: ${msg}`);
      }
    },
  };
  context.subscriptions.push(vscode.lm.registerTool(SEARCH_TOOL_NAME, tool));
}
