/**
 * Which chunks the model saw: the `<code_context>` blocks of a `<rag_context>`, in their
 * order, matched to the chunks of the same `rag/retrieve` result. No `vscode` import.
 *
 * The server packs whole chunks best first and skips those that do not fit the budget
 * (docs/protocol.md), so `chunks` can hold more than the context; references must list
 * only what the model received, in the order it received it.
 */
import type { Chunk } from './protocol';
import { lineSpan } from './ranges';

/** A block header is a whole line; file content cannot fake one (the server neutralises it). */
const HEADER = /^<code_context file="([^"]*)" lines="(\d+)-(\d+)"(?: symbol="([^"]*)")?>$/gm;

export interface ContextBlock {
  path: string;
  first: number;
  last: number;
  symbol: string | null;
}

function unescapeXml(s: string): string {
  return s.replace(/&(lt|gt|quot|#x27|#39|amp);/g, (_, e: string) =>
    e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : e === 'amp' ? '&' : "'",
  );
}

/** The block headers of a `<rag_context>`, in order. */
export function contextBlocks(context: string | null | undefined): ContextBlock[] {
  const out: ContextBlock[] = [];
  for (const m of (context ?? '').matchAll(HEADER)) {
    out.push({ path: unescapeXml(m[1]), first: Number(m[2]), last: Number(m[3]), symbol: m[4] === undefined ? null : unescapeXml(m[4]) });
  }
  return out;
}

/**
 * The chunks in the context, in the context's order (each chunk at most once). In a workspace of
 * 2+ folders the server writes a block's file as `folder/path` (protocol 3); that form is tried
 * first, then the plain folder-relative path of a single-folder workspace.
 */
export function chunksInContext(context: string | null | undefined, chunks: readonly Chunk[]): Chunk[] {
  const left = [...chunks];
  const out: Chunk[] = [];
  for (const b of contextBlocks(context)) {
    const sameLines = (c: Chunk) => {
      const span = lineSpan(c.range);
      return span.first === b.first && span.last === b.last;
    };
    let i = left.findIndex((c) => !!c.folder && `${c.folder}/${c.path}` === b.path && sameLines(c));
    if (i < 0) i = left.findIndex((c) => c.path === b.path && sameLines(c));
    if (i >= 0) out.push(...left.splice(i, 1));
  }
  return out;
}
