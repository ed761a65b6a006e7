/**
 * Ratings of `@rag` answers (`rag/feedback`, protocol 6): the chat's thumbs and "RAG: This is the
 * code I meant". The client only sends; the server stores (docs/feedback.md). No `vscode` import.
 *
 * The rule for a mark: it re-sends the answer's whole rating (a second rating of one answer
 * replaces the first on the server), with every place marked so far and the rating the user gave
 * with the thumbs; without thumbs, "up" when a marked line lies in one of the answer's chunks (the
 * answer showed it), else "down" (the answer missed it).
 */
import type { FeedbackLocation, FeedbackParams } from './protocol.generated';
import type { RetrieveResult } from './protocol';

export type Rating = FeedbackParams['rating'];

/** At most this many places per rating (the server's limit). */
export const MAX_MARKS = 50;

/** What the client keeps of one answer to rate and mark it: no text, only places. */
export interface Answer {
  resultId: string;
  /** The answer's chunks: file URI and 1-based inclusive lines. */
  chunks: { uri: string; first: number; last: number }[];
  /** The user's thumbs, if any. */
  rating?: Rating;
  /** Places marked as the code meant: absolute path (or URI) and 1-based line. */
  marks: FeedbackLocation[];
}

/** The answer of a rag/retrieve result, or undefined when it carries no resultId (rating off, an older server). */
export function answerOf(result: Pick<RetrieveResult, 'resultId' | 'chunks'> | undefined): Answer | undefined {
  const id = result?.resultId;
  if (typeof id !== 'string' || !id) return undefined;
  const chunks = (result?.chunks ?? []).map((c) => {
    const first = c.range.start.line + 1;
    return { uri: c.uri, first, last: Math.max(first, c.range.end.line) };
  });
  return { resultId: id, chunks, marks: [] };
}

/** ChatResultFeedbackKind: Unhelpful = 0, Helpful = 1. */
export function ratingOfKind(kind: number): Rating {
  return kind === 1 ? 'up' : 'down';
}

/** Whether a line (1-based) of a file (its `file://` URI) lies in one of the answer's chunks. */
export function inAnswer(answer: Answer, uri: string, line: number): boolean {
  const same = (a: string) => decodeURIComponent(a) === decodeURIComponent(uri);
  return answer.chunks.some((c) => same(c.uri) && line >= c.first && line <= c.last);
}

/** The rating a mark sends: the user's thumbs, else "up" when a mark lies in the answer, else "down". */
export function markRating(answer: Answer, marked: { uri: string; line: number }[]): Rating {
  if (answer.rating) return answer.rating;
  return marked.some((m) => inAnswer(answer, m.uri, m.line)) ? 'up' : 'down';
}

/** Adds places to the answer's marks (no duplicates, the newest 50 kept). */
export function addMarks(answer: Answer, places: FeedbackLocation[]): void {
  for (const p of places) {
    if (!answer.marks.some((m) => m.path === p.path && m.line === p.line)) answer.marks.push(p);
  }
  if (answer.marks.length > MAX_MARKS) answer.marks.splice(0, answer.marks.length - MAX_MARKS);
}

/** `rag/feedback` params for the answer as it stands. */
export function feedbackParams(answer: Answer, rating: Rating): FeedbackParams {
  return answer.marks.length ? { resultId: answer.resultId, rating, relevant: [...answer.marks] } : { resultId: answer.resultId, rating };
}

/** The lines (1-based) to mark for editor selections: each selection's first line (an empty one: the cursor's). */
export function selectionLines(selections: readonly { start: { line: number } }[]): number[] {
  const out: number[] = [];
  for (const s of selections) {
    const line = s.start.line + 1;
    if (!out.includes(line)) out.push(line);
  }
  return out;
}

/** One line for the user: how a rating went. */
export function feedbackSummary(rating: Rating, marks: number, result: { stored: boolean; folders: string[]; message: string | null }): string {
  const what = `${rating === 'up' ? 'Helpful' : 'Not helpful'}${marks ? `, ${marks} place${marks === 1 ? '' : 's'} marked` : ''}`;
  if (!result.stored) return `rating not stored: ${result.message ?? 'unknown reason'}`;
  return `rating stored (${what}) in ${result.folders.length ? result.folders.join(', ') : 'the workspace'}.`;
}

/** The last answers, by resultId, newest last (thumbs on an earlier answer still find it). */
export class Answers {
  private readonly byId = new Map<string, Answer>();
  constructor(private readonly keep = 20) {}

  remember(answer: Answer | undefined): void {
    if (!answer) return;
    this.byId.delete(answer.resultId);
    this.byId.set(answer.resultId, answer);
    while (this.byId.size > this.keep) this.byId.delete(this.byId.keys().next().value as string);
  }

  get(resultId: unknown): Answer | undefined {
    return typeof resultId === 'string' ? this.byId.get(resultId) : undefined;
  }

  last(): Answer | undefined {
    let out: Answer | undefined;
    for (const a of this.byId.values()) out = a;
    return out;
  }
}
