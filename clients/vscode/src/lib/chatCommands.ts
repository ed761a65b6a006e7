/**
 * The slash commands of the `@rag` chat participant (package.json `chatParticipants`) and what
 * each asks of `rag/retrieve`. No `vscode` import.
 */
import { retrieveParams } from './format';
import type { RetrieveIntent, RetrieveParams } from './protocol';

/** `@rag`'s slash commands, as package.json declares them. */
export const CHAT_COMMANDS = ['search', 'change'] as const;

/**
 * The `rag/retrieve` intent of an `@rag` request: `/change` describes a change to make (a task,
 * a bug report, a commit message) and wants the code it will touch; a plain ask and `/search`
 * are questions.
 */
export function chatIntent(command: string | undefined): RetrieveIntent {
  return command === 'change' ? 'change' : 'question';
}

/** `rag/retrieve` params of an `@rag` request: `/change` adds `intent: "change"`, a question sends none. */
export function chatRetrieveParams(
  command: string | undefined,
  prompt: string,
  retrieval: { topK?: number | null; maxChars?: number | null } | undefined,
): RetrieveParams {
  return retrieveParams(prompt, retrieval, chatIntent(command));
}

/** What `@rag` answers to an empty prompt. */
export function emptyPromptHint(command: string | undefined): string {
  if (command === 'change') {
    return 'Describe the change to make (a task, a bug report, a commit message), e.g. `@rag /change retry the upload when the connection times out`: the answer starts from the code it will touch.';
  }
  return 'Ask a question about this workspace, e.g. `@rag where is the invoice total computed?`';
}
