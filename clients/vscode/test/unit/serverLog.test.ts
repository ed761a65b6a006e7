import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerLogClassifier, classifyServerLine, type ChannelLevel } from '../../src/lib/serverLog';

test('server log lines -> output channel levels', () => {
  // [stderr line, level, text shown after the channel's own time and level]
  const table: [string, ChannelLevel, string][] = [
    ['2026-11-22 19:20:01,123 INFO ragls.indexer: scan: 6 files', 'info', 'ragls.indexer: scan: 6 files'],
    ['2026-11-22 19:20:01,123 DEBUG ragls.chunker: split x.py', 'debug', 'ragls.chunker: split x.py'],
    ['2026-11-22 19:20:01,123 WARNING ragls.config: ignored qdrant.url from .ragls.toml', 'warn', 'ragls.config: ignored qdrant.url from .ragls.toml'],
    ['2026-11-22 19:20:01,123 ERROR ragls.server: index run failed', 'error', 'ragls.server: index run failed'],
    ['2026-11-22 19:20:01,123 CRITICAL ragls: out of disk', 'error', 'ragls: out of disk'],
    ['INFO ragls.indexer: ready', 'info', 'ragls.indexer: ready'], // the CLI's format has no time
    ['WARNING pygls.server: bad message', 'warn', 'pygls.server: bad message'],
    ['Traceback (most recent call last):', 'error', 'Traceback (most recent call last):'],
    ['/x/onnx.py:3: UserWarning: slow path', 'warn', '/x/onnx.py:3: UserWarning: slow path'],
    ['some stray output', 'info', 'some stray output'],
    ['INFORMATION is not a level', 'info', 'INFORMATION is not a level'],
  ];
  for (const [line, level, text] of table) assert.deepEqual(classifyServerLine(line), { level, text }, line);
});

test('continuation lines keep the level of their record', () => {
  const c = new ServerLogClassifier();
  const lines = [
    '2026-11-22 19:20:01,123 ERROR ragls.server: index run failed',
    'Traceback (most recent call last):',
    '  File "/x/indexer.py", line 3, in run',
    'OSError: [Errno 28] No space left on device',
    '2026-11-22 19:20:02,000 INFO ragls.indexer: retrying',
    '  second line of a multi-line message',
  ];
  assert.deepEqual(
    lines.map((l) => c.classify(l).level),
    ['error', 'error', 'error', 'error', 'info', 'info'],
  );
});
