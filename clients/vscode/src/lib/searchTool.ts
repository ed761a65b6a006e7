/**
 * The `ragls_search` language-model tool (`#ragls` in chat): its input, as a model sends it,
 * to the params of `rag/retrieve` (action "search", the default) or of the code graph's
 * `rag/references`, `rag/related`, `rag/repoMap` (protocol 5), and each result to the text
 * the model reads. No `vscode` import.
 */
import { degradedNote, retrievalFailure, retrieveParams, toQuery } from './format';
import type {
  Location,
  RagRequests,
  ReferencesParams,
  ReferencesResult,
  Related,
  RelatedParams,
  RelatedResult,
  RepoMapParams,
  RepoMapResult,
  RetrieveIntent,
  RetrieveParams,
  RetrieveResult,
} from './protocol';

export const SEARCH_TOOL_NAME = 'ragls_search';

/** What the tool's `inputSchema` (package.json) allows. */
export interface SearchToolInput {
  action?: ToolAction;
  query?: string;
  topK?: number;
  paths?: string[];
  languages?: string[];
  folders?: string[];
  intent?: RetrieveIntent;
  symbol?: string;
  path?: string;
  limit?: number;
  maxTokens?: number;
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

// -- the code graph (protocol 5): action "references", "related", "repoMap" ----------------------

/**
 * The tool's actions, "search" first (the default): the rag/* request each makes and the input
 * fields it passes on, each under the same name as the param (protocolSchema.test.ts checks
 * the inputSchema of package.json against these params of the server's schema).
 */
export const TOOL_ACTIONS = {
  search: { method: 'rag/retrieve', fields: ['query', 'topK', 'paths', 'languages', 'folders', 'intent'] },
  references: { method: 'rag/references', fields: ['symbol', 'path', 'limit'] },
  related: { method: 'rag/related', fields: ['symbol', 'path', 'limit'] },
  repoMap: { method: 'rag/repoMap', fields: ['query', 'maxTokens'] },
} as const satisfies Record<string, { method: keyof RagRequests; fields: readonly string[] }>;

export type ToolAction = keyof typeof TOOL_ACTIONS;
export const TOOL_ACTION_NAMES = Object.keys(TOOL_ACTIONS) as ToolAction[];

/** The bounds the inputSchema declares (within the server's: rag/related takes `limit` up to 500). */
export const SYMBOL_MAX_CHARS = 500;
export const PATH_MAX_CHARS = 4000;
export const LIMIT_MAX = 500;
export const MAX_TOKENS_MIN = 64;
export const MAX_TOKENS_MAX = 32_000;

/** One tool call, as the request it makes. */
export type ToolRequest =
  | { action: 'search'; method: 'rag/retrieve'; params: RetrieveParams }
  | { action: 'references'; method: 'rag/references'; params: ReferencesParams }
  | { action: 'related'; method: 'rag/related'; params: RelatedParams }
  | { action: 'repoMap'; method: 'rag/repoMap'; params: RepoMapParams };

function optionalString(v: unknown, what: string, max: number): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new Error(`${what} must be a string`);
  const t = v.trim();
  if (t.length > max) throw new Error(`${what} holds at most ${max} characters`);
  return t || undefined;
}

function optionalInt(v: unknown, what: string, min: number, max: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new Error(`${what} must be an integer from ${min} to ${max}`);
  return v;
}

/** The action of a tool input: "search" when it names none. */
export function toolAction(input: unknown): ToolAction {
  const a = ((input ?? {}) as Record<string, unknown>).action;
  if (a === undefined || a === null || a === '') return 'search';
  if (typeof a === 'string' && (TOOL_ACTION_NAMES as string[]).includes(a)) return a as ToolAction;
  throw new Error(`action must be one of ${TOOL_ACTION_NAMES.map((n) => `"${n}"`).join(', ')} (default "search")`);
}

/**
 * The request of a tool call. Throws an Error whose message tells the model what to fix (VS Code
 * hands a tool's error back to the model). Fields another action takes are ignored.
 */
export function toolRequest(
  input: unknown,
  settings: { topK?: number | null; maxChars?: number | null } | undefined,
): ToolRequest {
  const action = toolAction(input);
  const i = (input ?? {}) as Record<string, unknown>;
  switch (action) {
    case 'search':
      if ((i.query === undefined || i.query === null) && (i.symbol !== undefined || i.path !== undefined)) {
        throw new Error('query must be a non-empty string for action "search"; for the uses or neighbours of a name, set action "references" or "related" with symbol');
      }
      return { action, method: TOOL_ACTIONS.search.method, params: searchToolParams(input, settings) };
    case 'references': {
      const symbol = optionalString(i.symbol, 'symbol', SYMBOL_MAX_CHARS);
      if (!symbol) throw new Error('action "references" needs symbol: a definition\'s name, bare or qualified (e.g. "total" or "Invoice.total")');
      const params: ReferencesParams = { symbol };
      const path = optionalString(i.path, 'path', PATH_MAX_CHARS);
      if (path) params.path = path;
      const limit = optionalInt(i.limit, 'limit', 1, LIMIT_MAX);
      if (limit !== undefined) params.limit = limit;
      return { action, method: TOOL_ACTIONS.references.method, params };
    }
    case 'related': {
      const params: RelatedParams = {};
      const symbol = optionalString(i.symbol, 'symbol', SYMBOL_MAX_CHARS);
      if (symbol) params.symbol = symbol;
      const path = optionalString(i.path, 'path', PATH_MAX_CHARS);
      if (path) params.path = path;
      if (!symbol && !path) throw new Error('action "related" needs symbol (a definition\'s name) and/or path (a workspace file)');
      const limit = optionalInt(i.limit, 'limit', 1, LIMIT_MAX);
      if (limit !== undefined) params.limit = limit;
      return { action, method: TOOL_ACTIONS.related.method, params };
    }
    case 'repoMap': {
      const params: RepoMapParams = {};
      if (i.query !== undefined && i.query !== null) {
        if (typeof i.query !== 'string') throw new Error('query must be a string');
        const q = toQuery(i.query);
        if (q) params.query = q;
      }
      const maxTokens = optionalInt(i.maxTokens, 'maxTokens', MAX_TOKENS_MIN, MAX_TOKENS_MAX);
      if (maxTokens !== undefined) params.maxTokens = maxTokens;
      return { action, method: TOOL_ACTIONS.repoMap.method, params };
    }
  }
}

/**
 * A place as the model reads it: `folder/path:line` in a workspace of 2+ folders when the server
 * names the folder, the folder-relative `path:line` otherwise (as `<rag_context>` writes files).
 */
function place(item: { path: string; line: number; folder?: string | null }, multiRoot: boolean): string {
  return `${multiRoot && item.folder ? `${item.folder}/${item.path}` : item.path}:${item.line}`;
}

/** `path:line symbol (kind)`; a use at a file's top level has no symbol. */
export function locationLine(loc: Location, multiRoot = false): string {
  return `${place(loc, multiRoot)}${loc.symbol ? ` ${loc.symbol}` : ''} (${loc.kind})`;
}

/** `path:line symbol`. */
export function relatedLine(item: Related, multiRoot = false): string {
  return `${place(item, multiRoot)}${item.symbol ? ` ${item.symbol}` : ''}`;
}

function warningsText(warnings: string[] | undefined): string {
  const w = (warnings ?? []).filter((x) => typeof x === 'string' && x.trim());
  return w.length ? `\n\nWarnings from ragls (the answer may be incomplete):\n${w.map((x) => `- ${x}`).join('\n')}` : '';
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** `rag/references` as text: one `path:line symbol (kind)` line per use, by path and line. */
export function referencesText(result: ReferencesResult, params: ReferencesParams, multiRoot = false): string {
  const where = params.path ? ` defined in ${params.path}` : '';
  const locations = result.locations ?? [];
  if (result.error && !locations.length) return `ragls could not find the references of "${params.symbol}": ${result.error}${warningsText(result.warnings)}`;
  if (!locations.length) {
    return `No uses of "${params.symbol}"${where} found in the index. Check the name (e.g. "total" or "Invoice.total"), or search for it.${warningsText(result.warnings)}`;
  }
  const kinds = (['call', 'reference', 'import'] as const)
    .map((k) => [k, locations.filter((l) => l.kind === k).length] as const)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => plural(n, k));
  const head = `${plural(locations.length, 'use')} of "${params.symbol}"${where} (${kinds.join(', ')}), as path:line, the definition holding the use, (kind):`;
  return `${head}\n${locations.map((l) => locationLine(l, multiRoot)).join('\n')}${warningsText(result.warnings)}`;
}

const RELATED_SECTIONS: readonly [keyof Omit<RelatedResult, 'warnings' | 'error'>, string][] = [
  ['definition', 'Definition (best first; the lists below are of the first)'],
  ['callers', 'Callers (uses of it: path:line, the definition holding the use)'],
  ['callees', 'Callees (the workspace definitions it calls)'],
  ['imports', 'Imports (workspace files its file imports: the import as written)'],
  ['importedBy', 'Imported by (import statements of other files)'],
];

/** `rag/related` as text: a section per list, each item a `path:line symbol` line. */
export function relatedText(result: RelatedResult, params: RelatedParams, multiRoot = false): string {
  const subject = [params.symbol ? `"${params.symbol}"` : '', params.path ? `${params.symbol ? 'in ' : 'the file '}${params.path}` : ''].filter(Boolean).join(' ');
  const lists = RELATED_SECTIONS.map(([key]) => (result[key] ?? []) as Related[]);
  const empty = lists.every((l) => !l.length);
  if (result.error && empty) return `ragls could not find what relates to ${subject}: ${result.error}${warningsText(result.warnings)}`;
  if (empty) return `Nothing in the index relates to ${subject}. Check the name or path, or search for it.${warningsText(result.warnings)}`;
  const sections = RELATED_SECTIONS.map(([, title], n) => {
    const items = lists[n];
    return `${title}:\n${items.length ? items.map((r) => `- ${relatedLine(r, multiRoot)}`).join('\n') : '(none)'}`;
  });
  return `Related to ${subject}:\n\n${sections.join('\n\n')}${warningsText(result.warnings)}`;
}

/** `rag/repoMap` as text: the server's outline, as it wrote it (`folder/path` with 2+ folders). */
export function repoMapText(result: RepoMapResult, params: RepoMapParams): string {
  const text = (result.text ?? '').trimEnd();
  if (result.error && !text) return `ragls could not build the repository map: ${result.error}${warningsText(result.warnings)}`;
  if (!text) return `The repository map is empty: nothing is indexed yet.${warningsText(result.warnings)}`;
  const about = params.query ? ` (files about "${params.query}" first)` : '';
  const head = `Repository map${about}: ${plural((result.files ?? []).length, 'file')}, their most used definitions as "line: signature", about ${result.tokens} tokens.`;
  return `${head}\n\n${text}${warningsText(result.warnings)}`;
}

/** The text the model reads for a request's result. */
export function toolResultText(request: ToolRequest, result: unknown, multiRoot = false): string {
  switch (request.action) {
    case 'search':
      return searchToolText(result as RetrieveResult, request.params);
    case 'references':
      return referencesText(result as ReferencesResult, request.params, multiRoot);
    case 'related':
      return relatedText(result as RelatedResult, request.params, multiRoot);
    case 'repoMap':
      return repoMapText(result as RepoMapResult, request.params);
  }
}

/** What the chat shows while the tool runs. */
export function toolInvocationMessage(input: unknown): string {
  const i = (input ?? {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v.trim().slice(0, 80) : '');
  let action: ToolAction;
  try {
    action = toolAction(input);
  } catch {
    action = 'search';
  }
  switch (action) {
    case 'references':
      return `Finding the uses of ${str(i.symbol) || 'a symbol'} in the workspace index`;
    case 'related':
      return `Finding what relates to ${str(i.symbol) || str(i.path) || 'a symbol'} in the workspace index`;
    case 'repoMap':
      return str(i.query) ? `Mapping the repository around "${str(i.query)}"` : 'Mapping the repository';
    default:
      return `Searching the workspace index for "${str(i.query)}"`;
  }
}

/**
 * The message of a tool error when the request failed (the server is missing, an older server
 * lacks the method, bad params): one line for the model, never a stack trace.
 */
export function toolErrorMessage(request: ToolRequest, e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  const raw = e instanceof Error ? e.message : typeof (e as { message?: unknown } | null)?.message === 'string' ? (e as { message: string }).message : String(e);
  const msg = raw.split('\n')[0].trim() || 'unknown error';
  if (code === -32601) {
    return `this ragls server has no ${request.method} (it predates protocol 5, the code graph): update ragls; action "search" still works`;
  }
  if (code === -32602) return `ragls rejected the ${request.action} input: ${msg}`;
  const what = request.action === 'search' ? 'search the workspace index' : request.action === 'repoMap' ? 'build the repository map' : `answer ${request.method}`;
  return `ragls could not ${what}: ${msg}`;
}
