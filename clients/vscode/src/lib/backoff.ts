/**
 * Restart policy for a crashing server: exponential backoff, reset after a stable run,
 * give up after too many quick crashes in a row. No `vscode` import.
 */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** Crashes in a row (without a stable run between) before giving up. */
  maxRestarts?: number;
  /** A run that lasted this long resets the count. */
  stableAfterMs?: number;
  now?: () => number;
}

export class RestartBackoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly maxRestarts: number;
  private readonly stableAfterMs: number;
  private readonly now: () => number;
  private attempts = 0;
  private startedAt: number | undefined;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 1000;
    this.maxMs = opts.maxMs ?? 30_000;
    this.factor = opts.factor ?? 2;
    this.maxRestarts = opts.maxRestarts ?? 5;
    this.stableAfterMs = opts.stableAfterMs ?? 3 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  /** Call when the server (re)started successfully. */
  started(): void {
    this.startedAt = this.now();
  }

  /** Forget past crashes (user-requested restart). */
  reset(): void {
    this.attempts = 0;
    this.startedAt = undefined;
  }

  /** Call when the server died: the delay before the next start, or undefined to give up. */
  crashed(): number | undefined {
    if (this.startedAt !== undefined && this.now() - this.startedAt >= this.stableAfterMs) {
      this.attempts = 0;
    }
    this.startedAt = undefined;
    if (this.attempts >= this.maxRestarts) return undefined;
    const delay = Math.min(this.maxMs, this.initialMs * Math.pow(this.factor, this.attempts));
    this.attempts += 1;
    return delay;
  }

  get crashCount(): number {
    return this.attempts;
  }
}
