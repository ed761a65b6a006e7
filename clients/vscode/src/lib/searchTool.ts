/**
 * The `ragls_search` language-model tool (`#ragls` in chat): its input, as a model sends it,
 * to `rag/retrieve` params, and the result to the text the model reads. No `vscode` import.
 */
import { degradedNote, retrievalFailure, retrieveParams } from './format';
import type { RetrieveIntent, RetrieveParams, RetrieveResult } from './protocol';

export const SEARCH_TOOL_NAME = 'ragls_search';

/** What the tool's `inputSchema` (package.json) allows. */
export interface SearchToolInput {
  query: string;
  topK?: number;
  paths?: string[];
  languages?: string[];
  folders?: string[];
  intent?: RetrieveIntent;
}

const MAX_LIST = 50;

function stringList(v: unknown, what: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new Error(`${what} must be a list of strings`);
  const list = (v as string[]).map((x) => x.trim()).filter(Boolean);
  if (list.length > MAX_LIST) throw new Error(`${what} holds at most ${MAX_LIST} entries`);
  return list.length ? list : undefined;
}

/**
 * `rag/retrieve` params for a tool call. Throws an Error whose message tells the model what to
 * fix (VS Code hands a tool's error back to the model).
 */
export function searchToolParams(
  input: unknown,
  settings: { topK?: number | null; maxChars?: number | null } | undefined,
): RetrieveParams {
  const i = (input ?? {}) as Record<string, unknown>;
  if (typeof i.query !== 'string' || !i.query.trim()) throw new Error('query must be a non-empty string: a question or an identifier');
  if (i.intent !== undefined && i.intent !== null && i.intent !== 'question' && i.intent !== 'change') {
    throw new Error('intent must be "question" or "change"');
  }
  const params = retrieveParams(i.query, settings, i.intent === 'change' ? 'change' : undefined);
  if (i.topK !== undefined && i.topK !== null) {
    if (typeof i.topK !== 'number' || !Number.isInteger(i.topK) || i.topK < 1 || i.topK > 100) throw new Error('topK must be an integer from 1 to 100');
    params.topK = i.topK;
  }
  const paths = stringList(i.paths, 'paths');
  if (paths) params.paths = paths;
  const languages = stringList(i.languages, 'languages');
  if (languages) params.languages = languages.map((l) => l.toLowerCase());
  const folders = stringList(i.folders, 'folders');
  if (folders) params.folders = folders;
  return params;
}

/** The text the model reads: the `<rag_context>` block, or why there is none. */
export function searchToolText(result: RetrieveResult, params: RetrieveParams): string {
  const failure = retrievalFailure(result);
  if (failure) return `ragls could not search the index: ${failure}`;
  const degraded = degradedNote(result);
  if (result.context) return degraded ? `${result.context}\n\n(${degraded})` : result.context;
  const filters = [
    params.paths?.length ? `paths ${params.paths.join(', ')}` : '',
    params.languages?.length ? `languages ${params.languages.join(', ')}` : '',
    params.folders?.length ? `folders ${params.folders.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  if (result.chunks.length) {
    return `${result.chunks.length} chunks matched, but not even the best fits in the context budget (ragls.retrieval.maxChars).`;
  }
  return `No indexed code matches "${params.query}"${filters ? ` within ${filters}` : ''}. Try other words, an identifier, or fewer filters.`;
}
