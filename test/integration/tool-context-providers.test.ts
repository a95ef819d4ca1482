/**
 * Context providers on a running Navi: their sections reach the system prompt the LLM receives,
 * built once per run and shared by its calls; a broken provider is reported and loses only its
 * own section, and they are hot-reloaded with the user tools.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlm, RecordedRequest } from '../fake-llm/index.js';
import { type NaviHandle, repoRoot, tempDir } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, postMessage } from '../support/rest.js';

const profiles = profilesDir([
  plainProfile,
  { ...plainProfile, id: 'planner', name: 'Planner', planning_enabled: true },
]);

function systemPrompt(request: RecordedRequest | undefined): string {
  const first = request?.body.messages?.[0];
  expect(first?.role).toBe('system');
  return typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content);
}

async function sendMessage(navi: NaviHandle, sessionId: string, content = 'hello'): Promise<number> {
  return (await postMessage(navi, sessionId, content)).status;
}

describe('the shipped context providers', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;

  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    ({ fake, navi, close } = await startNaviWithLlm({
      settings: {
        DEFAULT_LLM_BACKEND: 'ollama',
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
        CONTEXT_PROVIDERS_DIR: join(repoRoot, 'context_providers'),
      },
    }));
  });
  afterAll(() => close());

  it('put the date and, once there are any, the open todo items into the system prompt of each run', async () => {
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
      { text: 'Packing.' },
    );
    expect(await sendMessage(navi, id, 'plan my trip')).toBe(200);
    const [before, after] = chatRequests(fake);
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    const first = systemPrompt(before);
    expect(first).toMatch(/## Current date and time\n\w+day, \d{1,2} \w+ \d{4} at \d{2}:\d{2}:\d{2} /);
    expect(first).toContain(`(time zone ${zone}).`);
    // No todo list yet: the section is left out rather than shown empty.
    expect(first).not.toContain('## Open todo items');
    // The prompt is built once per run: the run's second call starts with the very same one
    // (the todo tool's own result tells the model what it set).
    expect(systemPrompt(after)).toBe(first);

    expect(await sendMessage(navi, id, 'what next?')).toBe(200);
    const next = systemPrompt(chatRequests(fake)[2]);
    expect(next).toContain('## Open todo items\n1. Book the train (pending)\n2. Pack the bag (pending)');
    expect(next).toContain('## Current date and time');
    // The system prompt is never stored in the session.
    const context = (await (await fetch(`${navi.url}/sessions/${id}/context`)).json()) as {
      messages: { role: string }[];
    };
    expect(context.messages.some((m) => m.role === 'system')).toBe(false);
  });
});

describe('context providers of the user', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};
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
    ({ fake, navi, close } = await startNaviWithLlm({
      dir,
      settings: { DEFAULT_LLM_BACKEND: 'ollama', PROFILES_DIR: profiles, DEFAULT_PROFILE: 'plain' },
    }));
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds the sections of good providers and reports the broken ones', async () => {
    const id = await navi.createSession();
    fake.enqueue({ text: 'ok' });
    expect(await sendMessage(navi, id)).toBe(200);
    const prompt = systemPrompt(chatRequests(fake)[0]);
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
    const prompt = systemPrompt(chatRequests(fake)[0]);
    expect(prompt).toContain('## Weather\nRain, 12 °C.');
    expect(prompt).not.toContain('Sunny');
    expect(prompt).toContain('## Fixed\nnow provides');
    expect(prompt).not.toContain('## Session');
  });
});

describe('context providers in a planned run', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};
  let dir: string;

  beforeAll(async () => {
    dir = tempDir('navi-providers-once-');
    const providersDir = join(dir, 'context_providers');
    mkdirSync(providersDir);
    writeFileSync(join(providersDir, 'package.json'), '{"type":"module"}\n');
    // Counts its own calls per session, so the prompt shows how often the run asked.
    writeFileSync(
      join(providersDir, 'calls.ts'),
      `export const name = 'Calls';
export async function provide(ctx) {
  const n = ((await ctx.kv.get(ctx.sessionId, 'provider_calls')) ?? 0) + 1;
  await ctx.kv.set(ctx.sessionId, 'provider_calls', n);
  return 'call ' + n;
}
`,
    );
    ({ fake, navi, close } = await startNaviWithLlm({
      dir,
      settings: { DEFAULT_LLM_BACKEND: 'ollama', PROFILES_DIR: profiles, DEFAULT_PROFILE: 'planner' },
    }));
  });
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('run once per run: planning and every turn share one system prompt', async () => {
    const id = await navi.createSession();
    fake.enqueue(
      { text: '1. Write the list.\n2. Report.' },
      { toolCalls: [{ name: 'todo', arguments: { action: 'set', tasks: ['Report'] } }] },
      { text: 'Listed.' },
    );
    expect(await sendMessage(navi, id, 'make a list')).toBe(200);
    const [planning, firstTurn, secondTurn] = chatRequests(fake);
    const prompt = systemPrompt(firstTurn);
    expect(prompt).toContain('## Calls\ncall 1');
    expect(systemPrompt(planning).startsWith(`${prompt}\n\n`)).toBe(true);
    expect(systemPrompt(secondTurn)).toBe(prompt);

    fake.enqueue({ text: 'DIRECT' }, { text: 'Hi again.' });
    expect(await sendMessage(navi, id, 'hello again')).toBe(200);
    expect(systemPrompt(chatRequests(fake)[4])).toContain('## Calls\ncall 2');
  });
});
