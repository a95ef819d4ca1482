/**
 * render_component through its handler and over MCP as a process: the envelope on success,
 * `Error:` with every problem on failure, payloads sent as JSON strings, the size limit, and the
 * examples its description teaches.
 */
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_META_KEY } from '../../protocol/mcp-meta.js';
import { UI_COMPONENT_NAMES, validateUiComponent } from '../../protocol/ui-components.js';
import { UI_COMPONENT_EXAMPLES } from './examples.js';
import { MAX_PAYLOAD_CHARS, renderComponentTool } from './render-component.js';

const tool = renderComponentTool();
const signal = new AbortController().signal;

function envelopeOf(result: CallToolResult): { output: string; metadata?: { ui_component?: unknown } } {
  const block = result.content[0];
  if (block?.type !== 'text') throw new Error('expected a text block');
  return JSON.parse(block.text);
}

type Args = Parameters<typeof tool.handler>[0];
const call = (args: Args, meta: Record<string, unknown> = {}) => tool.handler(args, signal, { meta });

describe('render_component', () => {
  it('returns the envelope with the validated component and a summary for the model', async () => {
    const result = await call(
      { component_name: 'table', payload: UI_COMPONENT_EXAMPLES.table },
      { [SESSION_META_KEY]: 's1' },
    );
    expect(result.isError).toBeUndefined();
    const envelope = envelopeOf(result);
    expect(envelope.output).toBe(
      "Component 'table' rendered for session s1: the user now sees a table of 2 row(s) and 3 column(s).",
    );
    expect(envelope.metadata?.ui_component).toEqual({
      component: 'table',
      payload: expect.objectContaining({
        rows: [
          { number: '2026-017', due: '2026-12-01', amount: 420.5 },
          { number: '2026-018', due: '2026-12-15', amount: 99 },
        ],
        sortable: true,
      }),
    });
  });

  it('tells the model a form answer comes back as a message', async () => {
    const envelope = envelopeOf(await call({ component_name: 'form', payload: UI_COMPONENT_EXAMPLES.form }));
    expect(envelope.output).toContain('the form "trip_details" with 3 field(s)');
    expect(envelope.output).toContain("the user's answer will come as a message");
  });

  it('prefers the session_id argument when one is given', async () => {
    const envelope = envelopeOf(
      await call({
        component_name: 'card_grid',
        payload: UI_COMPONENT_EXAMPLES.card_grid,
        session_id: 'abc',
      }),
    );
    expect(envelope.output).toMatch(
      /^Component 'card_grid' rendered for session abc: the user now sees a grid of 1 card/,
    );
  });

  it('accepts a payload sent as a JSON string', async () => {
    const envelope = envelopeOf(
      await call({ component_name: 'card_grid', payload: JSON.stringify({ cards: [{ title: 'A' }] }) }),
    );
    expect(envelope.metadata?.ui_component).toEqual({
      component: 'card_grid',
      payload: { cards: [{ title: 'A' }] },
    });
  });

  it('answers Error: with every problem and its path, and no component', async () => {
    const result = await call({
      component_name: 'form',
      payload: {
        form_id: 'f',
        fields: [
          { name: 'a b', label: 'A' },
          { name: 'k', label: 'K', type: 'select' },
        ],
      },
    });
    expect(result.isError).toBe(true);
    const envelope = envelopeOf(result);
    expect(envelope.metadata).toBeUndefined();
    expect(envelope.output).toBe(
      'Error: the form payload is not valid; fix these and call again:\n' +
        '- payload.fields[0].name: must use only letters, digits, "_" and "-" (such as "due_date")\n' +
        '- payload.fields[1].options: is required for a select field',
    );
  });

  it('says when a string payload is not JSON', async () => {
    const envelope = envelopeOf(await call({ component_name: 'table', payload: '{"columns": [' }));
    expect(envelope.output).toMatch(
      /^Error: .*\n- payload: is a string that is not valid JSON \(.+\); send an object$/,
    );
  });

  it('refuses a payload over the size limit instead of storing it', async () => {
    const rows = Array.from({ length: 900 }, () => ['x'.repeat(1200)]);
    const envelope = envelopeOf(
      await call({ component_name: 'table', payload: { columns: [{ key: 'a', label: 'A' }], rows } }),
    );
    expect(envelope.output).toContain(`over the limit of ${MAX_PAYLOAD_CHARS}`);
  });

  it('lists at most 40 problems and says how many more there were', async () => {
    const rows = Array.from({ length: 50 }, () => ({ n: 'not a number' }));
    const envelope = envelopeOf(
      await call({
        component_name: 'table',
        payload: { columns: [{ key: 'n', label: 'N', type: 'number' }], rows },
      }),
    );
    expect(envelope.output.split('\n- ')).toHaveLength(42);
    expect(envelope.output).toMatch(/…and 10 more problems$/);
  });

  it.each(UI_COMPONENT_NAMES)('teaches a valid %s example in its description', (name) => {
    expect(validateUiComponent(name, UI_COMPONENT_EXAMPLES[name]).ok).toBe(true);
    expect(tool.description).toContain(`${name}: ${JSON.stringify(UI_COMPONENT_EXAMPLES[name])}`);
  });
});

describe('navi-ui as a process', () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'test', version: '0.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', join('src', 'servers', 'navi-ui', 'main.ts')],
        cwd: resolve(import.meta.dirname, '../../..'),
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
        stderr: 'pipe',
      }),
    );
  });
  afterAll(() => client.close());

  it('offers render_component with the component names in its schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['render_component']);
    expect(tools[0]?.inputSchema.properties?.component_name).toMatchObject({
      enum: ['card_grid', 'form', 'table'],
    });
    expect(tools[0]?.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('renders over MCP and refuses an unknown component with the names it knows', async () => {
    const ok = (await client.callTool({
      name: 'render_component',
      arguments: { component_name: 'card_grid', payload: { cards: [{ title: 'A' }] } },
      _meta: { [SESSION_META_KEY]: 's9' },
    })) as CallToolResult;
    expect(envelopeOf(ok).output).toContain('rendered for session s9');
    const bad = (await client.callTool({
      name: 'render_component',
      arguments: { component_name: 'chart', payload: {} },
    })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('card_grid');
  });

  it('refuses a call without a payload, naming the argument', async () => {
    const bad = (await client.callTool({
      name: 'render_component',
      arguments: { component_name: 'table' },
    })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain('payload');
  });
});
