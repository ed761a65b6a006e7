/**
 * `#ragls`: the workspace index as a language-model tool, so agent mode (Copilot or any
 * other chat model) can use it on its own: `action` "search" (the default) calls
 * `rag/retrieve`, "references", "related" and "repoMap" the code graph's `rag/references`,
 * `rag/related`, `rag/repoMap`, through the running language client; the `@rag` participant
 * stays as it is.
 */
import * as vscode from 'vscode';
import { SEARCH_TOOL_NAME, toolErrorMessage, toolInvocationMessage, toolRequest, toolResultText, type ToolRequest } from './lib/searchTool';
import { isMultiRoot } from './locations';
import type { RaglsServer } from './server';

function send(server: RaglsServer, r: ToolRequest, token: vscode.CancellationToken): Promise<unknown> {
  switch (r.method) {
    case 'rag/retrieve':
      return server.request(r.method, r.params, token);
    case 'rag/references':
      return server.request(r.method, r.params, token);
    case 'rag/related':
      return server.request(r.method, r.params, token);
    case 'rag/repoMap':
      return server.request(r.method, r.params, token);
  }
}

export function registerSearchTool(context: vscode.ExtensionContext, server: RaglsServer, log: vscode.LogOutputChannel): void {
  const tool: vscode.LanguageModelTool<unknown> = {
    prepareInvocation(options) {
      return { invocationMessage: toolInvocationMessage(options.input) };
    },
    async invoke(options, token) {
      // Bad input throws here, with a message that says what to fix.
      const request = toolRequest(options.input, server.retrievalSettings());
      let result: unknown;
      try {
        result = await send(server, request, token);
      } catch (e) {
        const msg = toolErrorMessage(request, e);
        log.warn(`#ragls: ${request.method} failed: ${msg}`);
        throw new Error(msg);
      }
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(toolResultText(request, result, isMultiRoot()))]);
    },
  };
  context.subscriptions.push(vscode.lm.registerTool(SEARCH_TOOL_NAME, tool));
}
