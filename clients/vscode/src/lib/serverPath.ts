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
  return {
    ok: false,
    tried,
    message: 'The ragls server was not found in the workspace .venv or on PATH.',
  };
}

/** The "how to fix it" text shown with a missing server. */
export const INSTALL_HINT =
  'Install it into the workspace virtualenv (python3 -m venv .venv && .venv/bin/pip install ragls), ' +
  'or set "ragls.server.path" to the full path of the ragls executable.';
