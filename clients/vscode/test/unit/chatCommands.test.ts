import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { CHAT_COMMANDS, chatIntent, chatRetrieveParams, emptyPromptHint } from '../../src/lib/chatCommands';
import { MAX_QUERY_CHARS } from '../../src/lib/format';
import { PACKAGE_ROOT } from '../support/env';

test('@rag /change asks rag/retrieve with intent "change"', () => {
  assert.equal(chatIntent('change'), 'change');
  assert.deepEqual(chatRetrieveParams('change', ' retry the upload when the connection times out ', undefined), {
    query: 'retry the upload when the connection times out',
    intent: 'change',
  });
  // The user's topK/maxChars go along, and the prompt is clamped as for a question.
  assert.deepEqual(chatRetrieveParams('change', 'fix #12', { topK: 8, maxChars: 6000 }), { query: 'fix #12', topK: 8, maxChars: 6000, intent: 'change' });
  assert.equal(chatRetrieveParams('change', 'x'.repeat(MAX_QUERY_CHARS + 10), undefined).query.length, MAX_QUERY_CHARS);
});

test('a plain @rag ask and /search send no intent (the server default, "question")', () => {
  for (const command of [undefined, 'search', 'unknown']) {
    assert.equal(chatIntent(command), 'question');
    const params = chatRetrieveParams(command, 'where is tax added', { topK: 5, maxChars: null });
    assert.deepEqual(params, { query: 'where is tax added', topK: 5 });
    assert.ok(!('intent' in params), `${command}: no intent key`);
  }
});

test('an empty /change prompt says what to describe', () => {
  assert.match(emptyPromptHint('change'), /^Describe the change to make .*`@rag \/change /);
  assert.match(emptyPromptHint(undefined), /^Ask a question about this workspace/);
  assert.equal(emptyPromptHint('search'), emptyPromptHint(undefined), '/search keeps its hint');
});

test('package.json declares the @rag commands, /change among them', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
  const rag = pkg.contributes.chatParticipants.find((p: { id: string }) => p.id === 'ragls.rag');
  assert.ok(rag, '@rag is contributed');
  const commands = rag.commands as { name: string; description: string }[];
  assert.deepEqual(
    commands.map((c) => c.name),
    [...CHAT_COMMANDS],
  );
  const change = commands.find((c) => c.name === 'change');
  assert.ok(change && /change to make/.test(change.description) && /code it will touch/.test(change.description), JSON.stringify(change));
});
