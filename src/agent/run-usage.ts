/**
 * The tokens a run's LLM calls used (`RunUsage` on `stream_end` and `stream_stopped`): one tally
 * per run, which its subagents share by reference, so a spawned agent's calls count too. A call
 * whose backend reports no usage is estimated, four characters a token, from what was sent and
 * what came back, so the figure is never a silent zero.
 */
import type { ChatMessage, ChatToolCall, TokenUsage, ToolSpec } from '../llm/types.js';
import type { RunUsage } from '../protocol/events.js';

export function emptyUsage(): RunUsage {
  return { prompt_tokens: 0, completion_tokens: 0 };
}

/** What one call sent and got back, for its estimate. */
export interface CallExchange {
  messages: readonly ChatMessage[];
  tools?: readonly ToolSpec[];
  text: string;
  thinking?: string;
  toolCalls?: readonly ChatToolCall[];
}

/** Adds one call's tokens to `tally`: pass the backend's figures, or `estimateCall` when it reported none. */
export function addUsage(tally: RunUsage, usage: TokenUsage): void {
  tally.prompt_tokens += usage.promptTokens;
  tally.completion_tokens += usage.completionTokens;
}

/** Four characters a token, as `estimateTokens` counts the context. */
export function estimateCall(exchange: CallExchange): TokenUsage {
  let sent = exchange.tools && exchange.tools.length > 0 ? JSON.stringify(exchange.tools).length : 0;
  for (const m of exchange.messages) {
    sent += m.content?.length ?? 0;
    if (m.tool_calls) sent += JSON.stringify(m.tool_calls).length;
  }
  let received = exchange.text.length + (exchange.thinking?.length ?? 0);
  if (exchange.toolCalls && exchange.toolCalls.length > 0)
    received += JSON.stringify(exchange.toolCalls).length;
  return { promptTokens: Math.ceil(sent / 4), completionTokens: Math.ceil(received / 4) };
}
