/**
 * Errors the server may show to clients: one table of stable codes, each with its HTTP status
 * and a message written for people. Only these reach clients; anything else (Fastify's own
 * errors, bugs) is mapped onto this table by `toApiError`, and internals stay in the log.
 */

export const errorTable = {
  BAD_REQUEST: { status: 400, message: 'The request is not valid' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON' },
  INVALID_TITLE: { status: 400, message: 'A title must be 1 to 200 characters long' },
  UNKNOWN_PROFILE: { status: 400, message: 'There is no agent profile with that id' },
  INVALID_IMAGE: { status: 400, message: 'An image is not valid base64 or is too large' },
  FILE_NOT_IN_SESSION: { status: 400, message: 'Only files uploaded to this session can be attached' },
  INVALID_FILE_NAME: { status: 400, message: 'The file name is not acceptable' },
  MISSING_FILE: { status: 400, message: 'The upload needs a multipart field named "file"' },
  UNAUTHORIZED: { status: 401, message: 'A valid API token is required' },
  REMOTE_FORBIDDEN: {
    status: 403,
    message: 'Only local clients are served while NAVI_API_TOKEN is not set',
  },
  FOREIGN_HOST: {
    status: 403,
    message:
      'Without NAVI_API_TOKEN only requests addressed to localhost or NAVI_HOST are served; set NAVI_API_TOKEN to serve other host names',
  },
  FOREIGN_ORIGIN: { status: 403, message: 'Requests from this browser origin are not allowed' },
  NOT_FOUND: { status: 404, message: 'Not found' },
  SESSION_NOT_FOUND: { status: 404, message: 'There is no session with that id' },
  FILE_NOT_FOUND: { status: 404, message: 'There is no such file in this session' },
  CONFIRMATION_NOT_FOUND: {
    status: 404,
    message: 'No tool call of this session is waiting for that confirmation',
  },
  FACT_NOT_FOUND: { status: 404, message: 'There is no memory fact with that id' },
  INVALID_FACT: { status: 400, message: 'The memory fact is not valid' },
  FACT_CONFLICT: { status: 409, message: 'Another fact already uses that category and key' },
  RUN_ACTIVE: { status: 409, message: 'The session is already answering; wait for it or stop it' },
  BODY_TOO_LARGE: { status: 413, message: 'The request body is too large' },
  FILE_TOO_LARGE: { status: 413, message: 'The file is larger than the upload limit' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'This content type is not accepted here' },
  INTERNAL: { status: 500, message: 'Something went wrong inside the server; it has been logged' },
  RUN_FAILED: { status: 502, message: 'The agent run failed' },
  SHUTTING_DOWN: { status: 503, message: 'The server is shutting down' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorTable;

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
    const first = e.validation[0] as { instancePath?: string; message?: string } | undefined;
    const detail = first ? `${where}${first.instancePath ?? ''} ${first.message ?? 'is invalid'}` : undefined;
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
