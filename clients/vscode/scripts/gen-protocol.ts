/**
 * Rewrites src/lib/protocol.generated.ts from the server's protocol schema:
 * `make protocol RAGLS_SERVER=/path/to/ragls` (`ragls schema --protocol`).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generateProtocol, type ProtocolSchema } from '../src/lib/protocolSchema';

const root = path.resolve(__dirname, '..', '..');
const server = process.env.RAGLS_SERVER || 'ragls';
const r = spawnSync(server, ['schema', '--protocol'], { encoding: 'utf8' });
if (r.status !== 0) throw new Error(`${server} schema --protocol failed: ${r.stderr || r.error}`);
const schema = JSON.parse(r.stdout) as ProtocolSchema;
const out = path.join(root, 'src', 'lib', 'protocol.generated.ts');
const source = generateProtocol(schema);
fs.writeFileSync(out, source);
const types = source.split('\nexport ').length - 2; // less the version constant
console.log(`src/lib/protocol.generated.ts: ${types} types, ${Object.keys(schema.methods).length} methods from ${server}`);
