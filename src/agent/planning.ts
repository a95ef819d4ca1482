/**
 * The planning phase (docs/architecture.md#the-agent-loop): one fast call without tools or thinking that either answers
 * DIRECT (no plan needed) or lists numbered steps. Anything without numbered steps is no plan.
 */
import type { ChatMessage, LlmBackend, TokenUsage } from '../llm/types.js';
import { estimateCall } from './run-usage.js';

export const PLANNING_INSTRUCTION = [
  'Before acting, decide whether the latest user request needs a plan.',
  'If it is simple (a greeting, a quick fact, a single step), reply with the single word DIRECT.',
  'Otherwise reply with a short numbered list of concrete steps (1. … 2. …), naming the tools you',
  'expect to use. Do not carry out the steps and do not answer the request yet.',
].join(' ');

const NUMBERED_STEP = /^\s*(?:step\s*)?\d{1,2}[.)]\s+\S/im;

/** Returns the plan text, or null when the reply means "no plan". */
export function parsePlan(reply: string): string | null {
  const text = reply.trim();
  if (text === '' || /^\W*DIRECT\b/i.test(text)) return null;
  return NUMBERED_STEP.test(text) ? text : null;
}

export async function runPlanning(
  backend: LlmBackend,
  request: {
    system: string;
    context: ChatMessage[];
    model: string;
    signal: AbortSignal;
    /** The run's window, clamped to the model's (`CompletionRequest.contextWindow`). */
    contextWindow?: number;
    /**
     * Told the call's tokens, as reported or estimated, whether it ended well or not (a failed
     * one as what it sent: the server may have worked on it), for the run's usage.
     */
    countCall?(usage: TokenUsage): void;
  },
): Promise<string | null> {
  const messages: ChatMessage[] = [
    { role: 'system', content: `${request.system}\n\n${PLANNING_INSTRUCTION}` },
    ...request.context,
  ];
  let result: Awaited<ReturnType<LlmBackend['complete']>>;
  try {
    result = await backend.complete({
      model: request.model,
      ...(request.contextWindow !== undefined ? { contextWindow: request.contextWindow } : {}),
      messages,
      think: false,
      temperature: 0.3,
      signal: request.signal,
    });
  } catch (err) {
    request.countCall?.(estimateCall({ messages, text: '' }));
    throw err;
  }
  request.countCall?.(result.usage ?? estimateCall({ messages, text: result.content }));
  return parsePlan(result.content);
}
