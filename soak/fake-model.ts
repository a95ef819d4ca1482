/**
 * What the fake LLM answers during the soak run. The driver marks each message it sends with a
 * tag, and the reply is chosen from the last message of the request alone, so the script keeps
 * no state however long the run goes on: a tagged user message asks for tool calls or a stream of
 * a given pace, a tool result is answered with a short text, anything else (a recall's prompt,
 * a title request) with a quick answer.
 */
import type { RecordedRequest, ReplyScript } from '../test/fake-llm/index.js';

/** The tags the driver puts in messages; the fake LLM reacts to them. */
export const TAG = {
  /** A quick answer streamed as fast as the fake can. */
  fast: '[soak:fast]',
  /** An answer at reading speed: a few seconds of one token every 100 ms. */
  slow: '[soak:slow]',
  /** A long answer at reading speed, for the driver to stop half-way. */
  long: '[soak:long]',
  /** Calls the cheap built-in tools (file write and read, memory save and search, echo). */
  tools: '[soak:tools]',
  /** Calls schedule_recall; the recall's own prompt carries `recallFired`. */
  recall: '[soak:recall]',
  recallFired: '[soak:recall-fired]',
} as const;

/** Arguments the driver chose for one tool turn, carried in the message as JSON after the tag. */
export interface ToolTurnArgs {
  path: string;
  memoryKey: string;
  /** Whether the bubblewrap sandbox works here, so `terminal` can run `echo` without asking. */
  shell: boolean;
}

export interface RecallTurnArgs {
  delay: string;
}

const WORDS = 'the quick brown fox jumps over the lazy dog while navi keeps streaming words '.split(' ');

/** `n` characters of plain words, so deltas look like text and search finds them. */
export function words(n: number, seed: number): string {
  let out = '';
  let i = seed;
  while (out.length < n) out += `${WORDS[i++ % WORDS.length]} `;
  return out.slice(0, n).trimEnd() || 'ok';
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p === 'object' && p && 'text' in p ? String(p.text) : '')).join('');
}

/** The last user message, and how many assistant turns with tool calls came after it. */
function turnOf(request: RecordedRequest): { text: string; toolRounds: number } {
  const messages = request.body.messages ?? [];
  let toolRounds = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user') return { text: textOf(m.content), toolRounds };
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) toolRounds += 1;
  }
  return { text: '', toolRounds };
}

function argsAfter<T>(text: string, tag: string): T {
  const start = text.indexOf(tag) + tag.length;
  const open = text.indexOf('{', start);
  const close = text.indexOf('}', open);
  return JSON.parse(text.slice(open, close + 1)) as T;
}

/** Writes first, reads what was written in the next round: calls of one round run in parallel. */
function toolRound(args: ToolTurnArgs, round: number): ReplyScript['toolCalls'] {
  if (round === 0) {
    const calls: NonNullable<ReplyScript['toolCalls']> = [
      { name: 'filesystem', arguments: { action: 'write', path: args.path, content: words(400, 3) } },
      {
        name: 'memory',
        arguments: {
          action: 'save',
          category: 'soak',
          key: args.memoryKey,
          value: 'The soak run keeps going.',
        },
      },
    ];
    if (args.shell) calls.push({ name: 'terminal', arguments: { command: 'echo soak' } });
    return calls;
  }
  if (round === 1)
    return [
      { name: 'filesystem', arguments: { action: 'read', path: args.path } },
      { name: 'memory', arguments: { action: 'search', query: 'soak run' } },
    ];
  return undefined;
}

/** The fake LLM's default reply for the whole run. */
export function soakReply(request: RecordedRequest): ReplyScript {
  const { text, toolRounds } = turnOf(request);
  if (text.includes(TAG.tools)) {
    const calls = toolRound(argsAfter<ToolTurnArgs>(text, TAG.tools), toolRounds);
    return calls ? { toolCalls: calls } : { text: words(120, 5) };
  }
  if (text.includes(TAG.recall)) {
    if (toolRounds > 0) return { text: words(80, 9) };
    const { delay } = argsAfter<RecallTurnArgs>(text, TAG.recall);
    const prompt = `${TAG.recallFired} Tell the user the soak recall fired.`;
    return { toolCalls: [{ name: 'schedule_recall', arguments: { prompt, when: { type: 'once', delay } } }] };
  }
  if (text.includes(TAG.long)) return { text: words(3000, 7), chunkSize: 4, delayMs: 50 };
  if (text.includes(TAG.slow)) return { text: words(240, 11), chunkSize: 4, delayMs: 100 };
  return { text: words(200, 1) };
}
