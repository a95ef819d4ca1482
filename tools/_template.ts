/**
 * The canonical user tool. Files in this folder whose names start with _ are not loaded, so this
 * one is only an example: copy it to my_tool.ts (or ask the agent to use write_tool), change the
 * four exports, then call reload_tools or POST /agents/tools/reload.
 *
 * Rules:
 * - `name` uses lowercase letters, digits and _; keep it equal to the file name.
 * - `description` says what the tool does and when to use it: the LLM decides from it alone.
 * - `parameters` is a JSON Schema with type "object"; arguments are checked against it before
 *   `execute` runs, so `execute` can trust their types.
 * - `execute` is async and returns a string (what the LLM reads). Throw an Error to report a
 *   failure; its message goes back to the LLM, so say how to do better.
 * - Nothing at module level that takes time or has side effects: the file is imported on every
 *   reload.
 * - `execute` also receives a context with `signal` (aborted on stop or timeout), `sessionId` and
 *   `settings` (Navi's settings: read your tool's own there, not from process.env).
 * - Optional: `export const risk = { reads: true, network: true }` declares what the tool can do
 *   (flags reads, writes, executes, network, secrets, sandboxed; the default approval follows
 *   from it), and `export function confirmCall(params)` returns the reason THIS call needs the
 *   person's approval (or undefined), for tools where only some calls should ask. Keep it quick.
 * - Helpers go into a subfolder (tools/my_tool/*.ts): only files directly in this folder load.
 *
 * A class that extends Tool works too:
 *   import { Tool, ok } from '../src/tools/types.js';
 *   export default class MyTool extends Tool { name = 'my_tool'; description = '…';
 *     parameters = { type: 'object', properties: {} }; async execute() { return ok('done'); } }
 */
export const name = 'template_tool';

export const description = 'Repeats a text a given number of times. Use it only as an example.';

export const parameters = {
  type: 'object',
  properties: {
    text: { type: 'string', description: 'The text to repeat.' },
    times: { type: 'integer', minimum: 1, maximum: 10, default: 1, description: 'How many times.' },
  },
  required: ['text'],
  additionalProperties: false,
};

export async function execute(
  params: { text: string; times?: number },
  ctx?: { signal: AbortSignal },
): Promise<string> {
  if (ctx?.signal.aborted) throw new Error('stopped');
  if (params.text.trim() === '') throw new Error('"text" is empty; give the text to repeat.');
  return Array.from({ length: params.times ?? 1 }, () => params.text).join('\n');
}
