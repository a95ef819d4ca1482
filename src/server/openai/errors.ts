/**
 * Every error under `/v1` in OpenAI's shape (`{error: {message, type, code, param}}`), since
 * OpenAI's clients read only that: the SDKs raise their typed errors (`NotFoundError`,
 * `AuthenticationError`…) from the status and show `error.message`. The statuses and messages
 * are Navi's own table's; the code is Navi's code lower-cased, except for the unknown model,
 * which gets OpenAI's `model_not_found` that clients already recognise.
 */
import type { ServerEvent } from '../../protocol/events.js';
import type { OpenAiErrorBody, OpenAiErrorType } from '../../protocol/openai.js';
import { ApiError, type ErrorCode, errorTable, toApiError } from '../errors.js';

/** An `ApiError` that names the request field at fault, as OpenAI's `param` does. */
export class OpenAiParamError extends ApiError {
  constructor(
    code: ErrorCode,
    detail: string,
    readonly param: string,
  ) {
    super(code, detail);
  }
}

export interface OpenAiFailure {
  status: number;
  body: OpenAiErrorBody;
  /** Not the client's doing: the caller logs it in full. */
  internal: boolean;
}

function typeFor(status: number): OpenAiErrorType {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 409) return 'conflict_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function codeFor(code: ErrorCode): string {
  return code === 'AGENT_MODEL_NOT_FOUND' ? 'model_not_found' : code.toLowerCase();
}

/** `/messages/0/content` → `messages[0].content`, the way OpenAI names a field in `param`. */
export function paramOf(pointer: string, missing?: string): string | null {
  const parts = pointer.split('/').filter((part) => part !== '');
  if (missing) parts.push(missing);
  if (parts.length === 0) return null;
  return parts.reduce(
    (path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part),
    '',
  );
}

interface ValidationLike {
  validation?: { instancePath?: string; params?: { missingProperty?: unknown } }[];
  validationContext?: unknown;
}

/** The field a schema validation error names, when it is the body's. */
function validationParam(error: unknown): string | null {
  const e = (typeof error === 'object' && error !== null ? error : {}) as ValidationLike;
  const first = Array.isArray(e.validation) ? e.validation[0] : undefined;
  if (!first || e.validationContext !== 'body') return null;
  const missing = first.params?.missingProperty;
  return paramOf(first.instancePath ?? '', typeof missing === 'string' ? missing : undefined);
}

/** Anything thrown while answering a `/v1` request, as OpenAI's error body and status. */
export function openAiFailure(error: unknown): OpenAiFailure {
  const { apiError, internal } = toApiError(error);
  const param = error instanceof OpenAiParamError ? error.param : validationParam(error);
  return {
    status: apiError.status,
    internal,
    body: {
      error: {
        message: apiError.message,
        type: typeFor(apiError.status),
        code: codeFor(apiError.code),
        param,
      },
    },
  };
}

/**
 * A run that ended in an error, as an answer (or a stream's `error` line): the run's own message,
 * which says what failed (the LLM unreachable, a model missing…) and what to do. 502, unless the
 * run refused the request itself for a reason of the client's (the session deleted meanwhile,
 * images for a text-only model): then that code's own status.
 */
export function runFailure(terminal: ServerEvent): { status: number; body: OpenAiErrorBody } {
  const message = terminal.type === 'error' ? terminal.message : 'The agent run failed';
  const code: ErrorCode = terminal.type === 'error' && terminal.code ? terminal.code : 'RUN_FAILED';
  const own = errorTable[code].status;
  const status = own >= 400 && own < 500 ? own : 502;
  return {
    status,
    body: { error: { message, type: typeFor(status), code: codeFor(code), param: null } },
  };
}
