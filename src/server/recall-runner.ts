/**
 * The recall scheduler's view of the run registry: a due recall becomes a headless run with
 * trigger `recall`, broadcast to every client watching its session, or waits while the
 * session is answering something else.
 */

import type { ServerEvent } from '../protocol/events.js';
import type { RecallOutcome } from '../protocol/rest.js';
import type { RecallRunner, RecallStart } from '../recall/types.js';
import { ApiError } from './errors.js';
import type { RunRegistry } from './run-registry.js';

function outcomeOf(terminal: ServerEvent): RecallOutcome {
  if (terminal.type === 'stream_end') return { status: 'completed' };
  if (terminal.type === 'stream_stopped') return { status: 'stopped', message: 'stopped before it finished' };
  return {
    status: 'failed',
    message: terminal.type === 'error' ? terminal.message : 'the run ended unexpectedly',
  };
}

export function recallRunner(runs: RunRegistry): RecallRunner {
  return {
    async start(fire) {
      const busy = (): RecallStart => ({ kind: 'busy', idle: runs.idle(fire.session_id) });
      // No look first: start refuses a session taken here, and its claim one taken elsewhere.
      try {
        const run = await runs.start(fire.session_id, {
          content: fire.prompt,
          trigger: 'recall',
          recall: {
            recall_id: fire.recall_id,
            scheduled_for: fire.scheduled_for,
            chain: fire.chain,
            ...(fire.late_ms !== undefined ? { late_ms: fire.late_ms } : {}),
          },
        });
        return { kind: 'started', done: run.done.then(outcomeOf) };
      } catch (err) {
        if (err instanceof ApiError && err.code === 'SHUTTING_DOWN') return { kind: 'closed' };
        // Answering already, here or on another process.
        if (err instanceof ApiError && err.code === 'RUN_ACTIVE') return busy();
        throw err;
      }
    },
  };
}
