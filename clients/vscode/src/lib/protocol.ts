/**
 * The ragls wire contract (docs/protocol.md), as plain types and method names.
 * No `vscode` import here: this module is shared by the extension, the unit tests
 * and the tests that drive the real server through vscode-jsonrpc.
 *
 * The rag/* payloads are generated from the server's schema (`ragls schema --protocol`):
 * protocol.generated.ts, checked against the server under test by protocolSchema.test.ts.
 */
import type {
  ChunkOut,
  IndexStatus,
  RagNotifications,
  RagRequests,
  RetrieveParams,
  RetrieveResultOut,
  StatusDisplay,
} from './protocol.generated';

export const Methods = {
  retrieve: 'rag/retrieve',
  indexStatus: 'rag/indexStatus',
  reindex: 'rag/reindex',
  references: 'rag/references',
  related: 'rag/related',
  repoMap: 'rag/repoMap',
  statusChanged: 'rag/statusChanged',
} as const satisfies Record<string, keyof RagRequests | keyof RagNotifications>;

export type {
  FolderStatus,
  IndexStatus,
  Location,
  MapFile,
  Position,
  RagRequests,
  Range,
  ReferencesParams,
  ReferencesResult,
  ReindexParams,
  ReindexResult,
  Related,
  RelatedParams,
  RelatedResult,
  RepoMapParams,
  RepoMapResult,
  RetrieveParams,
  StatusDisplay,
} from './protocol.generated';
export type Chunk = ChunkOut;
export type RetrieveResult = RetrieveResultOut;
/** Protocol 4: `"question"` (the default) or `"change"` (the query describes a change to make). */
export type RetrieveIntent = NonNullable<RetrieveParams['intent']>;
export type IndexState = IndexStatus['state'];
export type Health = StatusDisplay['health'];

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
