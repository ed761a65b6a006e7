/**
 * Rewrites package.json's `contributes.configuration.properties` and
 * `capabilities.untrustedWorkspaces.restrictedConfigurations`, and the README's settings
 * table, from the server's schema: `make settings RAGLS_SERVER=/path/to/ragls`.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generateSettings, spliceReadme, type FlatSchema } from '../src/lib/settingsSchema';

const root = path.resolve(__dirname, '..', '..');
const server = process.env.RAGLS_SERVER || 'ragls';
const r = spawnSync(server, ['schema', '--flat'], { encoding: 'utf8' });
if (r.status !== 0) throw new Error(`${server} schema --flat failed: ${r.stderr || r.error}`);
const schema = JSON.parse(r.stdout) as FlatSchema;
const pkgPath = path.join(root, 'package.json');
const pkg = JSON.parse(fs.readFileSync(pkgPath, 'utf8'));
const gen = generateSettings(schema, pkg.contributes.configuration.properties);
pkg.contributes.configuration.properties = gen.properties;
pkg.capabilities.untrustedWorkspaces.restrictedConfigurations = gen.restrictedConfigurations;
fs.writeFileSync(pkgPath, JSON.stringify(pkg, null, 2) + '\n');
const readmePath = path.join(root, 'README.md');
fs.writeFileSync(readmePath, spliceReadme(fs.readFileSync(readmePath, 'utf8'), gen.readmeRows));
console.log(`package.json and README.md: ${Object.keys(schema).length} server settings from ${server}`);
