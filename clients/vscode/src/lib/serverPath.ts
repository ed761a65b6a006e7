/**
 * Locate the ragls executable. No `vscode` import.
 *
 * Order: the `ragls.server.path` user setting, else `ragls` on PATH. Nothing inside the
 * workspace is run on its own (a cloned repository can ship an executable `.venv/bin/ragls`):
 * a path in the workspace (`${workspaceFolder}/...` or relative) runs only when the user set
 * it and trusted the workspace.
 */
import * as path from 'node:path';

export interface ResolveInput {
  configured: string | undefined;
  workspaceFolders: string[];
  envPath: string | undefined;
  platform: NodeJS.Platform;
  home: string;
  isExecutable: (p: string) => boolean;
  /** The workspace is trusted: a configured path inside it may run. */
  workspaceTrusted: boolean;
}

export type ResolveResult =
  | { ok: true; command: string; source: 'setting' | 'path' }
  | { ok: false; tried: string[]; message: string };

export function expandPath(p: string, workspaceFolder: string | undefined, home: string): string {
  let out = p.trim();
  if (workspaceFolder) out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  if (out === '~') out = home;
  else if (out.startsWith('~/')) out = path.join(home, out.slice(2));
  if (!path.isAbsolute(out) && workspaceFolder && out.includes('/')) out = path.resolve(workspaceFolder, out);
  return out;
}

function isInside(p: string, folder: string): boolean {
  const rel = path.relative(folder, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function pathCandidates(envPath: string | undefined, platform: NodeJS.Platform, name: string): string[] {
  if (!envPath) return [];
  const sep = platform === 'win32' ? ';' : ':';
  const names = platform === 'win32' ? [`${name}.exe`, `${name}.cmd`, name] : [name];
  const out: string[] = [];
  for (const dir of envPath.split(sep)) {
    if (!dir) continue;
    for (const n of names) out.push(path.join(dir, n));
  }
  return out;
}

export function resolveServerCommand(input: ResolveInput): ResolveResult {
  const tried: string[] = [];
  const first = input.workspaceFolders[0];
  const configured = (input.configured ?? '').trim();
  if (configured) {
    const expanded = expandPath(configured, first, input.home);
    const inWorkspace = input.workspaceFolders.some((f) => isInside(expanded, f)) || /\$\{workspaceFolder\}/.test(configured);
    if (inWorkspace && !input.workspaceTrusted) {
      return {
        ok: false,
        tried,
        message: `ragls.server.path "${configured}" is inside the workspace, which is not trusted; ragls runs a program from the workspace only in a trusted workspace.`,
      };
    }
    if (path.isAbsolute(expanded)) {
      tried.push(expanded);
      if (input.isExecutable(expanded)) return { ok: true, command: expanded, source: 'setting' };
      return {
        ok: false,
        tried,
        message: `ragls.server.path is set to "${configured}", but ${expanded} is not an executable file.`,
      };
    }
    // A bare name: look it up on PATH.
    for (const c of pathCandidates(input.envPath, input.platform, expanded)) {
      tried.push(c);
      if (input.isExecutable(c)) return { ok: true, command: c, source: 'setting' };
    }
    return { ok: false, tried, message: `ragls.server.path is "${configured}", which is not on PATH.` };
  }
  for (const c of pathCandidates(input.envPath, input.platform, 'ragls')) {
    // A relative PATH entry (`.`) or one inside an untrusted workspace would run workspace files.
    if (!path.isAbsolute(c) || (!input.workspaceTrusted && input.workspaceFolders.some((f) => isInside(c, f)))) continue;
    tried.push(c);
    if (input.isExecutable(c)) return { ok: true, command: c, source: 'path' };
  }
  return { ok: false, tried, message: notFoundMessage(input.envPath) };
}

/**
 * Why `ragls` on PATH was not found, naming the PATH searched. The extension host's PATH is
 * not the one of the terminal the editor was started from: VS Code, code-server, Remote-SSH,
 * WSL and dev containers take it from the user's login shell (`$SHELL -i -l`) on the machine
 * the extension host runs on.
 */
export function notFoundMessage(envPath: string | undefined): string {
  return (
    `The ragls server was not found on PATH. PATH searched: ${envPath || '(empty)'}. ` +
    "This is the extension host's PATH, which VS Code (also code-server, Remote-SSH, WSL and dev containers) " +
    'takes from your login shell on the machine it runs on, not from the terminal the editor was started from.'
  );
}

/** The "how to fix it" text shown with a missing server. */
export const INSTALL_HINT =
  'Set "ragls.server.path" in your user settings to the full path of the ragls executable, ' +
  'or install it with pipx (pipx install ragls), which puts it in ~/.local/bin on the login PATH.';
