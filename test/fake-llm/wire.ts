/**
 * Renders a scripted reply in each wire format: the streamed frames (one NDJSON line or one SSE
 * event each) and the single JSON object of a `stream: false` answer.
 */
import type { RecordedRequest, ReplyScript, WireFormat } from './types.js';

const DEFAULT_CHUNK = 8;

/** Splits by code points, so a chunk never holds half of a surrogate pair. */
export function pieces(text: string | undefined, size: number): string[] {
  if (!text) return [];
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

export function usageOf(
  script: ReplyScript,
  request: RecordedRequest,
): { prompt: number; completion: number } {
  if (script.usage && script.usage !== 'none') return script.usage;
  const produced =
    (script.thinking ?? '') +
    (script.text ?? '') +
    JSON.stringify(script.toolCalls?.map((c) => c.arguments) ?? '');
  return {
    prompt: Math.max(1, Math.ceil(JSON.stringify(request.body.messages ?? []).length / 4)),
    completion: Math.max(1, Math.ceil(produced.length / 4)),
  };
}

let callCounter = 0;

function openAiCallIds(script: ReplyScript): string[] {
  return (script.toolCalls ?? []).map((c) => c.id ?? `call_fake_${++callCounter}`);
}

export function ollamaFrames(script: ReplyScript, request: RecordedRequest): string[] {
  const size = Math.max(1, script.chunkSize ?? DEFAULT_CHUNK);
  const model = request.body.model ?? 'test-model';
  const created_at = new Date(0).toISOString();
  const line = (message: Record<string, unknown>) =>
    `${JSON.stringify({ model, created_at, message: { role: 'assistant', content: '', ...message }, done: false })}\n`;
  const frames = [
    ...pieces(script.thinking, size).map((p) => line({ thinking: p })),
    ...pieces(script.text, size).map((p) => line({ content: p })),
  ];
  if (script.toolCalls && script.toolCalls.length > 0) {
    frames.push(
      line({
        tool_calls: script.toolCalls.map((c) => ({
          ...(c.id ? { id: c.id } : {}),
          function: { name: c.name, arguments: c.arguments },
        })),
      }),
    );
  }
  const usage = usageOf(script, request);
  frames.push(
    `${JSON.stringify({
      model,
      created_at,
      message: { role: 'assistant', content: '' },
      done: true,
      done_reason: script.finishReason ?? 'stop',
      total_duration: 1000,
      ...(script.usage === 'none' ? {} : { prompt_eval_count: usage.prompt, eval_count: usage.completion }),
    })}\n`,
  );
  return frames;
}

export function openAiFrames(script: ReplyScript, request: RecordedRequest): string[] {
  const size = Math.max(1, script.chunkSize ?? DEFAULT_CHUNK);
  const model = request.body.model ?? 'test-model';
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 0, model };
  const event = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const reasoningField = script.reasoningField ?? 'reasoning_content';
  // A comment line first: real servers send them as keep-alives, and clients must skip them.
  const frames = [': keep-alive\n\n', event({ role: 'assistant', content: '' })];
  for (const p of pieces(script.thinking, size)) frames.push(event({ [reasoningField]: p }));
  for (const p of pieces(script.text, size)) frames.push(event({ content: p }));
  const ids = openAiCallIds(script);
  (script.toolCalls ?? []).forEach((call, index) => {
    frames.push(
      event({
        tool_calls: [
          { index, id: ids[index], type: 'function', function: { name: call.name, arguments: '' } },
        ],
      }),
    );
    // Arguments in several small fragments, as real servers send them, to exercise reassembly.
    const json = JSON.stringify(call.arguments);
    const fragment = Math.max(1, Math.min(size, Math.ceil(json.length / 3)));
    for (const part of pieces(json, fragment)) {
      frames.push(event({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  const hasCalls = (script.toolCalls ?? []).length > 0;
  frames.push(event({}, script.finishReason ?? (hasCalls ? 'tool_calls' : 'stop')));
  if (request.body.stream_options?.include_usage && script.usage !== 'none') {
    const usage = usageOf(script, request);
    frames.push(
      `data: ${JSON.stringify({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
        },
      })}\n\n`,
    );
  }
  frames.push('data: [DONE]\n\n');
  return frames;
}

export function framesFor(format: WireFormat, script: ReplyScript, request: RecordedRequest): string[] {
  return format === 'ollama' ? ollamaFrames(script, request) : openAiFrames(script, request);
}

/** A frame that is not valid JSON, in the format's framing. */
export function malformedFrame(format: WireFormat): string {
  return format === 'ollama' ? '{"message": {"content": "half a line\n' : 'data: {"choices": [{"delta": \n\n';
}

export function wholeAnswer(format: WireFormat, script: ReplyScript, request: RecordedRequest): unknown {
  const model = request.body.model ?? 'test-model';
  const usage = usageOf(script, request);
  const calls = script.toolCalls ?? [];
  if (format === 'ollama') {
    return {
      model,
      created_at: new Date(0).toISOString(),
      message: {
        role: 'assistant',
        content: script.text ?? '',
        ...(script.thinking ? { thinking: script.thinking } : {}),
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((c) => ({
                ...(c.id ? { id: c.id } : {}),
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      },
      done: true,
      done_reason: script.finishReason ?? 'stop',
      prompt_eval_count: usage.prompt,
      eval_count: usage.completion,
    };
  }
  const ids = openAiCallIds(script);
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: calls.length > 0 && !script.text ? null : (script.text ?? ''),
          ...(script.thinking ? { [script.reasoningField ?? 'reasoning_content']: script.thinking } : {}),
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((c, i) => ({
                  id: ids[i],
                  type: 'function',
                  function: { name: c.name, arguments: JSON.stringify(c.arguments) },
                })),
              }
            : {}),
        },
        finish_reason: script.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  };
}
