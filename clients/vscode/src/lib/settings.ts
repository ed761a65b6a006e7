/**
 * Turn the `ragls` settings into what the server gets, both as initializationOptions and as
 * the answer to `workspace/configuration`. No `vscode` import.
 *
 * Only values the user actually set (user, workspace or folder settings) are sent. The
 * defaults shown in VS Code are the server's own, and sending them would shadow the
 * workspace's `.ragls.toml`, which ranks below initializationOptions.
 *
 * Sensitive settings (what runs, where code and credentials go: the server's
 * `ragls schema --sensitive` plus the client's `server.*`) are read from user settings only:
 * a cloned repository's `.vscode/settings.json` is as untrusted as its `.ragls.toml`, and
 * the server trusts whatever the client sends.
 */
import { CLIENT_ONLY_KEYS } from './protocol';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The parts of `WorkspaceConfiguration.inspect()` that say where a value was set. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Deep copy without `null`/`undefined`/`""` values and without objects left empty by that:
 * unset means "server default", so it is not sent at all.
 */
export function pruneUnset(value: unknown): Json | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (Array.isArray(value)) {
    return value.map((v) => pruneUnset(v)).filter((v): v is Json => v !== undefined);
  }
  if (isPlainObject(value)) {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === 'function') continue;
      const p = pruneUnset(v);
      if (p !== undefined) out[k] = p;
    }
    return Object.keys(out).length ? out : undefined;
  }
  if (typeof value === 'boolean' || typeof value === 'number' || typeof value === 'string') return value;
  return undefined;
}

/**
 * The settings read from user scope only, as full keys (`ragls.qdrant.url`): the extension's
 * `capabilities.untrustedWorkspaces.restrictedConfigurations`, so package.json states them once.
 */
export function userScopeOnlyKeys(packageJSON: unknown): string[] {
  const caps = (packageJSON as { capabilities?: { untrustedWorkspaces?: { restrictedConfigurations?: unknown } } } | undefined)
    ?.capabilities?.untrustedWorkspaces?.restrictedConfigurations;
  return Array.isArray(caps) ? caps.filter((k): k is string => typeof k === 'string') : [];
}

/** The value that counts: user scope only for `userOnly` keys, else the most specific scope. */
export function effectiveValue(full: string, i: Inspected | undefined, userOnly: ReadonlySet<string>): unknown {
  if (!i) return undefined;
  if (userOnly.has(full)) return i.globalValue;
  return i.workspaceFolderValue !== undefined ? i.workspaceFolderValue : i.workspaceValue !== undefined ? i.workspaceValue : i.globalValue;
}

/** User-scope-only keys that a workspace or folder tried to set (ignored; worth a log line). */
export function ignoredWorkspaceKeys(userOnly: ReadonlySet<string>, inspect: (key: string) => Inspected | undefined): string[] {
  return [...userOnly].filter((full) => {
    const i = inspect(full.slice('ragls.'.length));
    return !!i && (i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined);
  });
}

/**
 * Build the nested settings object from the explicitly set values of `keys`
 * (full keys such as `ragls.retrieval.topK`; the most specific scope wins, except for
 * `userOnly` keys, which come from user settings or not at all).
 */
export function explicitSettings(
  keys: readonly string[],
  inspect: (key: string) => Inspected | undefined,
  userOnly: ReadonlySet<string> = new Set(),
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const full of keys) {
    if (!full.startsWith('ragls.')) continue;
    const rel = full.slice('ragls.'.length);
    const value = effectiveValue(full, inspect(rel), userOnly);
    if (value === undefined) continue;
    const parts = rel.split('.');
    let node = out;
    for (const part of parts.slice(0, -1)) {
      if (!isPlainObject(node[part])) node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    node[parts[parts.length - 1]] = value;
  }
  return out;
}

/** A settings section minus client-only keys and unset values. Always an object. */
export function serverSettings(section: Record<string, unknown> | undefined): Record<string, Json> {
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(section ?? {})) {
    if (CLIENT_ONLY_KEYS.includes(k)) continue;
    copy[k] = v;
  }
  const pruned = pruneUnset(copy);
  return isPlainObject(pruned) ? (pruned as Record<string, Json>) : {};
}

/** The value at a dotted path of the settings object (`retrieval.topK`). */
export function settingAt(settings: Record<string, unknown>, dotted: string): unknown {
  let v: unknown = settings;
  for (const part of dotted.split('.')) {
    v = isPlainObject(v) ? v[part] : undefined;
  }
  return v;
}
