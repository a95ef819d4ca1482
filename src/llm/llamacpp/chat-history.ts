/**
 * Navi's conversation in node-llama-cpp's terms: its chat history (system, user and model items,
 * a model item holding the text, the function calls and their results) and its functions, whose
 * parameter schemas become a grammar when the model calls one. That grammar takes a subset of
 * JSON Schema, so tool schemas are narrowed to it here: what it cannot express is dropped
 * (patterns, numeric bounds) or widened to "any value", never refused.
 */
import { alternateRoles } from '../alternation.js';
import type { ChatMessage, JsonSchema, ToolSpec } from '../types.js';
import type {
  FunctionParams,
  LlamaChatFunctions,
  LlamaChatHistoryItem,
  LlamaModelResponsePart,
} from './binding-types.js';

type FunctionCallPart = Extract<LlamaModelResponsePart, { type: 'functionCall' }>;

/**
 * The history to generate from; it always ends with a model item, which the model continues
 * (an empty one for a new answer, or the one holding the tool calls whose results just came).
 */
export function toLlamaHistory(messages: readonly ChatMessage[]): LlamaChatHistoryItem[] {
  const history: LlamaChatHistoryItem[] = [];
  const pending = new Map<string, FunctionCallPart>();
  const lastModel = (): Extract<LlamaChatHistoryItem, { type: 'model' }> => {
    const last = history.at(-1);
    if (last?.type === 'model') return last;
    const item: LlamaChatHistoryItem = { type: 'model', response: [] };
    history.push(item);
    return item;
  };
  for (const message of alternateRoles(messages)) {
    const text = message.content ?? '';
    if (message.role === 'system') {
      history.push({ type: 'system', text });
    } else if (message.role === 'user') {
      const images = message.images?.length ?? 0;
      const note =
        images > 0
          ? `\n\n(${images} image${images > 1 ? 's were' : ' was'} attached; this model cannot see images.)`
          : '';
      history.push({ type: 'user', text: `${text}${note}` });
    } else if (message.role === 'assistant') {
      // After tool results the answer goes on in the same model item, as the template expects.
      const item = lastModel();
      if (text.trim() !== '') item.response.push(text);
      for (const call of message.tool_calls ?? []) {
        const part: FunctionCallPart = {
          type: 'functionCall',
          name: call.name,
          params: call.arguments,
          result: '',
        };
        item.response.push(part);
        pending.set(call.id, part);
      }
    } else {
      const part = message.tool_call_id === undefined ? undefined : pending.get(message.tool_call_id);
      if (part) {
        part.result = text;
        pending.delete(message.tool_call_id as string);
      } else {
        // A result whose call is not in the context (it was compressed away): still worth reading.
        history.push({ type: 'user', text: `Result of the tool ${message.name ?? '(unknown)'}:\n${text}` });
      }
    }
  }
  lastModel();
  return history;
}

/** Navi's tools as node-llama-cpp functions. */
export function toLlamaFunctions(tools: readonly ToolSpec[]): LlamaChatFunctions {
  const functions: LlamaChatFunctions = {};
  for (const tool of tools) {
    const params = grammarSchema(tool.parameters);
    functions[tool.name] = { description: tool.description, ...(params ? { params } : {}) };
  }
  return functions;
}

const BASIC = ['string', 'number', 'integer', 'boolean', 'null'];
const ANY: FunctionParams = {
  oneOf: [
    { type: ['string', 'number', 'boolean', 'null'] },
    { type: 'array' },
    { type: 'object', additionalProperties: true },
  ],
};
const FORMATS = ['date-time', 'time', 'date'];
const MAX_DEPTH = 16;

/** A tool's parameter schema in the JSON Schema subset node-llama-cpp's grammar takes. */
export function grammarSchema(schema: JsonSchema): FunctionParams | undefined {
  const narrowed = narrow(schema, 0);
  // An object without properties is a tool that takes none: no grammar needed.
  if (narrowed.type === 'object' && !narrowed.properties) return undefined;
  return narrowed;
}

function narrow(schema: unknown, depth: number): FunctionParams {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || depth > MAX_DEPTH) return ANY;
  const s = schema as Record<string, unknown>;
  const description = typeof s.description === 'string' ? { description: s.description } : {};
  if ('const' in s && isPrimitive(s.const)) return { const: s.const, ...description };
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every(isPrimitive))
    return { enum: s.enum, ...description };
  const choices = Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : undefined;
  if (choices && choices.length > 0)
    return { oneOf: choices.map((c) => narrow(c, depth + 1)), ...description };
  const type = Array.isArray(s.type) ? s.type : typeof s.type === 'string' ? [s.type] : undefined;
  if (type === undefined) {
    if (s.properties && typeof s.properties === 'object') return narrowObject(s, depth, description);
    return ANY;
  }
  if (type.length === 1 && type[0] === 'object') return narrowObject(s, depth, description);
  if (type.length === 1 && type[0] === 'array') return narrowArray(s, depth, description);
  if (type.length === 1 && type[0] === 'string') {
    const format = typeof s.format === 'string' && FORMATS.includes(s.format) ? { format: s.format } : {};
    const lengths = Object.fromEntries(
      ['minLength', 'maxLength'].filter((k) => Number.isInteger(s[k])).map((k) => [k, s[k]]),
    );
    return { type: 'string', ...(format.format ? format : lengths), ...description };
  }
  if (type.every((t) => typeof t === 'string' && BASIC.includes(t))) {
    return { type: type.length === 1 ? type[0] : type, ...description };
  }
  // A mix with object or array: each becomes its own choice.
  return { oneOf: type.map((t) => narrow({ ...s, type: t }, depth + 1)), ...description };
}

function narrowObject(s: Record<string, unknown>, depth: number, description: object): FunctionParams {
  const properties =
    s.properties && typeof s.properties === 'object' ? (s.properties as Record<string, unknown>) : {};
  const names = Object.keys(properties);
  if (names.length === 0) return { type: 'object', additionalProperties: true, ...description };
  const required = Array.isArray(s.required)
    ? s.required.filter((r) => typeof r === 'string' && names.includes(r))
    : [];
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, narrow(properties[n], depth + 1)])),
    required,
    ...description,
  };
}

function narrowArray(s: Record<string, unknown>, depth: number, description: object): FunctionParams {
  const out: Record<string, unknown> = { type: 'array', ...description };
  if (Array.isArray(s.items)) out.prefixItems = s.items.map((i) => narrow(i, depth + 1));
  else if (s.items && typeof s.items === 'object') out.items = narrow(s.items, depth + 1);
  for (const k of ['minItems', 'maxItems']) if (Number.isInteger(s[k])) out[k] = s[k];
  return out;
}

function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}
