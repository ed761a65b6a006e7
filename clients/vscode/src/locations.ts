/** Server chunk ranges as VS Code ranges and locations: the one conversion every caller uses. */
import * as vscode from 'vscode';
import type { Chunk, Range } from './lib/protocol';
import { editorRange } from './lib/ranges';

/** See lib/ranges.ts: the server's exclusive end at column 0 becomes the end of the last line. */
export function toVscodeRange(range: Range, lineLength?: (line: number) => number): vscode.Range {
  const r = editorRange(range, lineLength);
  return new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
}

export function chunkLocation(chunk: Chunk, lineLength?: (line: number) => number): vscode.Location {
  return new vscode.Location(vscode.Uri.parse(chunk.uri), toVscodeRange(chunk.range, lineLength));
}

/** 2+ workspace folders: the server indexes each and labels paths `folder/path` (protocol 3). */
export function isMultiRoot(): boolean {
  return (vscode.workspace.workspaceFolders?.length ?? 0) >= 2;
}
