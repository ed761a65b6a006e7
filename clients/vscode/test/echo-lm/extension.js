// Test-only language model: answers with the last user message it received, inside a code
// fence so the chat view shows it verbatim, and appends every request to $ECHO_LM_OUT.
'use strict';
const fs = require('node:fs');
const vscode = require('vscode');

function partText(part) {
  if (part instanceof vscode.LanguageModelTextPart) return part.value;
  if (part && typeof part.value === 'string') return part.value;
  return '';
}

function messageText(message) {
  return (message.content || []).map(partText).join('');
}

function fenceFor(text) {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function activate(context) {
  const model = {
    id: 'echo',
    name: 'Echo',
    family: 'echo',
    version: '1.0.0',
    detail: 'ragls test model',
    tooltip: 'Answers with its input',
    maxInputTokens: 1000000,
    maxOutputTokens: 1000000,
    capabilities: { imageInput: false, toolCalling: true },
  };
  const provider = {
    provideLanguageModelChatInformation() {
      return [model];
    },
    async provideLanguageModelChatResponse(_model, messages, _options, progress) {
      const users = messages.filter((m) => m.role === vscode.LanguageModelChatMessageRole.User);
      const last = users.length ? messageText(users[users.length - 1]) : '';
      const out = process.env.ECHO_LM_OUT;
      if (out) {
        fs.appendFileSync(out, JSON.stringify({ time: new Date().toISOString(), messages: messages.map((m) => ({ role: m.role, text: messageText(m) })), last }) + '\n');
      }
      const fence = fenceFor(last);
      progress.report(new vscode.LanguageModelTextPart(`ECHO-BEGIN\n\n${fence}text\n${last}\n${fence}\n\nECHO-END`));
    },
    async provideTokenCount(_model, text) {
      const s = typeof text === 'string' ? text : messageText(text);
      return Math.ceil(s.length / 4);
    },
  };
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider('echo-lm', provider));
  // The e2e reaches the extension API through this test-only command: list vscode.lm.tools and
  // call ragls_search with vscode.lm.invokeTool, as agent mode would (a search and a references action), and read the chat
  // participants of the installed ragls extension (its slash commands); the answer goes to
  // $ECHO_LM_OUT.tool.json. None of this ships in ragls.vsix.
  context.subscriptions.push(
    vscode.commands.registerCommand('echoLm.probeRaglsTool', async () => {
      const out = `${process.env.ECHO_LM_OUT || '/tmp/echo-lm.jsonl'}.tool.json`;
      const record = { tools: vscode.lm.tools.map((t) => ({ name: t.name, tags: t.tags, inputSchema: t.inputSchema })) };
      const ragls = vscode.extensions.getExtension('ragls.ragls-vscode');
      record.chatParticipants = (ragls && ragls.packageJSON.contributes && ragls.packageJSON.contributes.chatParticipants) || null;
      try {
        const result = await vscode.lm.invokeTool('ragls_search', {
          toolInvocationToken: undefined,
          input: { query: 'calculate the invoice total including tax', topK: 3, languages: ['python'] },
        });
        record.text = result.content.map(partText).join('');
      } catch (e) {
        record.error = String(e && e.message ? e.message : e);
      }
      // Issue 53: a code graph action of the same tool (rag/references on the real server).
      try {
        const refs = await vscode.lm.invokeTool('ragls_search', {
          toolInvocationToken: undefined,
          input: { action: 'references', symbol: 'Invoice' },
        });
        record.referencesText = refs.content.map(partText).join('');
      } catch (e) {
        record.referencesError = String(e && e.message ? e.message : e);
      }
      try {
        await vscode.lm.invokeTool('ragls_search', { toolInvocationToken: undefined, input: { query: 'q', topK: 1000 } });
        record.badInput = 'no error';
      } catch (e) {
        record.badInput = String(e && e.message ? e.message : e);
      }
      fs.writeFileSync(out, JSON.stringify(record));
    }),
  );
  // Ask for the models once so the chat view learns about them before the first request
  // (it resolves a provider's models lazily otherwise).
  void vscode.lm.selectChatModels({ vendor: 'echo-lm' });
}

function deactivate() {}

module.exports = { activate, deactivate };
