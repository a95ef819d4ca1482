/**
 * Navi's model answering an MCP server's `sampling/createMessage` (docs/mcp.md#sampling), once
 * the person has approved it: the default backend and model of the settings (chosen, and shown
 * to the person, before they approve), one streamed call without tools, bounded by `SAMPLING_LIMITS` and ended by the server's stop sequences.
 */
import type { ChatMessage, LlmBackend } from '../llm/types.js';
import { blockedAddressReason, isIpLiteral } from '../machine/net/ip-address.js';
import type { SamplingConfirmArgs } from '../protocol/events.js';

/** Navi's own bounds on what a server may ask of its model. */
export const SAMPLING_LIMITS = {
  /** The most tokens one answer may take, whatever the server asks for. */
  maxTokens: 4096,
  /** Characters of all messages and the system prompt together. */
  maxChars: 100_000,
  messages: 50,
  images: 4,
  /** Base64 characters of one image. */
  imageChars: 8 * 1024 * 1024,
  stopSequences: 8,
} as const;

export interface SamplingMessage {
  role: 'user' | 'assistant';
  text: string;
  /** Base64 images without a data: prefix. */
  images?: string[];
}

export interface SamplingRequest {
  systemPrompt?: string;
  messages: SamplingMessage[];
  /** Already capped by `SAMPLING_LIMITS.maxTokens`. */
  maxTokens: number;
  temperature?: number;
  stopSequences?: string[];
  signal: AbortSignal;
}

export interface SamplingReply {
  text: string;
  model: string;
  stopReason: 'endTurn' | 'stopSequence' | 'maxTokens';
}

/** The backend and model that answer a request, chosen before the person is asked. */
export interface SamplingChoice {
  /** As the person is shown it: which backend, where it lives, whether the prompt leaves the machine. */
  backend: SamplingConfirmArgs['backend'];
  model: string;
  /** Answers with this backend and model; rejects with an Error saying why (a model failure, a stop). */
  answer(request: SamplingRequest): Promise<SamplingReply>;
}

/**
 * Navi's model for servers. `choose` reads the settings once per request, before the person is
 * asked, so the backend and model the person approves are the ones that answer even if the
 * settings change meanwhile. It throws when no backend can be chosen.
 */
export interface McpSampler {
  choose(): SamplingChoice;
}

export interface SamplerDeps {
  /** The backend and model to answer with, read anew for every request (the settings may change). */
  model: () => { backend: LlmBackend; model: string };
  /** Whether the model reads images; absent: assumed, as for a backend that cannot tell. */
  vision?: (backend: LlmBackend, model: string, signal: AbortSignal) => Promise<boolean | undefined>;
}

export function createSampler(deps: SamplerDeps): McpSampler {
  return {
    choose() {
      const { backend, model } = deps.model();
      return {
        backend: backendShown(backend),
        model,
        answer: (request) => sample(deps, backend, model, request),
      };
    },
  };
}

/**
 * Whether `backend` runs on this machine: the embedded llamacpp does, and a backend reached over
 * HTTP does when its address (the URL its `describe()` names) is a loopback one. Any other host
 * is `remote`: the prompt leaves the machine. Undefined when the description names no address.
 */
export function backendLocation(backend: LlmBackend): 'local' | 'remote' | undefined {
  if (backend.id === 'llamacpp') return 'local';
  const url = /\bhttps?:\/\/\S+/.exec(backend.describe())?.[0];
  if (!url || !URL.canParse(url)) return undefined;
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return 'local';
  if (!isIpLiteral(host)) return 'remote';
  // 0.0.0.0 and :: are reached as this machine too.
  if (host === '0.0.0.0' || host === '::') return 'local';
  return blockedAddressReason(host) === 'loopback' ? 'local' : 'remote';
}

function backendShown(backend: LlmBackend): SamplingConfirmArgs['backend'] {
  const location = backendLocation(backend);
  return { id: backend.id, description: backend.describe(), ...(location ? { location } : {}) };
}

async function sample(
  deps: SamplerDeps,
  backend: LlmBackend,
  model: string,
  request: SamplingRequest,
): Promise<SamplingReply> {
  const hasImages = request.messages.some((m) => (m.images?.length ?? 0) > 0);
  if (hasImages && (await deps.vision?.(backend, model, request.signal)) === false)
    throw new Error(`the server sent images, and Navi's model ${model} does not read images`);
  const messages: ChatMessage[] = [
    ...(request.systemPrompt ? [{ role: 'system' as const, content: request.systemPrompt }] : []),
    ...request.messages.map((m) => ({
      role: m.role,
      content: m.text,
      ...(m.images?.length ? { images: m.images } : {}),
    })),
  ];
  // Stop sequences are applied here, on the streamed text: not every backend takes them.
  const stops = (request.stopSequences ?? []).filter((s) => s !== '');
  const local = new AbortController();
  const signal = AbortSignal.any([request.signal, local.signal]);
  let text = '';
  let stopReason: SamplingReply['stopReason'] = 'endTurn';
  for await (const chunk of backend.streamComplete({
    messages,
    model,
    maxTokens: request.maxTokens,
    think: false,
    signal,
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
  })) {
    if (chunk.type === 'text') {
      if (stopReason === 'stopSequence') continue;
      text += chunk.delta;
      const cut = firstStop(text, stops);
      if (cut !== undefined) {
        text = text.slice(0, cut);
        stopReason = 'stopSequence';
        local.abort();
      }
    } else if (chunk.type === 'done') {
      if (chunk.reason === 'error') throw new Error(chunk.error?.message ?? 'the model failed');
      if (chunk.reason === 'aborted' && stopReason !== 'stopSequence')
        throw new Error('the tool call ended before the model answered');
      if (chunk.reason === 'length') stopReason = 'maxTokens';
    }
  }
  return { text, model, stopReason };
}

function firstStop(text: string, stops: string[]): number | undefined {
  let best: number | undefined;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0 && (best === undefined || at < best)) best = at;
  }
  return best;
}
