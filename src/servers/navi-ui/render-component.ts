/**
 * `render_component`: checks a payload against its component's schema (the protocol's, shared
 * with the web client) and answers with the envelope Navi unwraps, `{output, metadata:
 * {ui_component}}`. The model reads only `output`; the component travels on the tool message to
 * the client, which draws it inline and keeps it after a reload. A bad payload answers
 * `Error: …` with every problem and its path, so the model can fix them all at once.
 */
import { z } from 'zod';
import { SESSION_META_KEY } from '../../protocol/mcp-meta.js';
import {
  UI_COMPONENT_NAMES,
  type UiComponentName,
  type ValidUiComponent,
  validateUiComponent,
} from '../../protocol/ui-components.js';
import type { ShippedTool } from '../common/tool.js';
import { UI_COMPONENT_EXAMPLES } from './examples.js';

/** A component's JSON as stored on its message; a bigger one is refused, not cut. */
export const MAX_PAYLOAD_CHARS = 1_000_000;
/** Problems listed in one answer; more only hide the first ones. */
const MAX_PROBLEMS = 40;

const inputSchema = {
  component_name: z
    .enum(UI_COMPONENT_NAMES as [UiComponentName, ...UiComponentName[]])
    .describe('Which component to draw: card_grid, form or table.'),
  payload: z
    .union([z.record(z.string(), z.unknown()), z.string()])
    .describe('The component as a JSON object (see the examples in the description).'),
  session_id: z
    .string()
    .max(200)
    .optional()
    .describe('Not needed: Navi knows the session. Kept for clients that pass it.'),
};

const DESCRIPTION = [
  "Draw a UI component in the user's chat, under this call. The user sees it; you only see a",
  'short confirmation.',
  '- card_grid: a grid of cards (title, subtitle, image, fields, details shown when opened).',
  '- form: asks the user for input (at most 20 fields; types text, textarea, number, email,',
  '  url, select, multiselect, checkbox, date; select types need options). The values come',
  '  back to you as the next user message; end your turn after drawing a form. A form_id is',
  '  answered once per conversation: give each new form (also one asking again) a new form_id.',
  '- table: columns (key, label, type text|number|date|boolean|url) and rows (arrays in column',
  '  order, or objects by key); the user can sort, filter and download it as CSV.',
  'Examples:',
  ...UI_COMPONENT_NAMES.map((name) => `${name}: ${JSON.stringify(UI_COMPONENT_EXAMPLES[name])}`),
].join('\n');

function envelope(output: string, component?: ValidUiComponent): string {
  return JSON.stringify(component ? { output, metadata: { ui_component: component } } : { output });
}

/** What the model is told once the component is drawn. */
function summary(component: ValidUiComponent): string {
  switch (component.component) {
    case 'card_grid':
      return `a grid of ${component.payload.cards.length} card(s)`;
    case 'form':
      return `the form "${component.payload.form_id}" with ${component.payload.fields.length} field(s); the user's answer will come as a message`;
    case 'table':
      return `a table of ${component.payload.rows.length} row(s) and ${component.payload.columns.length} column(s)`;
  }
}

/** Models often send the payload as a JSON string; accept that, say so when it is not JSON. */
function readPayload(payload: unknown): { value: unknown } | { problem: string } {
  if (typeof payload !== 'string') return { value: payload };
  try {
    return { value: JSON.parse(payload) };
  } catch (err) {
    return {
      problem: `payload: is a string that is not valid JSON (${(err as Error).message}); send an object`,
    };
  }
}

export function renderComponentTool(): ShippedTool<typeof inputSchema> {
  return {
    name: 'render_component',
    description: DESCRIPTION,
    inputSchema,
    annotations: { title: 'Draw a UI component', readOnlyHint: true, openWorldHint: false },
    async handler(args, _signal, request) {
      const fail = (problems: string[]) => {
        const shown = problems.slice(0, MAX_PROBLEMS);
        if (problems.length > shown.length)
          shown.push(`…and ${problems.length - shown.length} more problems`);
        const text = `Error: the ${args.component_name} payload is not valid; fix these and call again:\n- ${shown.join('\n- ')}`;
        return { isError: true, content: [{ type: 'text' as const, text: envelope(text) }] };
      };
      const read = readPayload(args.payload);
      if ('problem' in read) return fail([read.problem]);
      const size = JSON.stringify(read.value)?.length ?? 0;
      if (size > MAX_PAYLOAD_CHARS)
        return fail([
          `payload: is ${size} characters of JSON, over the limit of ${MAX_PAYLOAD_CHARS}; show fewer rows or cards, or share a file instead`,
        ]);
      const checked = validateUiComponent(args.component_name, read.value);
      if (!checked.ok) return fail(checked.problems);
      const meta = request?.meta[SESSION_META_KEY];
      const session = args.session_id ?? (typeof meta === 'string' ? meta : undefined);
      const output = `Component '${args.component_name}' rendered${session ? ` for session ${session}` : ''}: the user now sees ${summary(checked.value)}.`;
      return { content: [{ type: 'text', text: envelope(output, checked.value) }] };
    },
  };
}
