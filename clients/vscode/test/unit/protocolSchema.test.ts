/**
 * Issue 39: the rag/* types of this client are the server's (`ragls schema --protocol`, from the
 * pydantic models): src/lib/protocol.generated.ts is regenerated from the server under test and
 * must be identical (`make protocol` rewrites it). Issue 53: the `#ragls` tool's inputSchema
 * (package.json, hand-written for models) fits the params of each method its actions call.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { Methods } from '../../src/lib/protocol';
import { generateProtocol, inputFieldProblems, tsType, type ProtocolSchema, type SchemaNode } from '../../src/lib/protocolSchema';
import { SEARCH_TOOL_NAME, TOOL_ACTIONS, TOOL_ACTION_NAMES } from '../../src/lib/searchTool';
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
    for (const m of [Methods.retrieve, Methods.indexStatus, Methods.reindex, Methods.references, Methods.related, Methods.repoMap]) {
      assert.equal(schema.methods[m]?.kind, 'request', m);
    }
    assert.equal(schema.methods[Methods.statusChanged]?.kind, 'notification');
  });

  test('the #ragls tool input fits the params of the method each action calls', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
    const tool = pkg.contributes.languageModelTools.find((t: { name: string }) => t.name === SEARCH_TOOL_NAME);
    const props = tool.inputSchema.properties as Record<string, SchemaNode>;
    const passed = new Set<string>();
    for (const action of TOOL_ACTION_NAMES) {
      const { method, fields } = TOOL_ACTIONS[action];
      const entry = schema.methods[method];
      assert.equal(entry?.kind, 'request', `${action}: ${method} is a request of the server`);
      const ref = entry.params.$ref ?? '';
      const params = ref ? schema.$defs[ref.replace('#/$defs/', '')] : entry.params;
      for (const field of fields) {
        passed.add(field);
        assert.ok(props[field], `${action}: the inputSchema has no ${field}`);
        assert.ok(params.properties?.[field], `${action}: ${method} has no param ${field}`);
        assert.deepEqual(inputFieldProblems(props[field], params.properties![field]), [], `${action}: ${field} vs ${method}`);
      }
      for (const required of params.required ?? []) {
        assert.ok((fields as readonly string[]).includes(required), `${method} requires ${required}; action ${action} does not pass it`);
      }
    }
    assert.deepEqual(Object.keys(props).sort(), ['action', ...passed].sort(), 'every input field goes to some param');
    assert.deepEqual(props.action.enum, TOOL_ACTION_NAMES);
    // The param models themselves (a rename on the server must show here, not in a model's call).
    assert.equal(schema.methods[Methods.references].params.$ref, '#/$defs/ReferencesParams');
    assert.equal(schema.methods[Methods.related].params.$ref, '#/$defs/RelatedParams');
    assert.equal(schema.methods[Methods.repoMap].params.$ref, '#/$defs/RepoMapParams');
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

test('a tool input field fits a param only within its type and bounds', () => {
  const param: SchemaNode = { anyOf: [{ type: 'integer', minimum: 1, maximum: 500 }, { type: 'null' }] };
  assert.deepEqual(inputFieldProblems({ type: 'integer', minimum: 1, maximum: 500 }, param), []);
  assert.deepEqual(inputFieldProblems({ type: 'integer', minimum: 2, maximum: 100 }, param), [], 'stricter is fine');
  assert.deepEqual(inputFieldProblems({ type: 'integer', minimum: 1, maximum: 2000 }, param), ["maximum 2000 is above the param's 500"]);
  assert.deepEqual(inputFieldProblems({ type: 'integer' }, param), ["minimum undefined is below the param's 1", "maximum undefined is above the param's 500"]);
  assert.deepEqual(inputFieldProblems({ type: 'string', minLength: 1 }, { type: 'integer' }), ['type string is not the param\'s integer']);
  assert.deepEqual(inputFieldProblems({ type: 'string', enum: ['a', 'c'] }, { type: 'string', enum: ['a', 'b'] }), ['allows "c", the param only "a", "b"']);
  assert.deepEqual(inputFieldProblems({ type: 'string' }, { type: 'string', maxLength: 10 }), ["maxLength undefined is above the param's 10"]);
  assert.deepEqual(
    inputFieldProblems({ type: 'array', items: { type: 'string' }, maxItems: 50 }, { anyOf: [{ type: 'array', items: { type: 'string' }, maxItems: 100 }, { type: 'null' }] }),
    [],
  );
  assert.deepEqual(inputFieldProblems({ type: 'array', items: { type: 'integer' }, maxItems: 50 }, { type: 'array', items: { type: 'string' } }), [
    "items of type integer are not the param's string",
  ]);
});
