/**
 * Errors the server may show to clients, from the one table of stable codes in
 * `src/protocol/error-codes.ts`. Only these reach clients; anything else (Fastify's own errors,
 * bugs) is mapped onto that table by `toApiError`, and internals stay in the log.
 */
import { type ErrorCode, errorTable } from '../protocol/error-codes.js';

export { type ErrorCode, errorTable } from '../protocol/error-codes.js';

/** An error meant for the client. `detail`, when given, must be safe to show. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
  ) {
    const entry = errorTable[code];
    super(detail ? `${entry.message}: ${detail}` : entry.message);
    this.name = 'ApiError';
    this.status = entry.status;
  }

  toBody(): { error: string; code: ErrorCode } {
    return { error: this.message, code: this.code };
  }
}

interface FastifyLikeError {
  code?: unknown;
  statusCode?: unknown;
  validation?: unknown;
  validationContext?: unknown;
  message?: unknown;
}

/** Fastify and plugin error codes a client can provoke, mapped onto our table. */
const frameworkCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_NOT_FOUND: 'NOT_FOUND',
  FST_ERR_BAD_URL: 'NOT_FOUND',
  // A path segment longer than the router keeps (100 characters) names nothing that exists.
  FST_ERR_MAX_PARAM_LENGTH: 'NOT_FOUND',
  FST_REQ_FILE_TOO_LARGE: 'FILE_TOO_LARGE',
  FST_PARTS_LIMIT: 'BODY_TOO_LARGE',
  FST_FILES_LIMIT: 'BODY_TOO_LARGE',
  FST_FIELDS_LIMIT: 'BODY_TOO_LARGE',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_PROTO_VIOLATION: 'BAD_REQUEST',
  FST_MP_PREMATURE_CLOSE: 'BAD_REQUEST',
  FST_INVALID_JSON_FIELD_ERROR: 'BAD_REQUEST',
};

/**
 * Maps anything thrown while handling a request to an `ApiError`. `internal` is true when the
 * error was not the client's doing (a bug, a failing dependency): the caller logs it in full.
 */
export function toApiError(error: unknown): { apiError: ApiError; internal: boolean } {
  if (error instanceof ApiError) return { apiError: error, internal: error.status >= 500 };
  const e = (typeof error === 'object' && error !== null ? error : {}) as FastifyLikeError;
  if (Array.isArray(e.validation)) {
    // Validation messages come from our own route schemas, so they are safe and useful to show.
    const where = typeof e.validationContext === 'string' ? e.validationContext : 'request';
    const first = e.validation[0] as
      | {
          instancePath?: string;
          message?: string;
          params?: { additionalProperty?: unknown; allowedValues?: unknown };
        }
      | undefined;
    // Name the unknown key, or the values allowed, so the client knows what to send instead.
    const extra = first?.params?.additionalProperty;
    const allowed = first?.params?.allowedValues;
    const named =
      typeof extra === 'string'
        ? ` (${JSON.stringify(extra.slice(0, 64))})`
        : Array.isArray(allowed)
          ? ` (${allowed.map((v) => JSON.stringify(v)).join(', ')})`
          : '';
    const detail = first
      ? `${where}${first.instancePath ?? ''} ${first.message ?? 'is invalid'}${named}`
      : undefined;
    return { apiError: new ApiError('BAD_REQUEST', detail), internal: false };
  }
  const code = typeof e.code === 'string' ? frameworkCodes[e.code] : undefined;
  if (code) return { apiError: new ApiError(code), internal: false };
  if (error instanceof SyntaxError && e.statusCode === 400)
    return { apiError: new ApiError('INVALID_JSON'), internal: false };
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status === 413) return { apiError: new ApiError('BODY_TOO_LARGE'), internal: false };
  if (status === 415) return { apiError: new ApiError('UNSUPPORTED_MEDIA_TYPE'), internal: false };
  if (status === 404) return { apiError: new ApiError('NOT_FOUND'), internal: false };
  // Any other 4xx from the framework is the client's mistake, but its text is not ours to show.
  if (status >= 400 && status < 500) return { apiError: new ApiError('BAD_REQUEST'), internal: false };
  return { apiError: new ApiError('INTERNAL'), internal: true };
}
