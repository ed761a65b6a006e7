/**
 * The server's stderr -> log levels of the `ragls` output channel. No `vscode` import.
 *
 * The server logs `<asctime> LEVEL name: message` (server/ragls/frontends/lsp/server.py,
 * `serve`; the CLI drops the time). vscode-languageclient writes every stderr line as
 * `[error]`, so a user opening "RAG: Show Log" saw a wall of errors that were INFO lines.
 */

export type ChannelLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface ServerLogLine {
  level: ChannelLevel;
  /** The line without the time and level, which the channel shows itself. */
  text: string;
}

const LEVELS: Record<string, ChannelLevel> = {
  NOTSET: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  WARN: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
  FATAL: 'error',
};

const RECORD = /^(?:\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\s+)?(NOTSET|DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\s+(\S.*)$/;

/**
 * Level and text of one stderr line. `previous` is the level of the line before: lines that
 * are not log records (a traceback under an ERROR record, a multi-line message) keep it.
 * A traceback that starts on its own (a crash before logging is set up) is an error;
 * other stray output (`warnings.warn`) is a warning or, failing that, info.
 */
export function classifyServerLine(line: string, previous?: ChannelLevel): ServerLogLine {
  const m = RECORD.exec(line);
  if (m) return { level: LEVELS[m[1]], text: m[2] };
  if (line.startsWith('Traceback (most recent call last)')) return { level: 'error', text: line };
  if (previous) return { level: previous, text: line };
  if (/\b\w*Warning: /.test(line)) return { level: 'warn', text: line };
  return { level: 'info', text: line };
}

/** Feeds lines one by one and remembers the level of the last record, for continuations. */
export class ServerLogClassifier {
  private previous: ChannelLevel | undefined;

  classify(line: string): ServerLogLine {
    const out = classifyServerLine(line, this.previous);
    this.previous = out.level;
    return out;
  }
}
