/**
 * Issue 39: the rag/* types of this client are the server's (`ragls schema --protocol`, from the
 * pydantic models): src/lib/protocol.generated.ts is regenerated from the server under test and
 * must be identical (`make protocol` rewrites it).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { Methods } from '../../src/lib/protocol';
import { generateProtocol, tsType, type ProtocolSchema } from '../../src/lib/protocolSchema';
import { IS_CI, PACKAGE_ROOT, isExecutable, serverPath } from '../support/env';

const SERVER = serverPath();
const available = isExecutable(SERVER);
if (!available && IS_CI) {
  test('ragls server is available', () => assert.fail(`ragls not found at ${SERVER} (set RAGLS_SERVER); CI=true makes this a failure`));
}

describe('the protocol types are the server schema', { skip: available ? false : `ragls not found at ${SERVER}` }, () => {
  const r = spawnSync(SERVER, ['schema', '--protocol'], { encoding: 'utf8', timeout: 60_000 });
  const schema = JSON.parse(r.stdout || '{}') as ProtocolSchema;

  test('src/lib/protocol.generated.ts is generated from `ragls schema --protocol` (run `make protocol`)', () => {
    assert.equal(r.status, 0, r.stderr);
    const committed = fs.readFileSync(path.join(PACKAGE_ROOT, 'src', 'lib', 'protocol.generated.ts'), 'utf8');
    assert.equal(committed, generateProtocol(schema));
  });

  test('every method this client calls or handles is in the schema, of its kind', () => {
    for (const m of [Methods.retrieve, Methods.indexStatus, Methods.reindex]) {
      assert.equal(schema.methods[m]?.kind, 'request', m);
    }
    assert.equal(schema.methods[Methods.statusChanged]?.kind, 'notification');
  });

  test('the status display is part of what the server sends', () => {
    const st = schema.$defs.IndexStatus;
    assert.deepEqual(st.properties?.display, { $ref: '#/$defs/StatusDisplay' });
    assert.ok(st.required?.includes('display'));
    assert.equal(tsType(schema.$defs.StatusDisplay.properties!.health), "'ok' | 'indexing' | 'warning' | 'error'");
  });
});

test('schema nodes map to TypeScript types', () => {
  assert.equal(tsType({ anyOf: [{ type: 'string' }, { type: 'null' }] }), 'string | null');
  assert.equal(tsType({ type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'null' }] } }), '(number | null)[]');
  assert.equal(tsType({ type: 'object', additionalProperties: { type: 'integer' } }), 'Record<string, number>');
  assert.equal(tsType({ $ref: '#/$defs/Range' }), 'Range');
  assert.equal(tsType({ enum: ["it's", 2] }), "'it\\'s' | 2");
  const gen = generateProtocol({
    protocolVersion: 9,
    methods: { 'rag/x': { kind: 'request', params: { $ref: '#/$defs/P' }, result: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } },
    $defs: { P: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['a'] }, Unused: { type: 'string' } },
  });
  assert.match(gen, /export interface P \{\n {2}a: string;\n {2}b\?: number;\n\}/);
  assert.match(gen, /export interface XResult \{\n {2}ok: boolean;\n\}/);
  assert.match(gen, /'rag\/x': \{ params: P; result: XResult \};/);
  assert.doesNotMatch(gen, /Unused/, 'only the types the methods use');
});
