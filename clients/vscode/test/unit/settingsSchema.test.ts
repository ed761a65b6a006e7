/**
 * Issue 17: the settings VS Code exposes are exactly the server's (`ragls schema --flat`, from
 * the pydantic model): names, types, defaults, bounds, descriptions, user-scope-only keys. Any
 * difference fails; `make settings` regenerates package.json and the README table.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { contributedProperty, generateSettings, isClientOnly, spliceReadme, type FlatSchema } from '../../src/lib/settingsSchema';
import { IS_CI, PACKAGE_ROOT, isExecutable, serverPath } from '../support/env';

const SERVER = serverPath();
const available = isExecutable(SERVER);
if (!available && IS_CI) {
  test('ragls server is available', () => assert.fail(`ragls not found at ${SERVER} (set RAGLS_SERVER); CI=true makes this a failure`));
}

describe('package.json settings are the server schema', { skip: available ? false : `ragls not found at ${SERVER}` }, () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
  const readme = fs.readFileSync(path.join(PACKAGE_ROOT, 'README.md'), 'utf8');
  const r = spawnSync(SERVER, ['schema', '--flat'], { encoding: 'utf8', timeout: 60_000 });
  const schema = JSON.parse(r.stdout || '{}') as FlatSchema;

  test('every server setting, and nothing else, under its server name', () => {
    assert.equal(r.status, 0, r.stderr);
    const contributed = Object.keys(pkg.contributes.configuration.properties).filter((k) => !isClientOnly(k));
    assert.deepEqual(contributed, Object.keys(schema).map((k) => `ragls.${k}`));
  });

  test('types, defaults, bounds, descriptions and scopes are generated (run `make settings`)', () => {
    const gen = generateSettings(schema, pkg.contributes.configuration.properties);
    for (const [k, want] of Object.entries(gen.properties)) {
      assert.deepEqual(pkg.contributes.configuration.properties[k], want, `${k} differs from ragls schema`);
    }
    assert.deepEqual(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations, gen.restrictedConfigurations);
    assert.equal(readme, spliceReadme(readme, gen.readmeRows), 'README settings table');
  });

  test('the real defaults: the ones the issue found wrong by hand', () => {
    const props = pkg.contributes.configuration.properties;
    assert.equal(props['ragls.embedder.batchSize'].default, 16);
    assert.equal(props['ragls.retrieval.maxPerFile'].default, 5);
  });
});

test('schema entries map to VS Code property types', () => {
  const nullableString = contributedProperty({ anyOf: [{ type: 'string' }, { type: 'null' }], default: null, description: 'x' }, 1);
  assert.deepEqual([nullableString.type, nullableString.default], ['string', '']);
  const nullableInt = contributedProperty({ anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }], default: null, description: 'x' }, 2);
  assert.deepEqual([nullableInt.type, nullableInt.default, nullableInt.minimum], [['integer', 'null'], null, 1]);
  const sensitive = contributedProperty({ type: 'string', default: 'local', enum: ['local'], description: 'where', 'x-ragls-sensitive': true }, 3);
  assert.equal(sensitive.scope, 'machine');
  assert.match(String(sensitive.markdownDescription), /^Where\. .*User settings only/);
});
