/**
 * Turn the `ragls` settings section into what the server gets, both as
 * initializationOptions and as the answer to `workspace/configuration`.
 * No `vscode` import.
 */
import { CLIENT_ONLY_KEYS } from './protocol';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Deep copy without `null`/`undefined` values and without objects left empty by that:
 * an unset setting means "server default", so it is not sent at all.
 */
export function pruneUnset(value: unknown): Json | undefined {
  if (value === null || value === undefined) return undefined;
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

/** The `ragls` section minus client-only keys and unset values. Always an object. */
export function serverSettings(section: Record<string, unknown> | undefined): Record<string, Json> {
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(section ?? {})) {
    if (CLIENT_ONLY_KEYS.includes(k)) continue;
    copy[k] = v;
  }
  const pruned = pruneUnset(copy);
  return isPlainObject(pruned) ? (pruned as Record<string, Json>) : {};
}

/** Setting keys (first segment under `ragls.`) whose change needs a server restart. */
export const RESTART_KEYS = ['server'];
