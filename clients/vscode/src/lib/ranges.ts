/**
 * Server ranges -> editor ranges and line labels. No `vscode` import.
 *
 * The server's chunk ranges end at `{line: last + 1, character: 0}` (docs/protocol.md): a
 * valid exclusive LSP end, but VS Code labels a range by its end line, so passed through
 * as is every reference reads one line too long (`invoice.py:22-26` for lines 22-25) and
 * selects the start of the next line. Every caller goes through `editorRange`.
 */
import type { Position, Range } from './protocol';

/**
 * Column meaning "end of the line" when the line's length is not known (no open document):
 * the editor clamps a column past the end to the line's length. 2^30 is Monaco's own
 * "max small integer", far beyond any real line.
 */
export const END_OF_LINE = 2 ** 30;

/**
 * The editor range covering the same lines as a server range. An end at column 0 of a
 * later line becomes the end of the line before it (`lineLength(line)` when known, else
 * END_OF_LINE). Any other end is kept; an end before the start collapses onto the start.
 */
export function editorRange(range: Range, lineLength?: (line: number) => number): { start: Position; end: Position } {
  const start = { line: range.start.line, character: range.start.character };
  const { end } = range;
  if (end.line < start.line || (end.line === start.line && end.character < start.character)) {
    return { start, end: { ...start } };
  }
  if (end.character === 0 && end.line > start.line) {
    const line = end.line - 1;
    return { start, end: { line, character: lineLength ? lineLength(line) : END_OF_LINE } };
  }
  return { start, end: { line: end.line, character: end.character } };
}

/** 1-based inclusive line span of a server range (the lines `editorRange` covers). */
export function lineSpan(range: Range): { first: number; last: number } {
  const r = editorRange(range);
  return { first: r.start.line + 1, last: r.end.line + 1 };
}

/** `22-25`, or `22` for one line. */
export function linesLabel(range: Range): string {
  const { first, last } = lineSpan(range);
  return first === last ? `${first}` : `${first}-${last}`;
}
