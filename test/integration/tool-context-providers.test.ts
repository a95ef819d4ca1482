/**
 * Context providers on a running Navi: their sections reach the system prompt the LLM receives
 * at every call, a broken provider is reported and loses only its own section, and they are
 * hot-reloaded with the user tools.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, type RecordedRequest, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, repoRoot, startNavi, tempDir } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

const profiles = profilesDir([plainProfile]);

function systemPrompt(request: RecordedRequest | undefined): string {
  const first = request?.body.messages?.[0];
  expect(first?.role).toBe('system');
  return typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content);
}

function chats(fake: FakeLlm): RecordedRequest[] {
  return fake.requests.filter((r) => r.kind === 'chat');
}

async function sendMessage(navi: NaviHandle, sessionId: string, content = 'hello'): Promise<number> {
  const res = await fetch(`${navi.url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content }),
  });
  return res.status;
}

describe('the shipped context providers', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;

  beforeAll(async () => {
    fake = await startFakeLlm();
    navi = await startNavi({
      settings: {
        DEFAULT_LLM_BACKEND: 'ollama',
        OLLAMA_HOST: fake.ollamaUrl,
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        CONTEXT_PROVIDERS_DIR: join(repoRoot, 'context_providers'),
      },
    });
  });
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  it('put the date and, once there are any, the open todo items into every system prompt', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      {
        toolCalls: [
          {
            name: 'todo',
            arguments: { action: 'set', tasks: ['Book the train', 'Pack the bag'] },
          },
        ],
      },
      { text: 'Planned.' },
    );
    expect(await sendMessage(navi, id, 'plan my trip')).toBe(200);
    const [before, after] = chats(fake);
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const first = systemPrompt(before);
    expect(first).toMatch(/## Current date and time\n\w+day, \d{1,2} \w+ \d{4} at \d{2}:\d{2}:\d{2} /);
    expect(first).toContain(`(time zone ${zone}).`);
    // No todo list yet: the section is left out rather than shown empty.
    expect(first).not.toContain('## Open todo items');

    const second = systemPrompt(after);
    expect(second).toContain('## Open todo items\n1. Book the train (pending)\n2. Pack the bag (pending)');
    expect(second).toContain('## Current date and time');
    // The system prompt is rebuilt for each call and never stored in the session.
    const context = (await (await fetch(`${navi.url}/sessions/${id}/context`)).json()) as {
      messages: { role: string }[];
    };
    expect(context.messages.some((m) => m.role === 'system')).toBe(false);
  });
});

describe('context providers of the user', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let dir: string;
  let providersDir: string;

  const write = (file: string, text: string) => writeFileSync(join(providersDir, file), text);

  beforeAll(async () => {
    dir = tempDir('navi-providers-');
    providersDir = join(dir, 'context_providers');
    mkdirSync(providersDir);
    writeFileSync(join(providersDir, 'package.json'), '{"type":"module"}\n');
    write(
      'weather.ts',
      "export const name = 'Weather';\nexport async function provide(): Promise<string> { return 'Sunny, 21 °C.'; }\n",
    );
    write(
      'session.ts',
      "export const name = 'Session';\nexport async function provide(ctx: { sessionId: string; profileId: string }) { return 'id ' + ctx.sessionId + ', profile ' + ctx.profileId; }\n",
    );
    write('syntax.ts', "export const name = 'Broken';\nexport async function provide( { return 'x'; }\n");
    write('missing.ts', "export const name = 'No provide';\n");
    write(
      'throws.ts',
      "export const name = 'Thrower';\nexport async function provide(): Promise<string> { throw new Error('sensor offline'); }\n",
    );
    fake = await startFakeLlm();
    navi = await startNavi({
      dir,
      settings: {
        DEFAULT_LLM_BACKEND: 'ollama',
        OLLAMA_HOST: fake.ollamaUrl,
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
      },
    });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds the sections of good providers and reports the broken ones', async () => {
    const id = await navi.createSession();
    fake.enqueue({ text: 'ok' });
    expect(await sendMessage(navi, id)).toBe(200);
    const prompt = systemPrompt(chats(fake)[0]);
    expect(prompt).toContain('## Weather\nSunny, 21 °C.');
    expect(prompt).toContain(`## Session\nid ${id}, profile plain`);
    // A provider that throws at call time loses its section; the run does not notice.
    expect(prompt).not.toContain('## Thrower');
    expect(prompt).not.toContain('sensor offline');

    const errors = (await (await fetch(`${navi.url}/agents/tools/errors`)).json()) as {
      origin: string;
      source: string;
      error: string;
    }[];
    const providerErrors = new Map(
      errors.filter((e) => e.source === 'context_provider').map((e) => [e.origin, e.error]),
    );
    expect([...providerErrors.keys()].sort()).toEqual(['missing.ts', 'syntax.ts']);
    expect(providerErrors.get('syntax.ts')).toMatch(/^syntax error:/);
    expect(providerErrors.get('missing.ts')).toBe('missing exports: provide');
  });

  it('reloads edited, added, fixed and deleted providers with POST /agents/tools/reload', async () => {
    write(
      'weather.ts',
      "export const name = 'Weather';\nexport async function provide(): Promise<string> { return 'Rain, 12 °C.'; }\n",
    );
    write(
      'missing.ts',
      "export const name = 'Fixed';\nexport async function provide(): Promise<string> { return 'now provides'; }\n",
    );
    rmSync(join(providersDir, 'session.ts'));
    const res = await fetch(`${navi.url}/agents/tools/reload`, { method: 'POST' });
    expect(res.status).toBe(200);
    const report = (await res.json()) as { providers: string[]; errors: { origin: string }[] };
    expect(report.providers.sort()).toEqual(['Fixed', 'Thrower', 'Weather']);
    expect(report.errors.map((e) => e.origin)).toEqual(['syntax.ts (context provider)']);

    const id = await navi.createSession();
    fake.enqueue({ text: 'ok' });
    expect(await sendMessage(navi, id)).toBe(200);
    const prompt = systemPrompt(chats(fake)[0]);
    expect(prompt).toContain('## Weather\nRain, 12 °C.');
    expect(prompt).not.toContain('Sunny');
    expect(prompt).toContain('## Fixed\nnow provides');
    expect(prompt).not.toContain('## Session');
  });
});
