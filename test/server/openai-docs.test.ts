/**
 * The examples of docs/openai-api.md, taken from the page as written and run for real against a
 * Navi with a token and the fake LLM: the `openai` npm snippets as one node program, the curl
 * commands through a shell. Only the port changes. What the API does in detail is tested in
 * openai-api.test.ts and openai-errors.test.ts; this keeps the page true.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PLANNING_INSTRUCTION } from '../../src/agent/planning.js';
import { repoRoot } from '../support/navi.js';
import { runProgram } from '../support/navi-process.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { chatRequests } from '../support/rest.js';

const TOKEN = 'docs-token-0123456789';
const DOC_URL = 'http://127.0.0.1:8000';

let stack: NaviWithLlm;
let work: string;

beforeAll(async () => {
  stack = await startNaviWithLlm({ settings: { NAVI_API_TOKEN: TOKEN } });
  work = mkdtempSync(join(tmpdir(), 'navi-openai-docs-'));
  // The snippets import 'openai' as a reader's project would: from a node_modules beside them.
  symlinkSync(join(repoRoot, 'node_modules'), join(work, 'node_modules'), 'dir');
});
afterEach(() => stack.fake.reset());
afterAll(async () => {
  await stack?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The fenced blocks of one language on the page, in order. */
function codeBlocks(language: string): string[] {
  const page = readFileSync(join(repoRoot, 'docs/openai-api.md'), 'utf8');
  return [...page.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    ([, body = '']) => body,
  );
}

/** Answers DIRECT to the planning call of the default profile (which plans), `answer` to the rest. */
function answerWith(answer: string): void {
  stack.fake.setDefault((request) =>
    String(request.body.messages?.[0]?.content ?? '').includes(PLANNING_INSTRUCTION)
      ? { text: 'DIRECT' }
      : { text: answer, chunkSize: 4 },
  );
}

/** Runs a program to its end in the test's folder; resolves with its exit code and output. */
const run = (command: string, args: string[], env: NodeJS.ProcessEnv) => runProgram(command, args, env, work);

describe('docs/openai-api.md examples', () => {
  it('the openai npm snippets stream an answer, then continue the same session', async () => {
    const snippets = codeBlocks('js');
    expect(snippets).toHaveLength(2);
    for (const snippet of snippets) expect(snippet).not.toContain('localhost');
    answerWith('Your list holds one task.');
    const file = join(work, 'snippets.mjs');
    writeFileSync(file, snippets.join('\n').replaceAll(DOC_URL, stack.navi.url));
    const result = await run(process.execPath, [file], { PATH: process.env.PATH, NAVI_API_TOKEN: TOKEN });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Your list holds one task.');
    expect(result.stderr).toMatch(/prompt_tokens/);
    // The second request ran in the first one's session: the model read the first exchange too.
    const last = chatRequests(stack.fake).at(-1);
    const said = JSON.stringify(last?.body.messages);
    expect(said).toContain('Hello');
    expect(said).toContain('And what did I just say?');
  });

  it('the curl commands list the models, answer with the session header, and stream into that session', async () => {
    const [script = ''] = codeBlocks('sh');
    expect(script).toContain(DOC_URL);
    answerWith('Hello from Navi.');
    const sessionId = await stack.navi.services.sessions
      .create({ id: randomUUID(), profile_id: 'secretary' })
      .then((s) => s.id);
    const file = join(work, 'curl.sh');
    writeFileSync(
      file,
      `set -e\n${script.replaceAll(DOC_URL, stack.navi.url).replace('<the session id>', sessionId)}`,
    );
    const result = await run('sh', [file], { PATH: process.env.PATH, NAVI_API_TOKEN: TOKEN });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('"id":"navi:secretary"');
    expect(result.stdout).toMatch(/x-navi-session-id: [0-9a-f-]{36}/i);
    expect(result.stdout).toContain('"content":"Hello from Navi."');
    expect(result.stdout).toContain('data: [DONE]');
    const messages = await stack.navi.services.sessions.getMessages(sessionId);
    expect(messages.map((m) => m.content)).toEqual(['Tell me more', 'Hello from Navi.']);
  });
});
