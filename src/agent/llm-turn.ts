/**
 * One streamed LLM call: relays reasoning and answer deltas as they arrive and collects the
 * tool calls. Thinking is streamed live; `thinking_end` marks the moment the model moves on to
 * its answer or its tool calls.
 */
import type {
  ChatToolCall,
  CompletionRequest,
  FinishReason,
  LlmBackend,
  LlmFailure,
  TokenUsage,
} from '../llm/types.js';
import type { AgentEvent } from '../protocol/events.js';

export interface TurnResult {
  text: string;
  thinking: string;
  toolCalls: ChatToolCall[];
  reason: FinishReason;
  usage?: TokenUsage;
  error?: LlmFailure;
}

export interface TurnSink {
  emit(event: AgentEvent): void;
  /** Called with the answer so far on every text delta (the caller throttles persistence). */
  onText?(text: string, thinking: string): void;
  /** Subagents keep their deltas to themselves: only whole blocks reach the parent. */
  relayDeltas: boolean;
  /** Index of this LLM call within its loop, carried by the thinking events. */
  turn: number;
}

export async function streamTurn(
  backend: LlmBackend,
  request: CompletionRequest,
  sink: TurnSink,
): Promise<TurnResult> {
  let text = '';
  let thinking = '';
  let thinkingOpen = false;
  const toolCalls: ChatToolCall[] = [];

  const endThinking = () => {
    if (thinkingOpen) {
      thinkingOpen = false;
      if (sink.relayDeltas) sink.emit({ type: 'thinking_end', turn: sink.turn });
    }
  };

  for await (const chunk of backend.streamComplete(request)) {
    switch (chunk.type) {
      case 'thinking':
        if (chunk.delta === '') break;
        thinking += chunk.delta;
        thinkingOpen = true;
        if (sink.relayDeltas) sink.emit({ type: 'thinking_delta', delta: chunk.delta, turn: sink.turn });
        break;
      case 'text':
        if (chunk.delta === '') break;
        endThinking();
        text += chunk.delta;
        if (sink.relayDeltas) sink.emit({ type: 'stream_delta', delta: chunk.delta });
        sink.onText?.(text, thinking);
        break;
      case 'tool_call':
        endThinking();
        toolCalls.push(chunk.call);
        break;
      case 'done':
        endThinking();
        return {
          text,
          thinking,
          toolCalls,
          reason: chunk.reason,
          ...(chunk.usage ? { usage: chunk.usage } : {}),
          ...(chunk.error ? { error: chunk.error } : {}),
        };
    }
  }
  // A backend that ends without `done` broke its contract; treat it as a cut stream.
  endThinking();
  return {
    text,
    thinking,
    toolCalls,
    reason: 'error',
    error: {
      code: 'malformed',
      message: `${backend.describe()}: the answer stream ended without finishing.`,
    },
  };
}
