/**
 * An MCP server asking back during a call (docs/mcp.md#elicitation, #sampling), end to end: the
 * fixture server (src/mcp/fixtures/asking-server.ts, a real stdio child of Navi) asks for a form
 * or for Navi's model, the person answers over a real WebSocket, and what the server received
 * comes back as the tool's result, which the fake LLM reads in the next request.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_FORM_NOTES } from '../../src/agent/tool-turn.js';
import type { RunInput } from '../../src/agent/types.js';
import { CALLS_OF_SEVERAL_RUNS } from '../../src/mcp/client-requests.js';
import { type EventOf, isTerminalEvent, type ServerEvent } from '../../src/protocol/events.js';
import {
  CLIENT_CANNOT_CONFIRM_SAMPLING,
  RECALL_CANNOT_CONFIRM_SAMPLING,
} from '../../src/server/agent-run.js';
import { startHeadlessRun } from '../../src/server/headless-run.js';
import type { RecordedRequest } from '../fake-llm/index.js';
import { repoRoot, tempDir } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, postMessage } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const ASK = 'mcp__asking__ask';
const SAMPLE = 'mcp__asking__sample';

const booking = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 2 },
    guests: { type: 'integer', title: 'Guests', minimum: 1, maximum: 12, default: 2 },
    vegan: { type: 'boolean', default: false },
    area: {
      type: 'string',
      oneOf: [
        { const: 'in', title: 'Inside' },
        { const: 'out', title: 'Terrace' },
      ],
    },
  },
  required: ['name', 'guests'],
};

function toolText(request: RecordedRequest | undefined): string {
  const message = request?.body.messages?.filter((m) => m.role === 'tool').at(-1);
  return typeof message?.content === 'string' ? message.content : '';
}

describe('MCP servers asking back: elicitation and sampling', () => {
  const dir = tempDir('navi-mcp-asking-');
  const serversDir = join(dir, 'servers');
  let app: NaviWithLlm;
  let cookie: string;

  beforeAll(async () => {
    mkdirSync(serversDir);
    writeFileSync(
      join(serversDir, 'asking.json'),
      JSON.stringify({
        name: 'asking',
        command: process.execPath,
        args: ['--import', 'tsx', join(repoRoot, 'src', 'mcp', 'fixtures', 'asking-server.ts')],
        cwd: repoRoot,
      }),
    );
    app = await startNaviWithLlm({
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        PROFILES_DIR: profilesDir([plainProfile]),
        DEFAULT_PROFILE: 'plain',
        MCP_SERVERS_DIR: serversDir,
      },
    });
    await app.navi.services.mcp?.ready();
    expect(app.navi.services.mcp?.server('asking')?.state).toBe('ready');
    cookie = await app.navi.pair();
  }, 60_000);

  // A test that fails half-way leaves replies queued; the next one starts from none.
  beforeEach(() => app.fake.reset());

  afterAll(async () => {
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function watch(): Promise<{ id: string; client: EventClient }> {
    const id = await app.navi.createSession();
    const client = await EventClient.connect(app.navi.wsUrl(id), { headers: { cookie } });
    return { id, client };
  }

  function nextError(client: EventClient): Promise<EventOf<'error'>> {
    const from = client.events.length;
    return client.waitFor((e) => e.type === 'error', 15_000, from) as Promise<EventOf<'error'>>;
  }

  const ofType = <T extends ServerEvent['type']>(events: ServerEvent[], type: T) =>
    events.filter((e) => e.type === type) as EventOf<T>[];

  it('shows the form, refuses bad answers with the field and why, and sends the checked answer with defaults', async () => {
    const { client } = await watch();
    app.fake.enqueue(
      { toolCalls: [{ id: 'c1', name: ASK, arguments: { message: 'Book a table?', schema: booking } }] },
      { text: 'Booked.' },
    );
    const mark = client.events.length;
    client.send({ type: 'message', content: 'Book me a table' });
    const request = (await client.waitFor(
      (e) => e.type === 'elicitation_request',
    )) as EventOf<'elicitation_request'>;
    expect(request).toMatchObject({ call_id: 'c1', server: 'asking', message: 'Book a table?' });
    expect(request.form.fields.map((f) => [f.name, f.type])).toEqual([
      ['name', 'text'],
      ['guests', 'number'],
      ['vegan', 'checkbox'],
      ['area', 'select'],
    ]);
    const id = request.elicitation_id;

    let error = nextError(client);
    client.send({ type: 'elicitation_answer', elicitation_id: 'no-such-form', action: 'accept', values: {} });
    expect(await error).toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/No form of this session/),
    });

    error = nextError(client);
    client.send({ type: 'elicitation_answer', elicitation_id: id, action: 'maybe' });
    expect((await error).message).toMatch(/action/);

    error = nextError(client);
    client.send({ type: 'elicitation_answer', elicitation_id: id, action: 'accept', values: 'Ada' });
    expect((await error).message).toMatch(/values/);

    error = nextError(client);
    client.send({
      type: 'elicitation_answer',
      elicitation_id: id,
      action: 'accept',
      values: { name: 'A', guests: 40 },
    });
    const unfit = await error;
    expect(unfit.code).toBe('BAD_REQUEST');
    expect(unfit.message).toMatch(/Name: must NOT have fewer than 2 characters/);
    expect(unfit.message).toMatch(/Guests: must be <= 12/);
    expect(unfit.message).toMatch(/the form is still open/);

    error = nextError(client);
    client.send({
      type: 'elicitation_answer',
      elicitation_id: id,
      action: 'decline',
      values: { name: 'Ada' },
    });
    expect((await error).message).toMatch(/values go only with "accept"/);

    // Still open: the right answer is taken, the form's strings turned into the schema's types.
    client.send({
      type: 'elicitation_answer',
      elicitation_id: id,
      action: 'accept',
      values: { name: 'Ada', guests: '', area: 'out' },
    });
    const events = await client.waitForRunEnd(mark);
    const resolved = ofType(events, 'elicitation_resolved');
    expect(resolved).toEqual([expect.objectContaining({ elicitation_id: id, action: 'accept' })]);
    expect(resolved[0]).not.toHaveProperty('reason');
    const order = events
      .map((e) => e.type)
      .filter((t) => t.startsWith('tool_') || t.startsWith('elicitation_'));
    expect(order).toEqual(['tool_started', 'elicitation_request', 'elicitation_resolved', 'tool_call']);
    expect(JSON.parse(toolText(chatRequests(app.fake).at(-1)))).toEqual({
      action: 'accept',
      content: { name: 'Ada', guests: 2, vegan: false, area: 'out' },
    });

    error = nextError(client);
    client.send({
      type: 'elicitation_answer',
      elicitation_id: id,
      action: 'accept',
      values: { name: 'Ada' },
    });
    expect((await error).code).toBe('NOT_FOUND');
    await client.close();
  });

  it('sends the decline and the cancel of the person back to the server, with nothing added for the model', async () => {
    const { client } = await watch();
    for (const action of ['decline', 'cancel'] as const) {
      app.fake.enqueue(
        {
          toolCalls: [
            {
              id: `c-${action}`,
              name: ASK,
              arguments: {
                message: 'Share your email?',
                schema: { type: 'object', properties: { email: { type: 'string', format: 'email' } } },
              },
            },
          ],
        },
        { text: 'Fine.' },
      );
      const mark = client.events.length;
      client.send({ type: 'message', content: `ask, then ${action}` });
      const request = (await client.waitFor(
        (e) => e.type === 'elicitation_request',
        15_000,
        mark,
      )) as EventOf<'elicitation_request'>;
      client.send({ type: 'elicitation_answer', elicitation_id: request.elicitation_id, action });
      const events = await client.waitForRunEnd(mark);
      expect(ofType(events, 'elicitation_resolved')[0]).toMatchObject({ action });
      expect(toolText(chatRequests(app.fake).at(-1))).toBe(JSON.stringify({ action }));
    }
    await client.close();
  });

  it('declines a form of a run nobody watches, and the model reads why', async () => {
    const id = await app.navi.createSession();
    app.fake.enqueue(
      { toolCalls: [{ id: 'c-headless', name: ASK, arguments: { message: 'Which day?', schema: booking } }] },
      { text: 'Nobody answered.' },
    );
    const res = await postMessage(app.navi, id, 'Book it');
    expect(res.status).toBe(200);
    const text = toolText(chatRequests(app.fake).at(-1));
    expect(text).toMatch(/^\{"action":"decline"\}/);
    expect(text).toContain(
      '[Navi: MCP server asking asked the person for input ("Which day?"); Navi declined it because nobody is connected to answer it.]',
    );
  });

  it('notes only the first forms Navi declined on its own, so a server asking in a loop cannot grow the result', async () => {
    const id = await app.navi.createSession();
    app.fake.enqueue(
      { toolCalls: [{ id: 'c-many', name: 'mcp__asking__ask_many', arguments: { count: 7 } }] },
      { text: 'Nobody answered.' },
    );
    expect((await postMessage(app.navi, id, 'Ask away')).status).toBe(200);
    const text = toolText(chatRequests(app.fake).at(-1));
    expect(text).toMatch(/^\["decline","decline","decline","decline","decline","decline","decline"\]/);
    expect(text.match(/asked the person for input/g)).toHaveLength(MAX_FORM_NOTES);
    expect(text).toContain('("Question 3?")');
    expect(text).not.toContain('Question 4?');
    expect(text).toContain(`${7 - MAX_FORM_NOTES} more requests of the server ended the same way.]`);
  });

  it('cancels an open form when the run is stopped', async () => {
    const { id, client } = await watch();
    app.fake.enqueue({
      toolCalls: [{ id: 'c-stop', name: ASK, arguments: { message: 'Wait for me', schema: booking } }],
    });
    const mark = client.events.length;
    client.send({ type: 'message', content: 'ask and wait' });
    await client.waitFor((e) => e.type === 'elicitation_request', 15_000, mark);
    await fetch(`${app.navi.url}/sessions/${id}/stop`, { method: 'POST', headers: { cookie } });
    const events = await client.waitForRunEnd(mark);
    expect(ofType(events, 'elicitation_resolved')[0]).toMatchObject({
      action: 'cancel',
      reason: 'the run was stopped before anyone answered',
    });
    expect(events.at(-1)?.type).toBe('stream_stopped');
    await client.close();
  });

  it("answers a server's sampling request with Navi's model once the person approves, within Navi's limit", async () => {
    const { client } = await watch();
    app.fake.enqueue(
      {
        toolCalls: [
          {
            id: 'c-sample',
            name: SAMPLE,
            arguments: {
              prompt: 'Summarise: tea is good.',
              max_tokens: 100_000,
              system: 'Be brief.',
              stop: ['STOP'],
            },
          },
        ],
      },
      { text: 'Tea is good.STOP and more' },
      { text: 'The server has its summary.' },
    );
    const mark = client.events.length;
    client.send({ type: 'message', content: 'Summarise through the server' });
    const confirm = (await client.waitFor(
      (e) => e.type === 'tool_confirm_request',
      15_000,
      mark,
    )) as EventOf<'tool_confirm_request'>;
    expect(confirm).toMatchObject({
      call_id: 'c-sample/sampling/1',
      tool: 'mcp_sampling',
      args: {
        server: 'asking',
        system_prompt: 'Be brief.',
        messages: [{ role: 'user', text: 'Summarise: tea is good.' }],
        max_tokens: 4096,
        model_hints: ['small'],
        // The fake LLM listens on this machine: the prompt would not leave it.
        backend: {
          id: 'openai',
          description: expect.stringMatching(/^openai at http:\/\/127\.0\.0\.1/),
          location: 'local',
        },
        model: expect.any(String),
      },
    });
    client.send({ type: 'tool_confirm', call_id: confirm.call_id, approved: true });
    await client.waitForRunEnd(mark);
    const chats = chatRequests(app.fake);
    const sampling = chats.at(-2);
    expect(sampling?.body.model).toBe((confirm.args as { model: string }).model);
    expect(sampling?.body.max_tokens).toBe(4096);
    expect(sampling?.body.tools).toBeUndefined();
    expect(sampling?.body.messages?.map((m) => [m.role, m.content])).toEqual([
      ['system', 'Be brief.'],
      ['user', 'Summarise: tea is good.'],
    ]);
    expect(JSON.parse(toolText(chats.at(-1)))).toMatchObject({
      role: 'assistant',
      content: { type: 'text', text: 'Tea is good.' },
      stopReason: 'stopSequence',
    });
    await client.close();
  });

  it('refuses sampling the person denies, and sampling nobody can approve, with the reason', async () => {
    const { client } = await watch();
    app.fake.enqueue(
      { toolCalls: [{ id: 'c-deny', name: SAMPLE, arguments: { prompt: 'Hi', max_tokens: 10 } }] },
      { text: 'Denied then.' },
    );
    const mark = client.events.length;
    client.send({ type: 'message', content: 'sample' });
    const confirm = (await client.waitFor(
      (e) => e.type === 'tool_confirm_request',
      15_000,
      mark,
    )) as EventOf<'tool_confirm_request'>;
    client.send({ type: 'tool_confirm', call_id: confirm.call_id, approved: false });
    await client.waitForRunEnd(mark);
    const before = chatRequests(app.fake).length;
    expect(toolText(chatRequests(app.fake).at(-1))).toMatch(
      /^failed: MCP error -1: Navi refused to sample: the person did not allow it$/,
    );
    await client.close();

    const headless = await app.navi.createSession();
    app.fake.enqueue(
      { toolCalls: [{ id: 'c-nobody', name: SAMPLE, arguments: { prompt: 'Hi', max_tokens: 10 } }] },
      { text: 'Nobody.' },
    );
    expect((await postMessage(app.navi, headless, 'sample')).status).toBe(200);
    const chats = chatRequests(app.fake);
    // The agent's two requests only: the model never answered for the server.
    expect(chats.length - before).toBe(2);
    expect(toolText(chats.at(-1))).toMatch(
      /Navi refused to sample: nobody allowed it \(nobody is connected to approve it\)/,
    );
  });

  it('refuses sampling in a recall and a client run with a reason of its own, naming no policy', async () => {
    const runs: [Omit<RunInput, 'content'>, string][] = [
      [{ trigger: 'recall' }, RECALL_CANNOT_CONFIRM_SAMPLING],
      [{ trigger: 'user', source: 'openai' }, CLIENT_CANNOT_CONFIRM_SAMPLING.openai],
      [{ trigger: 'user', source: 'mcp' }, CLIENT_CANNOT_CONFIRM_SAMPLING.mcp],
    ];
    for (const [input, reason] of runs) {
      const id = await app.navi.createSession();
      app.fake.enqueue(
        { toolCalls: [{ id: 'c-auto', name: SAMPLE, arguments: { prompt: 'Hi', max_tokens: 10 } }] },
        { text: 'Refused.' },
      );
      const ended = new Promise<ServerEvent[]>((resolve, reject) => {
        const events: ServerEvent[] = [];
        startHeadlessRun(app.navi.app.navi.runs, id, { content: 'sample', ...input }, (event) => {
          events.push(event);
          if (isTerminalEvent(event)) resolve(events);
        }).catch(reject);
      });
      const call = ofType(await ended, 'tool_call')[0];
      expect(call?.result).toContain(`Navi refused to sample: nobody allowed it (${reason})`);
      expect(call?.result).not.toMatch(/autonomous|trusted_tools/);
    }
  });

  it("declines a form while calls of two runs wait on the server, and notes it in both calls' results without the question", async () => {
    const { client } = await watch();
    app.fake.enqueue({
      toolCalls: [{ id: 'c-first', name: ASK, arguments: { message: 'Your name?', schema: booking } }],
    });
    const mark = client.events.length;
    client.send({ type: 'message', content: 'Ask me' });
    const open = (await client.waitFor(
      (e) => e.type === 'elicitation_request',
      15_000,
      mark,
    )) as EventOf<'elicitation_request'>;

    const other = await app.navi.createSession();
    app.fake.enqueue(
      {
        toolCalls: [{ id: 'c-second', name: ASK, arguments: { message: 'Secret plans?', schema: booking } }],
      },
      { text: 'Declined.' },
    );
    expect((await postMessage(app.navi, other, 'Ask too')).status).toBe(200);
    const second = toolText(chatRequests(app.fake).at(-1));
    expect(second).toMatch(/^\{"action":"decline"\}/);
    expect(second).toContain(
      `[Navi: MCP server asking asked the person for input; Navi declined it because ${CALLS_OF_SEVERAL_RUNS}.]`,
    );

    app.fake.enqueue({ text: 'Thanks.' });
    client.send({
      type: 'elicitation_answer',
      elicitation_id: open.elicitation_id,
      action: 'accept',
      values: { name: 'Ada' },
    });
    await client.waitForRunEnd(mark);
    const first = toolText(chatRequests(app.fake).at(-1));
    expect(first).toMatch(/^\{"action":"accept"/);
    expect(first).toContain(`Navi declined it because ${CALLS_OF_SEVERAL_RUNS}.`);
    // Neither run reads the other's question.
    expect(first).not.toContain('Secret plans?');
    await client.close();
  });

  it('declines a form a server sends while no call of it is in flight', async () => {
    const id = await app.navi.createSession();
    app.fake.enqueue(
      { toolCalls: [{ id: 'c-idle', name: 'mcp__asking__ask_idle', arguments: { ms: 50 } }] },
      { text: 'ok' },
    );
    expect((await postMessage(app.navi, id, 'ask later')).status).toBe(200);
    const mcp = app.navi.services.mcp;
    if (!mcp) throw new Error('Navi has no MCP manager');
    let late: unknown[] = [];
    for (let i = 0; i < 200 && late.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      const result = await mcp.callRaw('asking', 'late_answers', {}, new AbortController().signal);
      late = JSON.parse((result.content[0] as { text: string }).text) as unknown[];
    }
    expect(late).toEqual([{ action: 'decline' }]);
  });
});
