/**
 * A scripted `AgentApi` for the relay tests that need exact control over which events a run
 * emits and when (late joiners, coalescing, confirmations). Each call of `runStream` takes the
 * next script; a script is an async generator that may wait on the run's signal and confirm.
 */
import type { AgentApi, RunInput, RunOptions } from '../../src/agent/types.js';
import type { AgentEvent } from '../../src/protocol/events.js';

export type Script = (input: RunInput, options: RunOptions, sessionId: string) => AsyncIterable<AgentEvent>;

export interface ScriptedAgent extends AgentApi {
  calls: { sessionId: string; input: RunInput }[];
  enqueue(script: Script): void;
}

export function scriptedAgent(fallback: Script = simpleReply('ok')): ScriptedAgent {
  const queue: Script[] = [];
  const calls: ScriptedAgent['calls'] = [];
  return {
    calls,
    enqueue: (script) => queue.push(script),
    runStream(sessionId, input, options) {
      calls.push({ sessionId, input });
      const script = queue.shift() ?? fallback;
      return script(input, options, sessionId);
    },
  };
}

export function simpleReply(text: string): Script {
  return async function* (input) {
    yield { type: 'stream_start', trigger: input.trigger };
    yield { type: 'stream_delta', delta: text };
    yield { type: 'stream_end', content: text, context_tokens: 10, max_context_tokens: 1000 };
  };
}

/** Resolves when `signal` aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** A gate a script waits on until the test opens it. */
export function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}
