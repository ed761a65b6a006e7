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

export interface RetrieveParams {
  query: string;
  topK?: number;
  maxChars?: number;
  paths?: string[];
  languages?: string[];
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

/** Keys of the `ragls` settings section that only the client uses; never sent to the server. */
export const CLIENT_ONLY_KEYS: readonly string[] = ['server', 'chat', 'trace'];
