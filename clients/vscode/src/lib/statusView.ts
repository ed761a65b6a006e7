/**
 * The shared mapping from an IndexStatus to what the user sees (docs/clients/status.md):
 * icon, text and tooltip lines. The same table of cases (tests/fixtures/status-cases.json)
 * runs here, in JetBrains' StatusView and in Neovim's status.view. No `vscode` import.
 */
import type { FolderStatus, IndexStatus } from './protocol';

export type StatusIcon = 'indexing' | 'ready' | 'warning' | 'error';

export interface IndexView {
  icon: StatusIcon;
  text: string;
  tooltip: string[];
}

/** `1234 -> "1,234"`, whatever the locale. */
export function formatNumber(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function indexView(st: IndexStatus): IndexView {
  const total = st.filesTotal ?? 0;
  const failed = st.filesFailed ?? 0;
  const chunks = `${formatNumber(st.chunks ?? 0)} chunks`;
  let icon: StatusIcon;
  let text: string;
  if (st.state === 'indexing') {
    icon = 'indexing';
    const done = Math.min((st.filesIndexed ?? 0) + failed, total);
    text = total > 0 ? `${formatNumber(done)}/${formatNumber(total)}` : 'indexing';
  } else if (st.state === 'error') {
    const soft = st.phase === 'paused' || st.phase === 'waiting';
    icon = soft ? 'warning' : 'error';
    text = soft ? st.phase : 'error';
  } else {
    icon = failed > 0 || (st.warnings ?? []).length > 0 ? 'warning' : 'ready';
    text = failed > 0 ? `${chunks}, ${formatNumber(failed)} failed` : chunks;
  }
  return { icon, text, tooltip: tooltipLines(st) };
}

function tooltipLines(st: IndexStatus): string[] {
  const lines = [`State: ${st.state} (${st.phase})`];
  if (st.message) lines.push(st.message);
  lines.push(
    `Files: ${formatNumber(st.filesIndexed ?? 0)}/${formatNumber(st.filesTotal ?? 0)} indexed` +
      (st.filesFailed ? `, ${formatNumber(st.filesFailed)} failed` : '') +
      (st.filesSkipped ? `, ${formatNumber(st.filesSkipped)} skipped` : ''),
  );
  lines.push(`Chunks: ${formatNumber(st.chunks ?? 0)}`);
  const folders = st.folders ?? [];
  if (folders.length >= 2) lines.push(...folders.map(folderLine));
  const emb = st.embedder;
  if (emb && (emb.provider || emb.model)) {
    lines.push(`Embedder: ${emb.provider ?? ''} / ${emb.model ?? ''}` + (emb.dimension ? `, ${emb.dimension}-d` : ''));
  }
  if (st.store?.kind) lines.push(`Store: ${st.store.kind}` + (st.store.location ? ` at ${st.store.location}` : ''));
  if (st.lastIndexedAt) lines.push(`Last indexed: ${st.lastIndexedAt}`);
  for (const w of st.warnings ?? []) lines.push(`Warning: ${w}`);
  const errors = st.errors ?? [];
  if (errors.length) {
    const last = errors[errors.length - 1];
    lines.push(`Errors: ${errors.length}; last: ${last.path}: ${last.message}`);
  }
  if (st.version) lines.push(`Server: ragls ${st.version}`);
  return lines;
}

/** One folder of a multi-root workspace (docs/clients/status.md, tooltip line 5). */
export function folderLine(f: FolderStatus): string {
  if (f.nestedIn) return `Folder ${f.name}: inside ${f.nestedIn}`;
  return (
    `Folder ${f.name}: ${f.state} (${f.phase}), ${formatNumber(f.filesIndexed ?? 0)}/${formatNumber(f.filesTotal ?? 0)} files` +
    (f.filesFailed ? `, ${formatNumber(f.filesFailed)} failed` : '') +
    `, ${formatNumber(f.chunks ?? 0)} chunks` +
    (f.message ? `; ${f.message}` : '')
  );
}

/** The codicon of each icon (status bar text). */
export const CODICONS: Record<StatusIcon, string> = {
  indexing: '$(sync~spin)',
  ready: '$(database)',
  warning: '$(warning)',
  error: '$(error)',
};
