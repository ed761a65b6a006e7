/**
 * Ratings of `@rag` answers: the chat's own thumbs (the participant's `onDidReceiveFeedback`) and
 * "RAG: This is the code I meant" on an editor selection. Both send `rag/feedback` to the running
 * server; the rules are in lib/feedback.ts.
 */
import * as vscode from 'vscode';
import { addMarks, Answers, feedbackParams, feedbackSummary, markRating, ratingOfKind, selectionLines, type Answer, type Rating } from './lib/feedback';
import type { RaglsServer } from './server';

/** The `@rag` answers that can be rated (those whose result carried a resultId). */
export const answers = new Answers();

/** Context key: an `@rag` answer can be marked (the editor's context menu shows the command). */
const CAN_MARK = 'ragls.canMark';

export function rememberAnswer(answer: Answer | undefined): void {
  if (!answer) return;
  answers.remember(answer);
  void vscode.commands.executeCommand('setContext', CAN_MARK, true);
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function send(server: RaglsServer, log: vscode.LogOutputChannel, answer: Answer, rating: Rating): Promise<string> {
  const params = feedbackParams(answer, rating);
  try {
    const res = await server.request('rag/feedback', params);
    const line = feedbackSummary(rating, params.relevant?.length ?? 0, res);
    log.info(`rag/feedback ${answer.resultId}: ${line}`);
    return line;
  } catch (e) {
    const line = `rating not sent: ${errorMessage(e)}`;
    log.warn(`rag/feedback ${answer.resultId}: ${line}`);
    throw new Error(line);
  }
}

export function registerFeedback(
  context: vscode.ExtensionContext,
  participant: vscode.ChatParticipant,
  server: RaglsServer,
  log: vscode.LogOutputChannel,
): void {
  // The chat's thumbs: the result's metadata names the answer.
  context.subscriptions.push(
    participant.onDidReceiveFeedback(async (feedback) => {
      const id = (feedback.result.metadata as { resultId?: unknown } | undefined)?.resultId;
      if (typeof id !== 'string' || !id) return; // no context, or rating off: nothing to rate
      const rating = ratingOfKind(feedback.kind);
      const answer = answers.get(id) ?? { resultId: id, chunks: [], marks: [] };
      answer.rating = rating;
      try {
        await send(server, log, answer, rating);
      } catch (e) {
        void vscode.window.showWarningMessage(`ragls: ${errorMessage(e)}`);
      }
    }),
  );

  context.subscriptions.push(
    vscode.commands.registerCommand('ragls.markRelevant', async () => {
      const editor = vscode.window.activeTextEditor;
      const answer = answers.last();
      if (!answer) {
        void vscode.window.showWarningMessage('ragls: ask @rag first; then select the code it should have found and run this again.');
        return;
      }
      if (!editor || editor.document.uri.scheme !== 'file') {
        void vscode.window.showWarningMessage('ragls: select the code you meant in a file of the workspace.');
        return;
      }
      const uri = editor.document.uri;
      const lines = selectionLines(editor.selections);
      addMarks(answer, lines.map((line) => ({ path: uri.fsPath, line })));
      const rating = markRating(answer, answer.marks.map((m) => ({ uri: vscode.Uri.file(m.path).toString(), line: m.line })));
      try {
        const line = await send(server, log, answer, rating);
        void vscode.window.showInformationMessage(`ragls: ${vscode.workspace.asRelativePath(uri)}:${lines.join(',')} marked; ${line}`);
      } catch (e) {
        void vscode.window.showWarningMessage(`ragls: ${errorMessage(e)}`);
      }
    }),
  );
}
