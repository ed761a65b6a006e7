/** The `RAG: ...` commands and the status menu. */
import * as vscode from 'vscode';
import { copiedSummary, degradedNote, hitLabel, retrievalFailure, retrieveParams } from './lib/format';
import type { Chunk } from './lib/protocol';
import { statusDetails } from './lib/status';
import { chunkLocation, isMultiRoot } from './locations';
import type { RaglsServer } from './server';

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function askQuery(title: string): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection).slice(0, 500) : '';
  const q = await vscode.window.showInputBox({
    title,
    prompt: 'A question or an identifier; ragls returns the workspace chunks that match best.',
    placeHolder: 'e.g. where is the invoice total computed?',
    value: selected,
    ignoreFocusOut: true,
  });
  return q && q.trim() ? q.trim() : undefined;
}

async function openChunk(chunk: Chunk): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(chunk.uri));
  const loc = chunkLocation(chunk, (line) => (line < doc.lineCount ? doc.lineAt(line).text.length : 0));
  await vscode.window.showTextDocument(doc, { selection: doc.validateRange(loc.range), preview: true });
}

export function registerCommands(context: vscode.ExtensionContext, server: RaglsServer, log: vscode.LogOutputChannel): void {
  const reg = (id: string, fn: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));

  reg('ragls.search', async (arg?: unknown) => {
    const query = typeof arg === 'string' ? arg : await askQuery('RAG: Search Workspace');
    if (!query) return;
    try {
      const res = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'ragls: searching' },
        () => server.retrieve(retrieveParams(query, server.retrievalSettings())),
      );
      const problem = retrievalFailure(res) ?? degradedNote(res);
      if (problem) void vscode.window.showWarningMessage(`ragls: ${problem}`);
      if (!res.chunks.length) {
        void vscode.window.showInformationMessage(`ragls: nothing in the index matches "${query}".`);
        return;
      }
      type Item = vscode.QuickPickItem & { chunk: Chunk };
      const multiRoot = isMultiRoot();
      const items: Item[] = res.chunks.map((chunk) => ({ ...hitLabel(chunk, multiRoot), chunk }));
      const pick = await vscode.window.showQuickPick(items, {
        title: `ragls: ${res.chunks.length} hits for "${query}" (${Math.round(res.tookMs)} ms)`,
        matchOnDescription: true,
        matchOnDetail: true,
      });
      if (pick) await openChunk(pick.chunk);
    } catch (e) {
      void vscode.window.showErrorMessage(`ragls: search failed: ${errorMessage(e)}`);
    }
  });

  reg('ragls.copyContext', async (arg?: unknown) => {
    const query = typeof arg === 'string' ? arg : await askQuery('RAG: Copy Context for Query');
    if (!query) return;
    try {
      const res = await server.retrieve(retrieveParams(query, server.retrievalSettings()));
      const failure = retrievalFailure(res);
      if (failure) {
        void vscode.window.showWarningMessage(`ragls: ${failure}`);
        return;
      }
      const degraded = degradedNote(res);
      if (degraded) void vscode.window.showWarningMessage(`ragls: ${degraded}`);
      if (!res.context) {
        const why = res.chunks.length
          ? `${res.chunks.length} chunks matched, but not even the best fits in ragls.retrieval.maxChars.`
          : 'nothing in the index matches.';
        void vscode.window.showWarningMessage(`ragls: no context copied: ${why}`);
        return;
      }
      await vscode.env.clipboard.writeText(res.context);
      void vscode.window.showInformationMessage(`ragls: ${copiedSummary(res.context, res.chunks)}`);
    } catch (e) {
      void vscode.window.showErrorMessage(`ragls: ${errorMessage(e)}`);
    }
  });

  const reindex = async (full: boolean) => {
    try {
      const res = await server.reindex(full);
      void vscode.window.showInformationMessage(
        res.started
          ? `ragls: ${full ? 'rebuilding the index' : 'reindexing'}.`
          : 'ragls: an index run is in progress; it will run again when it ends.',
      );
    } catch (e) {
      void vscode.window.showErrorMessage(`ragls: reindex failed: ${errorMessage(e)}`);
    }
  };
  reg('ragls.reindex', () => reindex(false));
  reg('ragls.reindexFull', async () => {
    const ok = await vscode.window.showWarningMessage(
      'Drop the index of this workspace and build it again?',
      { modal: true },
      'Rebuild',
    );
    if (ok === 'Rebuild') await reindex(true);
  });
  reg('ragls.restart', () => server.restart());
  reg('ragls.showLog', () => log.show(true));
  reg('ragls.openSettings', () => vscode.commands.executeCommand('workbench.action.openSettings', '@ext:ragls.ragls-vscode'));

  reg('ragls.showIndexStatus', async () => {
    await server.refreshStatus();
    const view = server.model.view();
    type Item = vscode.QuickPickItem & { run?: () => unknown };
    const items: Item[] = [];
    items.push({ label: 'Status', kind: vscode.QuickPickItemKind.Separator });
    const details = server.model.status ? [...view.details] : view.details;
    for (const line of details.length ? details : statusDetails(server.model.status)) {
      items.push({ label: `$(info) ${line}` });
    }
    items.push({ label: 'Actions', kind: vscode.QuickPickItemKind.Separator });
    items.push({ label: '$(refresh) Reindex', description: 'rescan and index changed files', run: () => reindex(false) });
    items.push({ label: '$(trash) Rebuild index', description: 'drop and rebuild', run: () => vscode.commands.executeCommand('ragls.reindexFull') });
    items.push({ label: '$(search) Search workspace', run: () => vscode.commands.executeCommand('ragls.search') });
    items.push({ label: '$(output) Show log', run: () => log.show(true) });
    items.push({ label: '$(gear) Open settings', run: () => vscode.commands.executeCommand('ragls.openSettings') });
    items.push({ label: '$(debug-restart) Restart server', run: () => server.restart() });
    const pick = await vscode.window.showQuickPick(items, { title: `ragls: ${view.text.replace(/\$\([^)]*\)\s*/g, '')}` });
    if (pick?.run) await pick.run();
  });
}
