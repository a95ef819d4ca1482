/** `list_tools`: the live tool list with where each tool comes from, and what failed to load. */

import { z } from 'zod';
import { defineTool, type TypedTool } from '../define-tool.js';
import { groupOf } from '../policy.js';
import type { RegisteredTool, ToolRegistry } from '../registry.js';
import { ok } from '../types.js';

function firstSentence(text: string): string {
  const m = /^(.{1,200}?[.!?])(\s|$)/s.exec(text);
  return (m ? m[1]! : text.slice(0, 200)).replace(/\s+/g, ' ');
}

function origin(e: RegisteredTool): string {
  if (e.source === 'mcp') return `mcp:${e.server ?? '?'}`;
  if (e.source === 'user') return `user${e.file ? `:${e.file.split(/[/\\]/).pop()}` : ''}`;
  return 'builtin';
}

const parameters = z.strictObject({
  source: z.enum(['builtin', 'user', 'mcp']).optional().describe('Only this source.'),
});

export function createListToolsTool(registry: ToolRegistry): TypedTool<typeof parameters> {
  return defineTool({
    name: 'list_tools',
    group: 'meta',
    risk: { reads: true },
    description:
      'List every registered tool with its source (builtin, user file, or MCP server) and group, plus the ' +
      'tool files that failed to load and why. Lists all tools, including ones this profile may not use.',
    parameters,
    async execute(params) {
      const entries = registry
        .list()
        .filter((e) => params.source === undefined || e.source === params.source)
        .sort((a, b) => a.tool.name.localeCompare(b.tool.name));
      const lines = entries.map((e) => {
        const group = groupOf(e);
        return `- ${e.tool.name} [${origin(e)}${group ? `, group:${group}` : ''}]: ${firstSentence(e.tool.description)}`;
      });
      const errors = registry
        .errors()
        .filter((e) => params.source === undefined || e.source === params.source);
      const out = [`${entries.length} tool(s):`, ...lines];
      if (errors.length > 0) {
        out.push(
          '',
          `Load errors (${errors.length}):`,
          ...errors.map((e) => `- ${e.origin} (${e.source}): ${e.error}`),
        );
      }
      return ok(out.join('\n'));
    },
  });
}
