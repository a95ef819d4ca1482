/** A tool the test profiles mark for confirmation (`guarded_action`), for tests of who may approve. */
import type { ToolDefinition, ToolParams } from '../../src/tools/types.js';

/** A fresh `guarded_action`; `calls` records every call that really ran. */
export function guardedTool(): ToolDefinition & { calls: ToolParams[] } {
  const calls: ToolParams[] = [];
  return {
    name: 'guarded_action',
    description: 'Does something the user must approve first.',
    parameters: { type: 'object', properties: { what: { type: 'string' } }, required: ['what'] },
    calls,
    async execute(params) {
      calls.push(params);
      return { success: true, output: `did ${String(params.what)}` };
    },
  };
}
