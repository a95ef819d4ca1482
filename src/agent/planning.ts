/**
 * The planning phase (docs/architecture.md#the-agent-loop): one fast call without tools or thinking that either answers
 * DIRECT (no plan needed) or lists numbered steps. Anything without numbered steps is no plan.
 */
import type { ChatMessage, LlmBackend, TokenUsage } from '../llm/types.js';

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

/**
 * The plan (null: none), with what the call sent and got back, for the run's usage. A call that
 * failed has no plan, and `failure` says why: it was sent all the same, so it counts.
 */
export interface PlanningResult {
  plan: string | null;
  messages: ChatMessage[];
  reply: string;
  usage?: TokenUsage;
  failure?: Error;
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
  },
): Promise<PlanningResult> {
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
    return { plan: null, messages, reply: '', failure: err instanceof Error ? err : new Error(String(err)) };
  }
  return {
    plan: parsePlan(result.content),
    messages,
    reply: result.content,
    ...(result.usage ? { usage: result.usage } : {}),
  };
}
