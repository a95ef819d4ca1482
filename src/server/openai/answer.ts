/**
 * A run's events as what an OpenAI client shows: the answer's text as `content`, and as
 * `reasoning_content` the model's thinking together with one line per tool activity. Stock
 * clients show reasoning as a collapsible "thinking" block, so what the agent does is visible
 * there while the answer stays clean. Navi never sends OpenAI `tool_calls`: a client would take
 * them for calls it must run itself.
 *
 * The same translation feeds a stream (each piece becomes a chunk) and a whole answer (the
 * pieces are summed), so both say the same.
 */
import type { ServerEvent } from '../../protocol/events.js';
import type { FinishReason } from '../../protocol/openai.js';
import { activityLine } from '../headless-run.js';

/** What one event adds to the answer; empty for events a client has no use for. */
export interface AnswerPiece {
  content?: string;
  reasoning?: string;
}

export class AnswerBuilder {
  content = '';
  reasoning = '';
  /** Tool activity came since the last answer text: the next text starts a new paragraph. */
  private activitySinceText = false;
  /** A thinking block ended: what comes next in reasoning starts on a line of its own. */
  private thinkingEnded = false;

  /** The piece `event` adds (also summed into `content` and `reasoning`), or undefined. */
  add(event: ServerEvent): AnswerPiece | undefined {
    if (event.type === 'stream_delta') return this.text(event.delta);
    if (event.type === 'thinking_delta') return this.think(event.delta);
    if (event.type === 'thinking_end') {
      this.thinkingEnded = true;
      return undefined;
    }
    // Whole thinking blocks (turn_thinking) repeat the deltas, or are a subagent's, kept to itself.
    const line = activityLine(event);
    if (line === undefined) return undefined;
    this.activitySinceText = true;
    // An activity line is a line of its own, whatever thinking came before it.
    this.thinkingEnded = true;
    return this.think(`${line}\n`);
  }

  private text(delta: string): AnswerPiece | undefined {
    if (delta === '') return undefined;
    // Text before a tool call and the answer after it would otherwise run together.
    const piece = this.activitySinceText && this.content !== '' ? `\n\n${delta}` : delta;
    this.activitySinceText = false;
    this.content += piece;
    return { content: piece };
  }

  private think(delta: string): AnswerPiece | undefined {
    if (delta === '') return undefined;
    const needsBreak = this.thinkingEnded && this.reasoning !== '' && !this.reasoning.endsWith('\n');
    this.thinkingEnded = false;
    const piece = needsBreak ? `\n${delta}` : delta;
    this.reasoning += piece;
    return { reasoning: piece };
  }
}

/** `length` for a run that was stopped before it finished, else `stop`. */
export function finishReasonOf(terminal: ServerEvent): FinishReason {
  return terminal.type === 'stream_stopped' ? 'length' : 'stop';
}
