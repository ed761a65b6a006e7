/**
 * The ragls wire contract (docs/protocol.md), as plain types and method names.
 * No `vscode` import here: this module is shared by the extension, the unit tests
 * and the tests that drive the real server through vscode-jsonrpc.
 */

export const Methods = {
  retrieve: 'rag/retrieve',
  indexStatus: 'rag/indexStatus',
  reindex: 'rag/reindex',
  statusChanged: 'rag/statusChanged',
} as const;

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  /** Exclusive: `{line: last + 1, character: 0}` for whole-line chunks. */
  end: Position;
}

/** Protocol 4: `"question"` (the default) or `"change"` (the query describes a change to make). */
export type RetrieveIntent = 'question' | 'change';

export interface RetrieveParams {
  query: string;
  topK?: number;
  maxChars?: number;
  paths?: string[];
  languages?: string[];
  /** Protocol 3: search only these folders (names or URIs); omitted, all folders. */
  folders?: string[];
  /** Protocol 4: "change" when the query describes a change to make (rank the files it touches, git history included). */
  intent?: RetrieveIntent;
}

export interface Chunk {
  uri: string;
  path: string;
  range: Range;
  symbol?: string | null;
  kind: string;
  language: string;
  score: number;
  content: string;
  /** Protocol 3: the name of the workspace folder the chunk comes from (`path` is relative to it). */
  folder?: string | null;
  folderUri?: string | null;
}

export interface RetrieveResult {
  context: string;
  chunks: Chunk[];
  tookMs: number;
  /** No retrieval: nothing could be searched (context and chunks are empty). */
  error?: string | null;
  /** Degraded (protocol 2): real results from less than the full search, e.g. lexical only. */
  warnings?: string[];
}

export type IndexState = 'indexing' | 'ready' | 'error';
export type IndexPhase = 'starting' | 'discovering' | 'lexical' | 'dense' | 'idle' | 'waiting' | 'paused' | 'error';

/** Protocol 3: one workspace folder's part of an IndexStatus. */
export interface FolderStatus {
  name: string;
  uri: string;
  path?: string;
  state: IndexState | string;
  phase: IndexPhase | string;
  filesTotal: number;
  filesIndexed: number;
  filesFailed: number;
  chunks: number;
  lexical?: { done: number; total: number };
  dense?: { done: number; total: number };
  errors?: { path: string; message: string; time?: string }[];
  message?: string | null;
  /** The folder that covers this one: it is not indexed on its own (its counters are 0). */
  nestedIn?: string | null;
}

/** Top-level counters are totals over all folders; `folders` (protocol 3) has one entry per folder. */
export interface IndexStatus {
  state: IndexState;
  phase: IndexPhase | string;
  filesTotal: number;
  filesIndexed: number;
  filesFailed: number;
  filesSkipped: number;
  skippedByReason?: Record<string, number>;
  chunks: number;
  lexical?: { done: number; total: number };
  dense?: { done: number; total: number };
  lastIndexedAt?: string | null;
  embedder?: { provider?: string; model?: string; dimension?: number };
  store?: { kind?: string; location?: string };
  cache?: { hits?: number; misses?: number; hitRate?: number };
  errors?: { path: string; message: string; time?: string }[];
  workspace?: string;
  version?: string;
  protocolVersion?: number;
  message?: string | null;
  warnings?: string[];
  watching?: boolean;
  folders?: FolderStatus[];
}

export interface ReindexParams {
  full?: boolean;
}

export interface ReindexResult {
  started: boolean;
}

/** `$/progress` payloads (LSP WorkDoneProgress). */
export interface WorkDoneProgressBegin {
  kind: 'begin';
  title: string;
  cancellable?: boolean;
  message?: string;
  percentage?: number;
}

export interface WorkDoneProgressReport {
  kind: 'report';
  cancellable?: boolean;
  message?: string;
  percentage?: number;
}

export interface WorkDoneProgressEnd {
  kind: 'end';
  message?: string;
}

export type WorkDoneProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

/**
 * Whether the server follows `workspace/didChangeWorkspaceFolders` (protocol 3 advertises
 * `workspace.workspaceFolders.changeNotifications`); an older server must be restarted instead.
 */
export function followsFolderChanges(capabilities: unknown): boolean {
  const folders = (capabilities as { workspace?: { workspaceFolders?: { changeNotifications?: unknown } } } | undefined)?.workspace
    ?.workspaceFolders;
  const notify = folders?.changeNotifications;
  return notify === true || (typeof notify === 'string' && notify.length > 0);
}

/** Keys of the `ragls` settings section that only the client uses; never sent to the server. */
export const CLIENT_ONLY_KEYS: readonly string[] = ['server', 'chat', 'trace'];
