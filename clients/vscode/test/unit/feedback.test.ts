import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { addMarks, answerOf, Answers, feedbackParams, feedbackSummary, inAnswer, markRating, MAX_MARKS, ratingOfKind, selectionLines } from '../../src/lib/feedback';
import type { Chunk } from '../../src/lib/protocol';
import { PACKAGE_ROOT } from '../support/env';

const URI = 'file:///ws/billing/invoice.py';

function chunk(uri: string, start: number, endExclusive: number): Chunk {
  return {
    uri,
    path: 'billing/invoice.py',
    range: { start: { line: start, character: 0 }, end: { line: endExclusive, character: 0 } },
    symbol: null,
    kind: 'function',
    language: 'python',
    score: 1,
    content: '',
    folder: 'ws',
    folderUri: 'file:///ws',
  } as Chunk;
}

test('an answer is kept only with a resultId; its chunks as 1-based inclusive lines', () => {
  assert.equal(answerOf(undefined), undefined);
  assert.equal(answerOf({ resultId: null, chunks: [chunk(URI, 0, 3)] }), undefined, 'rating off: nothing to rate');
  const a = answerOf({ resultId: 'r1', chunks: [chunk(URI, 21, 30)] });
  assert.deepEqual(a, { resultId: 'r1', chunks: [{ uri: URI, first: 22, last: 30 }], marks: [] });
  assert.ok(inAnswer(a!, URI, 22) && inAnswer(a!, URI, 30));
  assert.ok(!inAnswer(a!, URI, 21) && !inAnswer(a!, URI, 31) && !inAnswer(a!, 'file:///ws/other.py', 25));
});

test('the chat thumbs: Helpful is up, Unhelpful is down', () => {
  assert.equal(ratingOfKind(1), 'up');
  assert.equal(ratingOfKind(0), 'down');
});

test('a mark: the thumbs the user gave, else up when a mark is in the answer, else down', () => {
  const a = answerOf({ resultId: 'r1', chunks: [chunk(URI, 21, 30)] })!;
  assert.equal(markRating(a, [{ uri: URI, line: 25 }]), 'up', 'the answer showed it');
  assert.equal(markRating(a, [{ uri: URI, line: 5 }]), 'down', 'the answer missed it');
  a.rating = 'down';
  assert.equal(markRating(a, [{ uri: URI, line: 25 }]), 'down', "the user's own rating wins");
});

test('marks accumulate without duplicates, at most 50, and go in the params', () => {
  const a = answerOf({ resultId: 'r1', chunks: [] })!;
  assert.deepEqual(feedbackParams(a, 'up'), { resultId: 'r1', rating: 'up' }, 'no relevant key without marks');
  addMarks(a, [{ path: '/ws/a.py', line: 3 }]);
  addMarks(a, [{ path: '/ws/a.py', line: 3 }, { path: '/ws/b.py', line: 1 }]);
  assert.deepEqual(feedbackParams(a, 'down'), { resultId: 'r1', rating: 'down', relevant: [{ path: '/ws/a.py', line: 3 }, { path: '/ws/b.py', line: 1 }] });
  addMarks(a, Array.from({ length: 60 }, (_, i) => ({ path: '/ws/c.py', line: i + 1 })));
  assert.equal(a.marks.length, MAX_MARKS);
  assert.deepEqual(a.marks[MAX_MARKS - 1], { path: '/ws/c.py', line: 60 }, 'the newest kept');
});

test('selections mark their first lines (1-based), once each', () => {
  assert.deepEqual(selectionLines([{ start: { line: 4 } }, { start: { line: 9 } }, { start: { line: 4 } }]), [5, 10]);
});

test('the summary says what was stored, or why not', () => {
  assert.equal(feedbackSummary('up', 0, { stored: true, folders: ['shop'], message: null }), 'rating stored (Helpful) in shop.');
  assert.equal(feedbackSummary('down', 2, { stored: true, folders: ['a', 'b'], message: null }), 'rating stored (Not helpful, 2 places marked) in a, b.');
  assert.equal(feedbackSummary('up', 0, { stored: false, folders: [], message: 'rating is off' }), 'rating not stored: rating is off');
});

test('the last answers: by id, the newest last, bounded', () => {
  const answers = new Answers(2);
  assert.equal(answers.last(), undefined);
  for (const id of ['a', 'b', 'c']) answers.remember({ resultId: id, chunks: [], marks: [] });
  assert.equal(answers.get('a'), undefined, 'the oldest dropped');
  assert.equal(answers.get('b')?.resultId, 'b');
  assert.equal(answers.last()?.resultId, 'c');
  assert.equal(answers.get(42), undefined);
});

test('package.json contributes RAG: This is the code I meant, in the editor menu after an @rag answer', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
  const cmd = pkg.contributes.commands.find((c: { command: string }) => c.command === 'ragls.markRelevant');
  assert.deepEqual(cmd, { command: 'ragls.markRelevant', title: 'This is the code I meant', category: 'RAG' });
  const menu = pkg.contributes.menus['editor/context'].find((m: { command: string }) => m.command === 'ragls.markRelevant');
  assert.match(menu.when, /ragls\.canMark/);
});
