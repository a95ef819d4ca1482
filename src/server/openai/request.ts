/**
 * Reading a Chat Completions request: the JSON schema Fastify checks first (types and sizes),
 * then the checks a schema cannot say well (the model, the parts of a message, the last message
 * being the user's), each refusal naming the field and what to send instead.
 *
 * What reaches the agent: the last message (text and images) as the run's `content`, and the
 * messages before it as `history`, as plain texts: `developer` counts as `system`, `tool`
 * messages and an assistant's `tool_calls` are left out (Navi runs its own tools; a client's
 * tool results have no call of Navi's to answer), an assistant message with no text too.
 */
import type { HistoryMessage } from '../../agent/types.js';
import {
  type ChatCompletionRequest,
  type ChatRequestMessage,
  NAVI_MODEL_PREFIX,
} from '../../protocol/openai.js';
import { isRecord } from '../../util/is-record.js';
import { ApiError } from '../errors.js';
import { normaliseImage } from '../run-input.js';
import type { NaviServices } from '../services.js';
import { OpenAiParamError } from './errors.js';

const nullable = (type: string) => ({ type: [type, 'null'] });

/**
 * Fields Navi uses are checked in full; fields it ignores only for their type, so a client with a
 * bug hears of it while every stock client's extra fields pass.
 */
export const chatRequestSchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1, maxLength: 300 },
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: 10_000,
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          role: { enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
          // Its three forms (string, parts, null) are told apart in readMessage, with a clearer refusal.
          content: {},
          name: { type: 'string' },
          tool_calls: nullable('array'),
          tool_call_id: { type: 'string' },
        },
      },
    },
    stream: nullable('boolean'),
    stream_options: {
      ...nullable('object'),
      properties: { include_usage: nullable('boolean') },
    },
    user: { type: 'string', maxLength: 256 },
    metadata: {
      ...nullable('object'),
      maxProperties: 16,
      additionalProperties: { type: 'string', maxLength: 512 },
    },
    n: { ...nullable('integer'), minimum: 1 },
    temperature: nullable('number'),
    top_p: nullable('number'),
    max_tokens: nullable('integer'),
    max_completion_tokens: nullable('integer'),
    presence_penalty: nullable('number'),
    frequency_penalty: nullable('number'),
    seed: nullable('integer'),
    stop: { anyOf: [{ type: 'string' }, { type: 'array' }, { type: 'null' }] },
    tools: nullable('array'),
    tool_choice: { anyOf: [{ type: 'string' }, { type: 'object' }, { type: 'null' }] },
    parallel_tool_calls: nullable('boolean'),
    response_format: nullable('object'),
    reasoning_effort: nullable('string'),
    logprobs: nullable('boolean'),
  },
} as const;

/** What a request asks of Navi once read. */
export interface ChatInput {
  profileId: string;
  content: string;
  images: string[];
  /** The messages before the last; undefined when the client sent only the new one. */
  history?: HistoryMessage[];
  stream: boolean;
  includeUsage: boolean;
  /** `metadata.session_id`, else `user`: names the conversation to continue. */
  key?: string;
}

/** The profile a model name stands for, or AGENT_MODEL_NOT_FOUND listing the models there are. */
export function profileOfModel(services: Pick<NaviServices, 'profiles'>, model: string): string {
  const id = model.startsWith(NAVI_MODEL_PREFIX) ? model.slice(NAVI_MODEL_PREFIX.length) : '';
  if (id !== '' && services.profiles.has(id)) return id;
  const models = services.profiles
    .list()
    .map((p) => `${NAVI_MODEL_PREFIX}${p.id}`)
    .join(', ');
  throw new OpenAiParamError(
    'AGENT_MODEL_NOT_FOUND',
    `${JSON.stringify(model.slice(0, 100))} is none; the models are ${models}`,
    'model',
  );
}

/** Parts one message may have; far more than any client sends. */
const MAX_PARTS = 1000;

interface MessageText {
  text: string;
  images: string[];
}

/** A message's text (parts joined by a blank line) and its images, each refusal naming the part. */
function readMessage(message: ChatRequestMessage, index: number): MessageText {
  const where = `messages[${index}].content`;
  const content: unknown = message.content;
  if (content === null || content === undefined) return { text: '', images: [] };
  if (typeof content === 'string') return { text: content, images: [] };
  if (!Array.isArray(content))
    throw new OpenAiParamError('BAD_REQUEST', `${where} must be a string, an array of parts, or null`, where);
  if (content.length > MAX_PARTS)
    throw new OpenAiParamError('BAD_REQUEST', `${where} has more than ${MAX_PARTS} parts`, where);
  const texts: string[] = [];
  const images: string[] = [];
  content.forEach((part: unknown, j) => {
    const at = `${where}[${j}]`;
    const p = isRecord(part) ? part : {};
    if (p.type === 'text') {
      if (typeof p.text !== 'string')
        throw new OpenAiParamError('BAD_REQUEST', `${at}.text must be a string`, at);
      texts.push(p.text);
      return;
    }
    if (p.type === 'image_url') {
      const url = isRecord(p.image_url) ? p.image_url.url : undefined;
      if (typeof url !== 'string')
        throw new OpenAiParamError(
          'BAD_REQUEST',
          `${at}.image_url.url must be a string`,
          `${at}.image_url.url`,
        );
      if (message.role !== 'user')
        throw new OpenAiParamError('BAD_REQUEST', `${at}: only user messages may carry images`, at);
      if (!url.startsWith('data:'))
        throw new OpenAiParamError(
          'INVALID_IMAGE',
          `${at}.image_url.url is not a data: URL; Navi does not fetch images, send them inline as data:image/png;base64,…`,
          `${at}.image_url.url`,
        );
      try {
        images.push(normaliseImage(url, images.length));
      } catch (err) {
        // normaliseImage counts images its own way; the part's place names this one better.
        const reason = (err instanceof ApiError && err.detail ? err.detail : 'is not base64').replace(
          /^image \d+ /,
          '',
        );
        throw new OpenAiParamError('INVALID_IMAGE', `${at}.image_url.url ${reason}`, `${at}.image_url.url`);
      }
      return;
    }
    const type = typeof p.type === 'string' ? JSON.stringify(p.type.slice(0, 40)) : 'without a type';
    throw new OpenAiParamError(
      'BAD_REQUEST',
      `${at} is a part ${type}; Navi reads "text" and "image_url" (data: URLs) parts`,
      at,
    );
  });
  return { text: texts.join('\n\n'), images };
}

function historyOf(messages: ChatRequestMessage[]): HistoryMessage[] {
  const history: HistoryMessage[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'tool') return;
    const { text, images } = readMessage(message, index);
    if (message.role === 'assistant') {
      if (text !== '') history.push({ role: 'assistant', content: text });
      return;
    }
    const role = message.role === 'developer' ? 'system' : message.role;
    history.push({ role, content: text, ...(images.length > 0 ? { images } : {}) });
  });
  return history;
}

/** Reads a request that passed the schema; throws an `OpenAiParamError` for what it refuses. */
export function readChatRequest(
  services: Pick<NaviServices, 'profiles'>,
  body: ChatCompletionRequest & { n?: number | null },
): ChatInput {
  const profileId = profileOfModel(services, body.model);
  if (typeof body.n === 'number' && body.n > 1)
    throw new OpenAiParamError('BAD_REQUEST', 'n must be 1: Navi gives one answer per request', 'n');
  const messages = body.messages;
  const lastIndex = messages.length - 1;
  const last = messages[lastIndex];
  if (last?.role !== 'user') {
    throw new OpenAiParamError(
      'BAD_REQUEST',
      `the last message is ${last ? `the ${last.role}'s` : 'missing'}; it must be the user's message Navi answers`,
      'messages',
    );
  }
  const { text, images } = readMessage(last, lastIndex);
  if (text.trim() === '' && images.length === 0)
    throw new OpenAiParamError(
      'BAD_REQUEST',
      'the last user message is empty; send text or an image',
      `messages[${lastIndex}].content`,
    );
  const input: ChatInput = {
    profileId,
    content: text,
    images,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
  };
  if (lastIndex > 0) input.history = historyOf(messages.slice(0, lastIndex));
  const key = body.metadata?.session_id || body.user;
  if (key) input.key = key;
  return input;
}
