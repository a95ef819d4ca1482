/**
 * `tool_manual`: the long-form manual of a tool — MANUALS_DIR/<name>.md when one is written,
 * otherwise one generated from the tool's description and parameter schema.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { defineTool, type TypedTool } from '../define-tool.js';
import type { ToolRegistry } from '../registry.js';
import { fail, ok } from '../types.js';

const SAFE_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** A Markdown manual built from the schema, for tools without a written one. */
export function generateManual(
  name: string,
  description: string,
  parameters: Record<string, unknown>,
): string {
  const props = (parameters.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(parameters.required) ? (parameters.required as string[]) : []);
  const lines = [`# ${name}`, '', description, '', '## Parameters', ''];
  const names = Object.keys(props);
  if (names.length === 0) lines.push('None.');
  for (const p of names) {
    const s = props[p] ?? {};
    const type = Array.isArray(s.enum)
      ? `one of ${(s.enum as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
      : String(s.type ?? 'any');
    const extra = [
      required.has(p) ? 'required' : 'optional',
      s.default !== undefined ? `default ${JSON.stringify(s.default)}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    lines.push(
      `- \`${p}\` (${type}; ${extra})${typeof s.description === 'string' ? `: ${s.description}` : ''}`,
    );
  }
  lines.push('', '(Generated from the schema: no written manual exists for this tool.)');
  return lines.join('\n');
}

const parameters = z.strictObject({
  name: z.string().min(1).describe('The tool name, e.g. "write_tool".'),
});

export function createToolManualTool(deps: {
  registry: ToolRegistry;
  manualsDir: string;
}): TypedTool<typeof parameters> {
  return defineTool({
    name: 'tool_manual',
    group: 'meta',
    risk: { reads: true },
    description:
      'Read the manual of a tool before using it for the first time when its use is not obvious ' +
      '(write_tool, create_mcp_server, todo, scratchpad…): what it does, its parameters, examples and pitfalls.',
    parameters,
    async execute(params) {
      const name = params.name.trim();
      if (!SAFE_NAME.test(name)) return fail(`"${name}" is not a tool name.`);
      try {
        return ok(await readFile(join(deps.manualsDir, `${name}.md`), 'utf8'));
      } catch {
        // No written manual: fall back to the schema.
      }
      const entry = deps.registry.get(name);
      if (!entry) {
        const near = deps.registry
          .list()
          .map((e) => e.tool.name)
          .filter((n) => n.includes(name) || name.includes(n));
        return fail(
          `There is no tool "${name}".${near.length > 0 ? ` Did you mean: ${near.join(', ')}?` : ' Use list_tools to see them.'}`,
        );
      }
      return ok(generateManual(name, entry.tool.description, entry.tool.parameters));
    },
  });
}
