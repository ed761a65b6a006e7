/**
 * Locate the ragls executable. No `vscode` import.
 *
 * Order: the `ragls.server.path` setting; `.venv/bin/ragls` in each workspace folder;
 * `ragls` on PATH.
 */
import * as path from 'node:path';

export interface ResolveInput {
  configured: string | undefined;
  workspaceFolders: string[];
  envPath: string | undefined;
  platform: NodeJS.Platform;
  home: string;
  isExecutable: (p: string) => boolean;
  /** Look in the workspace's .venv: only for trusted workspaces (it runs workspace files). */
  allowWorkspaceVenv?: boolean;
}

export type ResolveResult =
  | { ok: true; command: string; source: 'setting' | 'venv' | 'path' }
  | { ok: false; tried: string[]; message: string };

export function expandPath(p: string, workspaceFolder: string | undefined, home: string): string {
  let out = p.trim();
  if (workspaceFolder) out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  if (out === '~') out = home;
  else if (out.startsWith('~/')) out = path.join(home, out.slice(2));
  if (!path.isAbsolute(out) && workspaceFolder && out.includes('/')) out = path.resolve(workspaceFolder, out);
  return out;
}

function venvCandidates(folder: string, platform: NodeJS.Platform): string[] {
  if (platform === 'win32') {
    return [path.join(folder, '.venv', 'Scripts', 'ragls.exe'), path.join(folder, 'venv', 'Scripts', 'ragls.exe')];
  }
  return [path.join(folder, '.venv', 'bin', 'ragls'), path.join(folder, 'venv', 'bin', 'ragls')];
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
  for (const folder of input.allowWorkspaceVenv === false ? [] : input.workspaceFolders) {
    for (const c of venvCandidates(folder, input.platform)) {
      tried.push(c);
      if (input.isExecutable(c)) return { ok: true, command: c, source: 'venv' };
    }
  }
  for (const c of pathCandidates(input.envPath, input.platform, 'ragls')) {
    tried.push(c);
    if (input.isExecutable(c)) return { ok: true, command: c, source: 'path' };
  }
  return { ok: false, tried, message: notFoundMessage(input.envPath, input.allowWorkspaceVenv !== false) };
}

/**
 * Why `ragls` on PATH was not found, naming the PATH searched. The extension host's PATH is
 * not the one of the terminal the editor was started from: VS Code, code-server, Remote-SSH,
 * WSL and dev containers take it from the user's login shell (`$SHELL -i -l`) on the machine
 * the extension host runs on.
 */
export function notFoundMessage(envPath: string | undefined, searchedVenv = false): string {
  const where = searchedVenv ? 'in the workspace .venv or on PATH' : 'on PATH';
  return (
    `The ragls server was not found ${where}. PATH searched: ${envPath || '(empty)'}. ` +
    "This is the extension host's PATH, which VS Code (also code-server, Remote-SSH, WSL and dev containers) " +
    'takes from your login shell on the machine it runs on, not from the terminal the editor was started from.'
  );
}

/** The "how to fix it" text shown with a missing server. */
export const INSTALL_HINT =
  'Set "ragls.server.path" in your user settings to the full path of the ragls executable, ' +
  'or install it with pipx (pipx install ragls), which puts it in ~/.local/bin on the login PATH.';
