/**
 * Text formatting shared by the chat participant and the commands. No `vscode` import.
 */
import type { Chunk, RetrieveIntent, RetrieveParams, RetrieveResult } from './protocol';
import { linesLabel } from './ranges';

/** The server accepts queries of 1..4000 characters. */
export const MAX_QUERY_CHARS = 4000;

/**
 * Put the server's `<rag_context>` block in front of the user's prompt. An empty context
 * (nothing relevant, or retrieval failed) leaves the prompt as it is.
 */
export function prependContext(context: string | undefined | null, prompt: string): string {
  const ctx = (context ?? '').trim();
  if (!ctx) return prompt;
  return `${ctx}\n\n${prompt}`;
}

/**
 * The chunk's path as the user reads it: `folder/path` in a workspace of 2+ folders when the
 * server names the chunk's folder (protocol 3), the folder-relative `path` otherwise.
 */
export function chunkPath(chunk: Chunk, multiRoot = false): string {
  return multiRoot && chunk.folder ? `${chunk.folder}/${chunk.path}` : chunk.path;
}

/** `billing/invoice.py:22-25` (`api/billing/invoice.py:22-25` in a multi-root workspace). */
export function chunkLocationLabel(chunk: Chunk, multiRoot = false): string {
  return `${chunkPath(chunk, multiRoot)}:${linesLabel(chunk.range)}`;
}

const KIND_ICONS: Record<string, string> = {
  function: 'symbol-function',
  method: 'symbol-method',
  class: 'symbol-class',
  class_header: 'symbol-class',
  declaration: 'symbol-variable',
  section: 'symbol-namespace',
  text: 'symbol-text',
};

export function kindIcon(kind: string): string {
  return KIND_ICONS[kind] ?? 'symbol-misc';
}

function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

export interface HitLabel {
  /** Quick pick label (with a codicon). */
  label: string;
  description: string;
  detail: string;
}

/** Label, description and detail of a hit for a quick pick. */
export function hitLabel(chunk: Chunk, multiRoot = false): HitLabel {
  const name = chunk.symbol || basename(chunk.path);
  const firstLine =
    chunk.content
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? '';
  const preview = firstLine.length > 100 ? `${firstLine.slice(0, 99)}…` : firstLine;
  return {
    label: `$(${kindIcon(chunk.kind)}) ${name}`,
    description: chunkLocationLabel(chunk, multiRoot),
    detail: `${chunk.kind} · ${chunk.language} · score ${formatScore(chunk.score)}${preview ? ` · ${preview}` : ''}`,
  };
}

export function formatScore(score: number): string {
  if (!Number.isFinite(score)) return String(score);
  return Math.abs(score) >= 100 ? score.toFixed(0) : score.toPrecision(3);
}

/** One markdown line per hit for `@rag /search`. */
export function searchResultLines(chunks: Chunk[], multiRoot = false): string[] {
  return chunks.map((c, i) => {
    const sym = c.symbol ? `\`${c.symbol}\` ` : '';
    return `${i + 1}. ${sym}${escapeMarkdown(chunkLocationLabel(c, multiRoot))} (${c.kind}, ${c.language}, score ${formatScore(c.score)})`;
  });
}

export function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_{}[\]()#+!|<>])/g, '\\$1');
}

/** Summary after copying a context block. */
export function copiedSummary(context: string, chunks: Chunk[]): string {
  // By URI: two folders may hold the same relative path.
  const files = new Set(chunks.map((c) => c.uri)).size;
  const blocks = (context.match(/<code_context\b/g) ?? []).length;
  return `Copied <rag_context> with ${blocks} chunk${blocks === 1 ? '' : 's'} from ${files} file${files === 1 ? '' : 's'} (${context.length} characters).`;
}

/** Clamp a chat prompt or search text to what `rag/retrieve` accepts. */
export function toQuery(text: string): string {
  const q = text.trim();
  return q.length > MAX_QUERY_CHARS ? q.slice(0, MAX_QUERY_CHARS) : q;
}

/**
 * `rag/retrieve` params: the clamped query, the user's `topK`/`maxChars` when set, and
 * `intent: "change"` for a planned edit. A question sends no `intent` (the server's default),
 * so a server older than protocol 4 gets the params it always got.
 */
export function retrieveParams(
  query: string,
  retrieval: { topK?: number | null; maxChars?: number | null } | undefined,
  intent?: RetrieveIntent,
): RetrieveParams {
  const params: RetrieveParams = { query: toQuery(query) };
  if (retrieval?.topK != null) params.topK = retrieval.topK;
  if (retrieval?.maxChars != null) params.maxChars = retrieval.maxChars;
  if (intent === 'change') params.intent = 'change';
  return params;
}

/**
 * Why a result is degraded (protocol 2 `warnings`: real results from less than the full
 * search), as one line, or undefined. A protocol-1 server said the same in `error` while still
 * returning chunks; that counts as degraded too, not as a failure.
 */
export function degradedNote(result: RetrieveResult | undefined): string | undefined {
  if (!result) return undefined;
  const warnings = result.warnings?.length ? result.warnings : result.error && result.chunks.length ? [result.error] : [];
  return warnings.length ? `Degraded search: ${warnings.join('; ')}` : undefined;
}

/** "No retrieval": nothing could be searched (an `error` without results). */
export function retrievalFailure(result: RetrieveResult | undefined): string | undefined {
  return result?.error && !result.chunks.length ? result.error : undefined;
}
