/**
 * The one path every tool call takes (DESIGN §9). This first version looks the tool up, runs
 * it under the time limit and never lets a throw escape; validation, policy, confirmation and
 * middleware are layered on in the tool-system work without changing this signature.
 */
import type { Logger } from 'pino';
import type { Profile } from '../config/profiles.js';
import type { Settings } from '../config/settings.js';
import type { ToolSpec } from '../llm/types.js';
import type { ToolRegistry } from './registry.js';
import type { ToolContext, ToolResult } from './types.js';

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ToolExecutorDeps {
  registry: ToolRegistry;
  settings: Pick<Settings, 'TOOL_TIMEOUT_MS' | 'TOOL_MAX_OUTPUT_CHARS'>;
  logger: Logger;
}

export class ToolExecutor {
  constructor(private readonly deps: ToolExecutorDeps) {}

  /** The tools offered to the LLM under `profile`. */
  specsFor(_profile: Profile): ToolSpec[] {
    return this.deps.registry.list().map(({ tool }) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
    }));
  }

  /** Runs one call. Never throws: every failure is a `success: false` result. */
  async execute(call: ToolCall, ctx: ToolContext, _profile: Profile): Promise<ToolResult> {
    const entry = this.deps.registry.get(call.name);
    if (!entry) return { success: false, output: `Unknown tool "${call.name}".`, error: 'unknown tool' };
    const timeout = AbortSignal.timeout(this.deps.settings.TOOL_TIMEOUT_MS);
    const signal = AbortSignal.any([ctx.signal, timeout]);
    try {
      const result = await entry.tool.execute(call.arguments, { ...ctx, signal });
      const max = this.deps.settings.TOOL_MAX_OUTPUT_CHARS;
      const output = typeof result.output === 'string' ? result.output : String(result.output);
      if (output.length > max) {
        return { ...result, output: `${output.slice(0, max)}\n[output truncated: ${output.length - max} characters cut]` };
      }
      return { ...result, output };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { success: false, output: `Tool "${call.name}" failed: ${message}`, error: message };
    }
  }
}
