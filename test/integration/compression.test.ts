/**
 * Context compression end to end (docs/memory.md#context-compression): a session long enough to compress twice, the
 * display buffer untouched, the kept turns verbatim, every tool call still next to its result,
 * `context_compressed` events; a summariser failure leaves the context as it was and the next
 * run's pre-turn check compresses it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { SessionMessage } from '../../src/protocol/rest.js';
import { type FakeLlm, type RecordedRequest, type ReplyScript, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, startNavi } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { EventClient } from '../support/ws-client.js';

const profiles = profilesDir([{ ...plainProfile, max_iterations: 10 }]);
// Threshold 0.8: compression from 8 000 tokens on. What is kept after a compression is
// estimated at about 1 100 tokens, well below it, so only the scripted figures decide when to
// compress.
const NUM_CTX = 10_000;
const LONG_ARG = 'A'.repeat(500);
const LONG_RESULT_LINE = 'R'.repeat(500);

const isSummaryRequest = (r: RecordedRequest) =>
  String(r.body.messages?.[0]?.content ?? '').startsWith('Summarise the earlier part');

interface Script {
  failSummary: boolean;
  /** Prompt tokens the final answer of the next run reports. */
  finalPromptTokens: number;
  summaries: number;
}

/**
 * Every turn: write a scratchpad section with a long argument, read it back (a long result),
 * then answer. Summary requests get `- SUMMARY-<n>` or an HTTP 500.
 */
function reply(script: Script, request: RecordedRequest): ReplyScript {
  if (isSummaryRequest(request)) {
    if (script.failSummary) return { httpError: { status: 500, body: '{"error":"summariser down"}' } };
    script.summaries += 1;
    return { text: `- SUMMARY-${script.summaries} of what was said`, usage: { prompt: 50, completion: 10 } };
  }
  const messages = request.body.messages ?? [];
  const last = messages.at(-1);
  const turn = [...messages]
    .reverse()
    .find((m) => m.role === 'user' && String(m.content).startsWith('turn '));
  const n = String(turn?.content ?? 'turn ?').slice(5);
  const small = { prompt: 100, completion: 10 };
  if (last?.role === 'user') {
    return {
      toolCalls: [
        {
          id: `w${n}`,
          name: 'scratchpad',
          arguments: { action: 'write', section: `s${n}`, content: `${LONG_RESULT_LINE} ${LONG_ARG}` },
        },
      ],
      usage: small,
    };
  }
  const sinceUser = messages.slice(messages.lastIndexOf(turn!) + 1);
  if (sinceUser.filter((m) => m.role === 'tool').length === 1) {
    return {
      toolCalls: [{ id: `r${n}`, name: 'scratchpad', arguments: { action: 'read', section: `s${n}` } }],
      usage: small,
    };
  }
  return { text: `answer ${n}`, usage: { prompt: script.finalPromptTokens, completion: 10 } };
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

/** Every tool call has its result after it, and every result its call. */
function expectPairedCalls(messages: { role: string; tool_calls?: unknown[]; tool_call_id?: string }[]) {
  const open = new Set<string>();
  const seen = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      expect(open.size).toBe(0);
      for (const c of m.tool_calls as { id?: string; function?: unknown }[]) if (c.id) open.add(c.id);
      continue;
    }
    if (m.role === 'tool') {
      expect(open.has(m.tool_call_id ?? '')).toBe(true);
      open.delete(m.tool_call_id ?? '');
      seen.add(m.tool_call_id ?? '');
      continue;
    }
    expect(open.size).toBe(0);
  }
  expect(open.size).toBe(0);
  return seen;
}

describe('context compression', () => {
  let fake: FakeLlm;
  let navi: NaviHandle;
  const script: Script = { failSummary: false, finalPromptTokens: 100, summaries: 0 };
  beforeAll(async () => {
    fake = await startFakeLlm({ defaultReply: (r) => reply(script, r) });
    navi = await startNavi({
      settings: {
        OLLAMA_HOST: fake.ollamaUrl,
        OLLAMA_DEFAULT_MODEL: 'test-model',
        OLLAMA_NUM_CTX: String(NUM_CTX),
        CONTEXT_KEEP_RECENT: '2',
        CONTEXT_SUMMARY_TEMPERATURE: '0.3',
        PROFILES_DIR: profiles,
        DEFAULT_PROFILE: 'plain',
      },
    });
  });
  afterAll(async () => {
    await navi?.close();
    await fake?.close();
  });

  /**
   * One user turn. Post-turn compression runs after stream_end, so a turn that crosses the
   * threshold waits for its `context_compressed` (or, when the summariser fails, for the
   * attempt to reach the fake) before the test goes on.
   */
  async function turn(
    client: EventClient,
    n: number,
    finalPromptTokens: number,
    after?: 'compressed' | 'summary tried',
  ): Promise<ServerEvent[]> {
    script.finalPromptTokens = finalPromptTokens;
    const from = client.events.length;
    client.send({ type: 'message', content: `turn ${n}` });
    const events = await client.waitForRunEnd(from);
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: 'stream_end', content: `answer ${n}` });
    if (after === 'compressed') {
      const compressed = await client.waitFor(
        (e) => e.type === 'context_compressed' && e.run_id === end.run_id,
        20_000,
        from,
      );
      // Reported after the end of the run, with the run's id and the next seq.
      expect(compressed.seq).toBe((end.seq ?? 0) + 1);
      return [...events, compressed];
    }
    if (after === 'summary tried') {
      const deadline = Date.now() + 20_000;
      while (!fake.requests.some(isSummaryRequest)) {
        if (Date.now() > deadline) throw new Error('the post-turn summary was never requested');
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    return events;
  }

  it('compresses twice, keeps the display buffer and the recent turns, and never splits a tool call', async () => {
    script.failSummary = false;
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id));
    const runs: ServerEvent[][] = [];
    runs.push(await turn(client, 1, 100));
    runs.push(await turn(client, 2, 100));
    runs.push(await turn(client, 3, 100));
    expect(runs.flat().some((e) => e.type === 'context_compressed')).toBe(false);
    fake.requests.length = 0;
    runs.push(await turn(client, 4, 9000, 'compressed')); // post-turn compression
    const firstSummary = fake.requests.filter(isSummaryRequest);
    expect(firstSummary).toHaveLength(1);
    runs.push(await turn(client, 5, 100));
    fake.requests.length = 0;
    runs.push(await turn(client, 6, 9000, 'compressed')); // post-turn compression again
    const secondSummary = fake.requests.filter(isSummaryRequest);
    expect(secondSummary).toHaveLength(1);

    // One context_compressed in runs 4 and 6, after their stream_end; 6 messages per turn.
    const compressed = runs.map((events) => events.filter((e) => e.type === 'context_compressed'));
    expect(compressed.map((c) => c.length)).toEqual([0, 0, 0, 1, 0, 1]);
    expect(compressed[3]![0]).toMatchObject({ messages_before: 24, messages_after: 13 });
    expect(compressed[5]![0]).toMatchObject({ messages_before: 25, messages_after: 13 });
    expect(runs[5]!.at(-2)).toMatchObject({ type: 'stream_end', context_tokens: 9010 });
    expect(runs[5]!.at(-1)).toMatchObject({ type: 'context_compressed' });
    // The figure the event carries is an estimate of what was kept, and the one the session holds.
    const estimate = (compressed[5]![0] as { context_tokens?: number }).context_tokens ?? 0;
    expect(estimate).toBeGreaterThan(0);
    expect(estimate).toBeLessThan(9010);
    const reset = await getJson<{ context_token_count: number }>(`${navi.url}/sessions/${id}`);
    expect(reset.context_token_count).toBe(estimate);

    // The summariser saw the older turns only, cut as docs/memory.md#context-compression says, at the configured temperature.
    const input1 = String(firstSummary[0]!.body.messages?.[1]?.content);
    expect(input1).toContain('User: turn 1');
    expect(input1).toContain('User: turn 2');
    expect(input1).not.toContain('turn 3');
    expect(input1).not.toContain('A'.repeat(200));
    expect(input1).not.toContain('R'.repeat(301));
    expect(input1).toMatch(/Assistant called scratchpad\(.{120}…\)/);
    expect(input1).toMatch(/Result of scratchpad: ## s1\n[\s\S]{294}…\n/);
    expect(input1.length).toBeLessThanOrEqual(12_000);
    expect(firstSummary[0]!.body.options?.temperature).toBe(0.3);
    expect(firstSummary[0]!.body.think).toBe(false);
    const input2 = String(secondSummary[0]!.body.messages?.[1]?.content);
    expect(input2).toMatch(/^Earlier summary:\n- SUMMARY-1/);
    expect(input2).toContain('User: turn 3');
    expect(input2).toContain('User: turn 4');
    expect(input2).not.toContain('turn 5');

    // The display buffer is complete and holds no summary.
    const session = await getJson<{ messages: SessionMessage[]; context_token_count: number }>(
      `${navi.url}/sessions/${id}`,
    );
    expect(session.context_token_count).toBe(estimate);
    expect(session.messages).toHaveLength(36);
    expect(session.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => `turn ${n}`),
    );
    expect(session.messages.some((m) => m.kind === 'summary')).toBe(false);
    expectPairedCalls(session.messages);

    // The context: one summary message (the latest), then turns 5 and 6 exactly as displayed.
    const { messages: context } = await getJson<{ messages: SessionMessage[] }>(
      `${navi.url}/sessions/${id}/context`,
    );
    expect(context[0]).toMatchObject({ role: 'user', kind: 'summary' });
    expect(context[0]!.content).toContain('SUMMARY-2');
    expect(context.filter((m) => m.kind === 'summary')).toHaveLength(1);
    const keptFrom = session.messages.findIndex((m) => m.content === 'turn 5');
    expect(context.slice(1)).toEqual(session.messages.slice(keptFrom));
    expect(expectPairedCalls(context)).toEqual(new Set(['w5', 'r5', 'w6', 'r6']));

    // The next LLM request sees the summary then the kept turns, every call with its result.
    fake.requests.length = 0;
    await turn(client, 7, 100);
    const chat = fake.requests.find((r) => r.kind === 'chat' && !isSummaryRequest(r))!;
    const sent = chat.body.messages ?? [];
    expect(sent[0]?.role).toBe('system');
    expect(String(sent[1]?.content)).toContain('SUMMARY-2');
    // The summary and turn 5 are both user messages: sent as one, as strict chat templates want.
    expect(sent.filter((m) => m.role === 'user').map((m) => String(m.content).slice(0, 6))).toEqual([
      '[Summa',
      'turn 6',
      'turn 7',
    ]);
    expect(String(sent[1]?.content)).toMatch(/SUMMARY-2[\s\S]*\n\nturn 5/);
    expect(sent.filter((m) => m.role === 'tool')).toHaveLength(4);
    // Ollama's wire format pairs results by position: k calls, then exactly k results.
    sent.forEach((m, i) => {
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls.length : 0;
      if (calls > 0) expect(sent.slice(i + 1, i + 1 + calls).map((r) => r.role)).toEqual(['tool']);
      if (m.role === 'tool') expect(sent[i - 1]?.tool_calls).toHaveLength(1);
    });
    await client.close();
  });

  it('leaves the context unchanged when the summariser fails, and compresses before the next turn', async () => {
    const id = await navi.createSession();
    const client = await EventClient.connect(navi.wsUrl(id));
    script.failSummary = true;
    await turn(client, 1, 100);
    await turn(client, 2, 100);
    fake.requests.length = 0;
    const failed = await turn(client, 3, 9000, 'summary tried');
    expect(fake.requests.filter(isSummaryRequest)).toHaveLength(1); // it was tried
    expect(failed.some((e) => e.type === 'context_compressed')).toBe(false);
    expect(failed.at(-1)).toMatchObject({ type: 'stream_end', context_tokens: 9010 });

    const session = await getJson<{ messages: SessionMessage[]; context_token_count: number }>(
      `${navi.url}/sessions/${id}`,
    );
    const { messages: context } = await getJson<{ messages: SessionMessage[] }>(
      `${navi.url}/sessions/${id}/context`,
    );
    expect(context).toEqual(session.messages);
    expect(context).toHaveLength(18);
    expect(session.context_token_count).toBe(9010);

    // The summariser is back: the pre-turn check of the next run compresses first.
    script.failSummary = false;
    fake.requests.length = 0;
    const next = await turn(client, 4, 100);
    const order = fake.requests.map((r) => (isSummaryRequest(r) ? 'summary' : r.kind));
    expect(order[0]).toBe('summary');
    expect(order.filter((k) => k === 'summary')).toHaveLength(1);
    const types = next.map((e) => e.type);
    expect(types.indexOf('context_compressed')).toBeGreaterThan(0);
    expect(types.indexOf('context_compressed')).toBeLessThan(types.indexOf('tool_started'));
    expect(next.find((e) => e.type === 'context_compressed')).toMatchObject({
      // turns 1–3 and the new message; then the summary, turn 3 and the new message
      messages_before: 19,
      messages_after: 8,
    });
    const after = await getJson<{ messages: SessionMessage[] }>(`${navi.url}/sessions/${id}/context`);
    expect(after.messages[0]).toMatchObject({ kind: 'summary' });
    expect(
      after.messages.filter((m) => m.role === 'user' && m.kind !== 'summary').map((m) => m.content),
    ).toEqual(['turn 3', 'turn 4']);
    await client.close();
  });
});
