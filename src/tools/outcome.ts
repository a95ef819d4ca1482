/**
 * How a tool call ended, in more detail than `success`: the `outcome` of its `tool_call` event
 * and of its stored result (docs/protocol.md#tool-outcomes). Read from what the executor records
 * in the result's metadata, so every kind of tool (built-in, user, MCP, `spawn_agent`) gets it
 * from this one place.
 */
import type { ToolOutcome } from '../protocol/events.js';
import type { ConfirmationRefusal, RefusalStage } from './executor.js';
import type { ToolResult } from './types.js';

const BY_STAGE: Record<RefusalStage, ToolOutcome> = {
  unknown: 'refused',
  policy: 'refused',
  validation: 'failed',
  // A vault reference that cannot be used: the call was fine, its secret was not.
  secrets: 'failed',
  stopped: 'stopped',
  // Narrowed by `metadata.confirmation` below.
  confirmation: 'confirmation_timeout',
};

const BY_CONFIRMATION: Record<ConfirmationRefusal, ToolOutcome> = {
  denied: 'denied',
  unanswered: 'confirmation_timeout',
  stopped: 'stopped',
};

/** The outcome of a call, from the result the executor returned for it. */
export function toolOutcome(result: Pick<ToolResult, 'success' | 'metadata'>): ToolOutcome {
  if (result.success) return 'ok';
  const metadata = result.metadata;
  if (metadata?.timed_out === true) return 'timed_out';
  const stage = metadata?.refused;
  if (typeof stage !== 'string' || !Object.hasOwn(BY_STAGE, stage)) return 'failed';
  if (stage === 'confirmation') {
    const which = metadata?.confirmation;
    if (typeof which === 'string' && Object.hasOwn(BY_CONFIRMATION, which))
      return BY_CONFIRMATION[which as ConfirmationRefusal];
  }
  return BY_STAGE[stage as RefusalStage];
}
