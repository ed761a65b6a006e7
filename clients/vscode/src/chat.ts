/**
 * The `@rag` chat participant: retrieve workspace context for the prompt, put the
 * `<rag_context>` block in front of it, and stream the answer of the chosen model.
 * `/search` lists the hits without a model; `/change` answers the same way as a plain ask but
 * retrieves with intent "change" (the prompt describes a change to make).
 * Each answer's `resultId` goes in its result's metadata: the chat's thumbs rate it (feedback.ts).
 */
import * as vscode from 'vscode';
import { chatIntent, chatRetrieveParams, emptyPromptHint } from './lib/chatCommands';
import { chunksInContext } from './lib/contextBlocks';
import { chunkPath, degradedNote, escapeMarkdown, prependContext, retrievalFailure, searchResultLines } from './lib/format';
import type { Chunk, RetrieveResult } from './lib/protocol';
import { rememberAnswer, registerFeedback } from './feedback';
import { answerOf } from './lib/feedback';
import { chunkLocation, isMultiRoot } from './locations';
import type { RaglsServer } from './server';

export const PARTICIPANT_ID = 'ragls.rag';

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function uniqueLocations(chunks: Chunk[]): vscode.Location[] {
  const seen = new Set<string>();
  const out: vscode.Location[] = [];
  for (const c of chunks) {
    const key = `${c.uri}#${c.range.start.line}-${c.range.end.line}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(chunkLocation(c));
  }
  return out;
}

/**
 * What the model saw, in the order it saw it: the reference list (exact line ranges) and one
 * line of links named by symbol (the stable API gives references no label of their own).
 */
/** The context line of an answer, as it comes back in the history's markdown parts. */
const CONTEXT_LINE = /^Context \(\d+\):[^\n]*\n\n/;

/**
 * What the model saw, in the order it saw it: the reference list (exact line ranges) and one
 * line naming each chunk's symbol next to a link to its lines. The stable API shows neither a
 * reference's nor an anchor's title, so the symbol goes in the markdown.
 */
function streamContextReferences(stream: vscode.ChatResponseStream, chunks: Chunk[], multiRoot: boolean): void {
  if (!chunks.length) return;
  for (const loc of uniqueLocations(chunks)) stream.reference(loc);
  stream.markdown(`Context (${chunks.length}):`);
  chunks.forEach((c, i) => {
    // The anchor shows the file's base name; in a multi-root workspace the folder and directory
    // go in front of it, so the line reads `api/billing/invoice.py:22-25`.
    const dir = multiRoot ? folderPrefix(c) : '';
    stream.markdown(`${i ? ' ·' : ''} ${c.symbol ? `\`${c.symbol.replace(/`/g, "'")}\` ` : ''}${dir ? escapeMarkdown(dir) : ''}`);
    stream.anchor(chunkLocation(c));
  });
  stream.markdown('\n\n');
}

/** `api/billing/` for `billing/invoice.py` in folder `api`; '' without a folder. */
function folderPrefix(c: Chunk): string {
  const full = chunkPath(c, true);
  if (full === c.path) return '';
  return full.slice(0, full.lastIndexOf('/') + 1);
}

function historyMessages(context: vscode.ChatContext): vscode.LanguageModelChatMessage[] {
  const out: vscode.LanguageModelChatMessage[] = [];
  for (const turn of context.history) {
    if (turn.participant !== PARTICIPANT_ID) continue;
    if (turn instanceof vscode.ChatRequestTurn) {
      out.push(vscode.LanguageModelChatMessage.User(turn.prompt));
    } else if (turn instanceof vscode.ChatResponseTurn) {
      const text = turn.response
        .map((part) => (part instanceof vscode.ChatResponseMarkdownPart ? part.value.value : ''))
        .join('')
        // The anchors of the context line are not markdown; drop the separators they leave.
        .replace(CONTEXT_LINE, '');
      if (text.trim()) out.push(vscode.LanguageModelChatMessage.Assistant(text));
    }
  }
  return out;
}

export function registerChat(context: vscode.ExtensionContext, server: RaglsServer, log: vscode.LogOutputChannel): void {
  const handler: vscode.ChatRequestHandler = async (request, chatContext, stream, token) => {
    const cfg = vscode.workspace.getConfiguration('ragls');
    const prompt = request.prompt.trim();
    if (!prompt) {
      stream.markdown(emptyPromptHint(request.command));
      return {};
    }
    // `/change`: the prompt describes a change to make; the server ranks the code it will touch.
    const change = chatIntent(request.command) === 'change';

    let result: RetrieveResult | undefined;
    let failure: string | undefined;
    stream.progress(change ? 'Retrieving the code this change touches with ragls...' : 'Retrieving workspace context with ragls...');
    try {
      result = await server.retrieve(chatRetrieveParams(request.command, prompt, server.retrievalSettings()), token);
      failure = retrievalFailure(result);
    } catch (e) {
      failure = errorMessage(e);
    }
    if (failure) log.warn(`@rag: retrieval failed: ${failure}`);
    const chunks = result?.chunks ?? [];
    // The answer to rate (thumbs) and mark ("RAG: This is the code I meant"); null: rating off.
    const resultId = failure ? null : (result?.resultId ?? null);
    if (resultId) rememberAnswer(answerOf(result));
    const degraded = degradedNote(result);
    if (degraded) log.warn(`@rag: ${degraded}`);

    if (request.command === 'search') {
      if (failure) {
        stream.markdown(`ragls could not search: ${failure}`);
        return { metadata: { command: 'search', error: failure, resultId: null } };
      }
      if (!chunks.length) {
        stream.markdown('No chunk of the index matches.');
        return { metadata: { command: 'search', hits: 0, resultId } };
      }
      for (const loc of uniqueLocations(chunks)) stream.reference(loc);
      stream.markdown(`**${chunks.length} hits** (${Math.round(result?.tookMs ?? 0)} ms)\n\n${searchResultLines(chunks, isMultiRoot()).join('\n')}\n`);
      if (degraded) stream.markdown(`\n*⚠ ragls: ${escapeMarkdown(degraded)}*\n`);
      return { metadata: { command: 'search', hits: chunks.length, resultId } };
    }

    if (failure) {
      stream.markdown(`*ragls: no workspace context (${failure}); answering without it.*\n\n`);
    } else if (cfg.get<boolean>('chat.showReferences', true)) {
      streamContextReferences(stream, chunksInContext(result?.context, chunks), isMultiRoot());
    }
    // A short line under the references: the answer rests on a partial search.
    if (degraded) stream.markdown(`*⚠ ragls: ${escapeMarkdown(degraded)}*\n\n`);

    const text = prependContext(failure ? '' : result?.context, prompt);
    const messages = cfg.get<boolean>('chat.includeHistory', true) ? historyMessages(chatContext) : [];
    messages.push(vscode.LanguageModelChatMessage.User(text));
    try {
      const response = await request.model.sendRequest(
        messages,
        { justification: change ? 'Plan the change with the workspace code that ragls retrieved.' : 'Answer the question with the workspace code that ragls retrieved.' },
        token,
      );
      for await (const fragment of response.text) {
        stream.markdown(fragment);
      }
    } catch (e) {
      if (e instanceof vscode.LanguageModelError) {
        log.warn(`@rag: model error ${e.code}: ${e.message}`);
        stream.markdown(`The language model failed: ${e.message}`);
      } else {
        throw e;
      }
    }
    return {
      metadata: {
        ...(change ? { command: 'change' } : {}),
        chunks: chunks.length,
        contextChars: failure ? 0 : (result?.context.length ?? 0),
        degraded: degraded ?? null,
        resultId,
      },
    };
  };

  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, handler);
  participant.iconPath = new vscode.ThemeIcon('database');
  context.subscriptions.push(participant);
  registerFeedback(context, participant, server, log);
}
