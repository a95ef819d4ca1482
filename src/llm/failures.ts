/**
 * Turns transport and HTTP problems into `LlmFailure`s whose messages name the backend, its URL
 * and what to do next. Backend-specific advice comes in through `ServerInfo.hints`.
 */

import type { ErrorCode } from '../protocol/error-codes.js';
import { excerpt } from './ndjson.js';
import type { LlmErrorCode, LlmFailure } from './types.js';

export interface FailureHints {
  /** After "Cannot reach … (reason)." */
  unreachable: string;
  /** After a 401/403. */
  auth: string;
  modelNotFound(model: string): string;
  /** After a 404 that does not mention a model: usually a wrong base URL. */
  notFound: string;
  contextOverflow: string;
}

export interface ServerInfo {
  /** e.g. "Ollama server", "OpenAI-compatible server". */
  label: string;
  baseUrl: string;
  hints: FailureHints;
}

export const where = (server: ServerInfo): string => `the ${server.label} at ${server.baseUrl}`;

const capitalized = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

const contextWording =
  /context[ _-]?(length|size|window)|maximum context|exceeds? (the )?(available )?context|too many tokens|prompt is too long|input (length|is too long)/i;

/** The human part of an error body: Ollama's `{error}`, OpenAI's `{error:{message}}`, or the raw text. */
export function errorText(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object') {
      const p = parsed as Record<string, unknown>;
      const err = p.error;
      if (typeof err === 'string') return err;
      if (err && typeof err === 'object') {
        const e = err as Record<string, unknown>;
        if (typeof e.message === 'string')
          return typeof e.code === 'string' ? `${e.message} (${e.code})` : e.message;
      }
      if (typeof p.message === 'string') return p.message;
      if (typeof p.detail === 'string') return p.detail;
    }
  } catch {
    // Not JSON: the raw body is the best we have.
  }
  return body;
}

/** Maps an HTTP error status (or an error object inside a 200 stream when `status` is undefined). */
export function httpFailure(
  server: ServerInfo,
  model: string,
  status: number | undefined,
  body: string,
): LlmFailure {
  const said = excerpt(errorText(body), 200).replace(/[.\s]+$/, '') || '(empty body)';
  const statusPart = status === undefined ? 'an error in its stream' : `HTTP ${status}`;
  const withStatus = status === undefined ? {} : { status };
  if (status === 401 || status === 403) {
    return {
      code: 'auth',
      message: `${capitalized(where(server))} refused the request (${statusPart}: ${said}). ${server.hints.auth}`,
      ...withStatus,
    };
  }
  if (
    (status === 404 || status === undefined) &&
    /model/i.test(said) &&
    /not (be )?found|does not exist|no such|pull/i.test(said)
  ) {
    return {
      code: 'model_not_found',
      message: `${capitalized(where(server))} does not have the model "${model}" (${statusPart}: ${said}). ${server.hints.modelNotFound(model)}`,
      ...withStatus,
    };
  }
  if ((status === 400 || status === 413 || status === undefined) && contextWording.test(said)) {
    return {
      code: 'context_overflow',
      message: `The conversation does not fit the context window of model "${model}" on ${where(server)} (${statusPart}: ${said}). ${server.hints.contextOverflow}`,
      ...withStatus,
    };
  }
  if (/does not support tools/i.test(said)) {
    return {
      code: 'unsupported',
      message: `Model "${model}" on ${where(server)} cannot call tools (${said}). Choose a model with tool support for this profile.`,
      ...withStatus,
    };
  }
  const advice = status === 404 ? ` ${server.hints.notFound}` : '';
  return {
    code: 'http',
    message: `${capitalized(where(server))} answered with ${statusPart}: ${said}.${advice}`,
    ...withStatus,
  };
}

export function unreachableFailure(server: ServerInfo, reason: string): LlmFailure {
  return {
    code: 'unreachable',
    message: `Cannot reach ${where(server)} (${reason}). ${server.hints.unreachable}`,
  };
}

export function timeoutFailure(server: ServerInfo, what: string, ms: number, setting: string): LlmFailure {
  return {
    code: 'timeout',
    message: `${capitalized(where(server))} ${what} for ${formatMs(ms)} (${setting}=${ms}). The model may be stuck or the machine overloaded: retry, or raise ${setting}.`,
  };
}

export function cutFailure(server: ServerInfo, detail: string): LlmFailure {
  return {
    code: 'malformed',
    message: `${capitalized(where(server))}: the stream ended early, before the answer was complete (${detail}). Retry; if it keeps happening, look at the server's log.`,
  };
}

export function malformedFailure(server: ServerInfo, detail: string): LlmFailure {
  return {
    code: 'malformed',
    message: `${capitalized(where(server))} sent a stream that could not be read (${detail}). Check that the URL points at the right kind of server.`,
  };
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

const wireCodes: Record<LlmErrorCode, ErrorCode> = {
  unreachable: 'LLM_UNREACHABLE',
  timeout: 'LLM_TIMEOUT',
  http: 'LLM_HTTP_ERROR',
  auth: 'LLM_AUTH',
  model_not_found: 'LLM_MODEL_NOT_FOUND',
  context_overflow: 'CONTEXT_OVERFLOW',
  malformed: 'LLM_MALFORMED',
  unsupported: 'LLM_UNSUPPORTED',
};

/** The stable code clients see (REST and `error` events) for an LLM failure of this kind. */
export function failureErrorCode(code: LlmErrorCode): ErrorCode {
  return wireCodes[code];
}
