// Bundle the extension into one CommonJS file; `vscode` is provided by the host.
import * as esbuild from 'esbuild';

const production = !process.argv.includes('--dev');

await esbuild.build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['vscode'],
  sourcemap: production ? false : 'linked',
  minify: production,
  keepNames: true,
  logLevel: 'warning',
  legalComments: 'none',
});
