/**
 * Middleware around every tool run (after validation, policy and confirmation). `before` sees
 * the call about to run; `after` sees the final result (already truncated) and how long the
 * tool took. A middleware that throws is logged and skipped: cross-cutting concerns such as
 * metrics must never change whether a call succeeds.
 */
import type { Logger } from 'pino';
import type { ToolContext, ToolParams, ToolResult, ToolSource } from './types.js';

export interface ToolCallInfo {
  callId: string;
  tool: string;
  source: ToolSource;
  params: ToolParams;
  ctx: ToolContext;
}

export interface ToolMiddleware {
  readonly name: string;
  before?(call: ToolCallInfo): void | Promise<void>;
  after?(call: ToolCallInfo, result: ToolResult, durationMs: number): void | Promise<void>;
}

/** Records every call that ran: tool, duration, success and output size. */
export function createLoggingMiddleware(logger: Logger): ToolMiddleware {
  return {
    name: 'logging',
    after(call, result, durationMs) {
      logger.info(
        {
          tool: call.tool,
          source: call.source,
          call_id: call.callId,
          session_id: call.ctx.sessionId,
          run_id: call.ctx.runId,
          duration_ms: Math.round(durationMs * 10) / 10,
          success: result.success,
          output_chars: result.output.length,
        },
        'tool call',
      );
    },
  };
}
