/**
 * navi-ui through Navi: the shipped server starts as its own process, `render_component` is
 * offered as mcp__navi_ui__render_component, a valid component is stored on the tool message
 * while the model reads only a short confirmation, an invalid one comes back to the model as
 * `Error:` with every problem, and a form's answer, submitted over the WebSocket, reaches the
 * next LLM call once and only once.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import { tempDir } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, getSession } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

const TOOL = 'mcp__navi_ui__render_component';
type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;

describe('navi-ui, shipped with Navi', () => {
  const dir = tempDir('navi-ui-');
  let app: NaviWithLlm;

  beforeAll(async () => {
    mkdirSync(join(dir, 'mcp'), { recursive: true });
    app = await startNaviWithLlm({
      dir,
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        PROFILES_DIR: profilesDir([plainProfile]),
        DEFAULT_PROFILE: 'plain',
        MCP_SERVERS_DIR: join(dir, 'mcp'),
        MCP_SHIPPED_SERVERS: 'true',
      },
    });
    await app.navi.services.mcp?.ready();
  });
  afterEach(() => app.fake.reset());
  afterAll(() => app?.close());

  /** Runs one turn whose LLM calls render_component with `args`, then answers. */
  async function render(
    args: Record<string, unknown>,
  ): Promise<{ sessionId: string; client: EventClient; call: ToolCallEvent }> {
    const sessionId = await app.navi.createSession();
    app.fake.enqueue(
      { toolCalls: [{ id: 'call-ui', name: TOOL, arguments: args }] },
      { text: 'Here it is.' },
    );
    const client = await EventClient.connect(app.navi.wsUrl(sessionId));
    client.send({ type: 'message', content: 'show me' });
    const events = await client.waitForRunEnd();
    const call = events.find((e): e is ToolCallEvent => e.type === 'tool_call');
    if (!call) throw new Error(`no tool_call event: ${JSON.stringify(events)}`);
    return { sessionId, client, call };
  }

  /** What the LLM was sent back as the tool's result, in the request after the call. */
  function toolResultSent(): string {
    const message = chatRequests(app.fake)
      .at(-1)
      ?.body.messages?.find((m) => m.role === 'tool');
    return String(message?.content);
  }

  it('is offered as a tool of group session', async () => {
    const status = app.navi.services.mcp?.status().find((s) => s.name === 'navi-ui');
    expect(status).toMatchObject({ state: 'ready', shipped: true });
    const tool = app.navi.services.tools.get(TOOL);
    expect(tool?.tool.group).toBe('session');
    expect(tool?.tool.description).toContain('table: {"title":"Invoices"');
  });

  it('stores a table on the tool message, rows as objects; the model reads one sentence', async () => {
    const payload = {
      title: 'Invoices',
      columns: [
        { key: 'number', label: 'No.' },
        { key: 'amount', label: 'Amount', type: 'number' },
      ],
      rows: [
        ['2026-017', 420.5],
        ['2026-018', 99],
      ],
    };
    const { sessionId, client, call } = await render({ component_name: 'table', payload });
    const expected = {
      component: 'table',
      payload: {
        ...payload,
        columns: [
          { key: 'number', label: 'No.', type: 'text' },
          { key: 'amount', label: 'Amount', type: 'number' },
        ],
        rows: [
          { number: '2026-017', amount: 420.5 },
          { number: '2026-018', amount: 99 },
        ],
        sortable: true,
        filterable: true,
      },
    };
    expect(call).toMatchObject({ success: true, metadata: { ui_component: expected } });
    expect(toolResultSent()).toBe(
      `Component 'table' rendered for session ${sessionId}: the user now sees a table of 2 row(s) and 2 column(s).`,
    );
    const stored = (await getSession(app.navi, sessionId)).messages.find((m) => m.role === 'tool');
    expect(stored).toMatchObject({ success: true, ui_component: expected });
    await client.close();
  });

  it('sends an invalid payload back to the model as Error: with every problem, and stores no component', async () => {
    const { sessionId, client, call } = await render({
      component_name: 'form',
      payload: {
        form_id: 'f',
        fields: [
          { name: 'when?', label: 'When' },
          { name: 'k', label: 'K', type: 'select' },
        ],
      },
    });
    expect(call.success).toBe(false);
    expect(toolResultSent()).toBe(
      'Error: the form payload is not valid; fix these and call again:\n' +
        '- payload.fields[0].name: must use only letters, digits, "_" and "-" (such as "due_date")\n' +
        '- payload.fields[1].options: is required for a select field',
    );
    const stored = (await getSession(app.navi, sessionId)).messages.find((m) => m.role === 'tool');
    expect(stored).toMatchObject({ success: false });
    expect(stored?.ui_component).toBeUndefined();
    await client.close();
  });

  it("hands a form's answer to the next LLM call once; a second submission is refused", async () => {
    const form = {
      form_id: 'trip',
      fields: [
        { name: 'city', label: 'City', required: true },
        { name: 'nights', label: 'Nights', type: 'number', min: 1 },
      ],
    };
    const { sessionId, client } = await render({ component_name: 'form', payload: JSON.stringify(form) });
    app.fake.enqueue({ text: 'Oslo for 3 nights, noted.' });
    const before = client.events.length;
    client.send({ type: 'form_submit', form_id: 'trip', values: { city: 'Oslo', nights: 3 } });
    await client.waitForRunEnd(before);
    const users =
      chatRequests(app.fake)
        .at(-1)
        ?.body.messages?.filter((m) => m.role === 'user') ?? [];
    expect(JSON.parse(String(users.at(-1)?.content))).toEqual({
      form_id: 'trip',
      values: { city: 'Oslo', nights: 3 },
    });

    const calls = chatRequests(app.fake).length;
    const again = client.events.length;
    client.send({ type: 'form_submit', form_id: 'trip', values: { city: 'Bergen', nights: 1 } });
    const refused = await client.waitFor((e) => e.type === 'error', 10_000, again);
    expect(refused).toMatchObject({ code: 'FORM_ALREADY_SUBMITTED', recoverable: true });
    expect(chatRequests(app.fake)).toHaveLength(calls);

    const messages = (await getSession(app.navi, sessionId)).messages;
    expect(messages.filter((m) => m.kind === 'form_submit')).toEqual([
      expect.objectContaining({ form_submit: { form_id: 'trip', values: { city: 'Oslo', nights: 3 } } }),
    ]);
    expect(messages.find((m) => m.role === 'tool')?.ui_component).toMatchObject({
      component: 'form',
      payload: { form_id: 'trip' },
    });
    await client.close();
  });
});
