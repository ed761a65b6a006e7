/**
 * Status-bar state for ragls, kept free of `vscode` so it can be unit-tested.
 *
 * Three sources feed it: `$/progress` (begin/report/end), the `rag/statusChanged`
 * notification and the answer to `rag/indexStatus`. What an IndexStatus looks like is the
 * server's `display` (health, text, tooltip; docs/clients/status.md), shown as it is: this
 * module only picks a codicon for the health. A `$/progress` newer than the status shows its
 * own n/N while it runs.
 */
import type { Health, IndexStatus, StatusDisplay, WorkDoneProgressValue } from './protocol';

/** The codicon of each health (status bar text). */
export const CODICONS: Record<Health, string> = {
  indexing: '$(sync~spin)',
  ok: '$(database)',
  warning: '$(warning)',
  error: '$(error)',
};

/** `1234 -> "1,234"`, whatever the locale (a progress's n/N). */
export function formatNumber(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** What the server says to show for a status; from a server older than `display`, its state. */
export function displayOf(st: IndexStatus): StatusDisplay {
  return st.display ?? { health: st.state === 'ready' ? 'ok' : st.state, text: st.state, tooltip: [`State: ${st.state} (${st.phase})`] };
}

export type Lifecycle =
  | 'starting' // the process is being spawned / initialize is pending
  | 'running' // initialize answered
  | 'restarting' // crashed, waiting for the backoff before the next start
  | 'stopped' // stopped by the user or gave up after too many crashes
  | 'notFound' // no ragls executable
  | 'noWorkspace'; // no folder open: nothing to index

export type Severity = 'normal' | 'warning' | 'error';

export interface StatusView {
  /** Status bar text, with codicons (`$(sync~spin)`). */
  text: string;
  /** Plain-text lines for the tooltip and the quick pick. */
  details: string[];
  severity: Severity;
  spinning: boolean;
  /** Coarse state name, also used by tests. */
  state: 'starting' | 'indexing' | 'ready' | 'error' | 'stopped' | 'notFound' | 'noWorkspace' | 'restarting';
}

interface OpenProgress {
  title: string;
  message?: string;
  percentage?: number;
}

const COUNT_RE = /(\d+)\s*\/\s*(\d+)/;

/** Parse "12/40 files" (or "12 / 40") out of a progress message. */
export function parseCounts(message: string | undefined): { done: number; total: number } | undefined {
  if (!message) return undefined;
  const m = COUNT_RE.exec(message);
  if (!m) return undefined;
  return { done: Number(m[1]), total: Number(m[2]) };
}

export class StatusModel {
  lifecycle: Lifecycle = 'starting';
  /** Extra text for the lifecycle (error message, restart delay, ...). */
  lifecycleDetail: string | undefined;
  status: IndexStatus | undefined;
  private progress = new Map<string, OpenProgress>();
  /** n/N of the last $/progress that had one, until a newer status. */
  private progressCounts: { done: number; total: number } | undefined;
  private lastProgressEnd: string | undefined;

  setLifecycle(lifecycle: Lifecycle, detail?: string): void {
    this.lifecycle = lifecycle;
    this.lifecycleDetail = detail;
    if (lifecycle !== 'running') {
      this.progress.clear();
    }
    if (lifecycle === 'starting') {
      this.status = undefined;
      this.progressCounts = undefined;
    }
  }

  applyStatus(status: IndexStatus): void {
    this.status = status;
    this.progressCounts = undefined;
  }

  applyProgress(token: string | number, value: WorkDoneProgressValue): void {
    const key = String(token);
    if (value.kind === 'begin') {
      this.progress.set(key, { title: value.title, message: value.message, percentage: value.percentage });
      this.progressCounts = parseCounts(value.message) ?? this.progressCounts;
    } else if (value.kind === 'report') {
      const open = this.progress.get(key) ?? { title: 'ragls' };
      if (value.message !== undefined) open.message = value.message;
      if (value.percentage !== undefined) open.percentage = value.percentage;
      this.progress.set(key, open);
      this.progressCounts = parseCounts(value.message) ?? this.progressCounts;
    } else {
      this.progress.delete(key);
      this.lastProgressEnd = value.message;
    }
  }

  get progressActive(): boolean {
    return this.progress.size > 0;
  }

  view(): StatusView {
    switch (this.lifecycle) {
      case 'noWorkspace':
        return {
          text: '$(database) RAG',
          details: ['No folder is open: ragls has nothing to index.'],
          severity: 'normal',
          spinning: false,
          state: 'noWorkspace',
        };
      case 'notFound':
        return {
          text: '$(error) RAG: no server',
          details: [this.lifecycleDetail ?? 'The ragls executable was not found.'],
          severity: 'error',
          spinning: false,
          state: 'notFound',
        };
      case 'stopped':
        return {
          text: '$(circle-slash) RAG: stopped',
          details: [this.lifecycleDetail ?? 'The ragls server is not running.'],
          severity: 'error',
          spinning: false,
          state: 'stopped',
        };
      case 'restarting':
        return {
          text: '$(sync~spin) RAG: restarting',
          details: [this.lifecycleDetail ?? 'The ragls server exited; restarting.'],
          severity: 'warning',
          spinning: true,
          state: 'restarting',
        };
      case 'starting':
        return {
          text: '$(sync~spin) RAG',
          details: ['Starting the ragls server...'],
          severity: 'normal',
          spinning: true,
          state: 'starting',
        };
      case 'running':
        break;
    }

    const st = this.status;
    const shown = st && displayOf(st);
    const details = shown?.tooltip ?? [];
    // $/progress newer than the status: the progress's n/N, with the indexing icon.
    if (this.progressActive || shown?.health === 'indexing') {
      const c = this.progressCounts;
      const pct = this.currentPercentage();
      let text = `${CODICONS.indexing} RAG`;
      if (c && c.total > 0) text += ` ${formatNumber(Math.min(c.done, c.total))}/${formatNumber(c.total)}`;
      else if (shown?.health === 'indexing') text += ` ${shown.text}`;
      else if (pct !== undefined) text += ` ${Math.round(pct)}%`;
      else text += ' indexing';
      const lines = [...this.progressLines(), ...details];
      return { text, details: lines, severity: 'normal', spinning: true, state: 'indexing' };
    }
    if (!st || !shown) {
      return {
        text: '$(sync~spin) RAG',
        details: ['Waiting for the index status...'],
        severity: 'normal',
        spinning: true,
        state: 'starting',
      };
    }
    // The server's display, as it is (docs/clients/status.md).
    return {
      text: `${CODICONS[shown.health] ?? CODICONS.ok} RAG ${shown.text}`,
      details,
      severity: shown.health === 'error' || shown.health === 'warning' ? 'warning' : 'normal',
      spinning: false,
      state: st.state === 'error' ? 'error' : 'ready',
    };
  }

  private currentPercentage(): number | undefined {
    for (const p of this.progress.values()) {
      if (p.percentage !== undefined) return p.percentage;
    }
    return undefined;
  }

  private progressLines(): string[] {
    const lines: string[] = [];
    for (const p of this.progress.values()) {
      lines.push([p.title, p.message].filter(Boolean).join(': '));
    }
    if (lines.length === 0 && this.lastProgressEnd) lines.push(`Last run: ${this.lastProgressEnd}`);
    return lines;
  }
}

/** The tooltip and quick-pick lines for an IndexStatus: the server's display. */
export function statusDetails(st: IndexStatus | undefined): string[] {
  return st ? displayOf(st).tooltip : [];
}
