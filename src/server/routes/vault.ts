/**
 * The secrets vault for the person's own client (the web client's Vault page): list, read,
 * create, change, archive and restore secrets, reveal one field, read the audit log. Every call
 * is audited with actor `user`.
 *
 * All routes but `GET /vault` need the person's consent (the token or a paired browser): the
 * agent's own commands run on this machine too, and a reveal from them would be recorded as the
 * person's. Every answer carries `Cache-Control: no-store`, so no value or listing is kept by a
 * browser or a proxy. Bodies are never logged (request logging is off, and errors are logged
 * by code and URL only), and nothing here logs a request.
 */
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type {
  AuditList,
  NewSecret,
  RevealReply,
  RevealRequest,
  SecretList,
  SecretPatch,
  SecretRecord,
  StatusRequest,
  VaultState,
} from '../../protocol/vault.js';
import {
  type AuditContext,
  FIELD_NAME,
  SECRET_ID_PATTERN,
  SECRET_STATUSES,
  SECRET_TYPES,
  type SecretStatus,
  type SecretType,
  VaultError,
  type VaultErrorCode,
} from '../../vault/index.js';
import { LIMITS } from '../../vault/validation.js';
import type { ServerContext } from '../context.js';
import { ApiError, type ErrorCode } from '../errors.js';

const errorCodes: Record<VaultErrorCode, ErrorCode> = {
  locked: 'VAULT_LOCKED',
  not_found: 'VAULT_NOT_FOUND',
  invalid: 'VAULT_INVALID',
  conflict: 'VAULT_CONFLICT',
  audit_failed: 'VAULT_AUDIT_FAILED',
  io: 'VAULT_UNAVAILABLE',
};

/** Who acts through these routes: the person, on their own secrets. */
const user: AuditContext = { actor: 'user' };

/** Enough for 50 fields of 64 KiB each, JSON-escaped; anything bigger is refused with 413. */
const SECRET_BODY_BYTES = 4 * 1024 * 1024;
const SMALL_BODY_BYTES = 16 * 1024;

const UUID = SECRET_ID_PATTERN;

const idParams = {
  type: 'object',
  properties: { id: { type: 'string', pattern: UUID } },
  required: ['id'],
} as const;

const fieldName = { type: 'string', pattern: FIELD_NAME.source } as const;

const fieldSchema = {
  type: 'object',
  properties: {
    name: fieldName,
    value: { type: 'string', minLength: 1, maxLength: LIMITS.valueBytes },
    secret: { type: 'boolean' },
  },
  required: ['name', 'value', 'secret'],
  additionalProperties: false,
} as const;

const common = {
  name: { type: 'string', minLength: 1, maxLength: LIMITS.name },
  type: { type: 'string', enum: SECRET_TYPES },
  tags: {
    type: 'array',
    maxItems: LIMITS.tags,
    items: { type: 'string', minLength: 1, maxLength: LIMITS.tag },
  },
} as const;

const newSecretBody = {
  type: 'object',
  properties: {
    ...common,
    fields: { type: 'array', minItems: 1, maxItems: LIMITS.fields, items: fieldSchema },
    status: { type: 'string', enum: ['actual', 'outdated'] },
  },
  required: ['name', 'type', 'fields'],
  additionalProperties: false,
} as const;

const patchBody = {
  type: 'object',
  properties: {
    ...common,
    fields: { type: 'array', maxItems: LIMITS.fields, items: fieldSchema },
    remove_fields: { type: 'array', maxItems: LIMITS.fields, items: fieldName },
  },
  additionalProperties: false,
  minProperties: 1,
} as const;

const statusBody = {
  type: 'object',
  properties: { status: { type: 'string', enum: SECRET_STATUSES } },
  required: ['status'],
  additionalProperties: false,
} as const;

const revealBody = {
  type: 'object',
  properties: { field: fieldName, reason: { type: 'string', maxLength: LIMITS.reason } },
  required: ['field'],
  additionalProperties: false,
} as const;

// Query strings arrive as text and the server does not coerce types, so numbers and booleans
// are matched as strings here and converted below.
const listQuery = {
  type: 'object',
  properties: {
    query: { type: 'string', maxLength: LIMITS.query },
    type: { type: 'string', enum: SECRET_TYPES },
    tag: { type: 'string', minLength: 1, maxLength: LIMITS.tag },
    status: { type: 'string', enum: SECRET_STATUSES },
    include_archived: { type: 'string', enum: ['true', 'false'] },
    limit: { type: 'string', pattern: '^([1-9]|[1-9][0-9]|1[0-9]{2}|200)$' },
  },
  additionalProperties: false,
} as const;

const auditQuery = {
  type: 'object',
  properties: {
    limit: { type: 'string', pattern: '^([1-9][0-9]{0,2}|1000)$' },
    secret_id: { type: 'string', pattern: UUID },
  },
  additionalProperties: false,
} as const;

/**
 * Runs a vault call and turns its refusals into the error table's codes. Anything else the vault
 * throws (its database or disk failing) is logged in full and answered 503: the request was
 * fine, and nothing a client sends may yield a 500.
 */
function call<T>(log: FastifyBaseLogger, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof VaultError) {
      if (err.locked)
        throw new ApiError('VAULT_LOCKED', `${err.locked.reason}. To unlock it, ${err.locked.howToUnlock}`);
      throw new ApiError(errorCodes[err.code], err.message);
    }
    log.error({ err }, 'the vault failed');
    throw new ApiError('VAULT_UNAVAILABLE', 'it failed unexpectedly; the server log says why');
  }
}

export const vaultRoutes: FastifyPluginAsync<ServerContext> = async (app, { services }) => {
  const vault = services.vault;
  const consent = { consent: true } as const;

  // Scoped to this plugin: every vault answer, values and listings alike, stays out of caches.
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('cache-control', 'no-store');
    return payload;
  });

  app.get('/vault', async (request): Promise<VaultState> => call(request.log, () => vault.status()));

  app.get<{
    Querystring: {
      query?: string;
      type?: SecretType;
      tag?: string;
      status?: SecretStatus;
      include_archived?: 'true' | 'false';
      limit?: string;
    };
  }>(
    '/vault/secrets',
    { config: consent, schema: { querystring: listQuery } },
    async (request): Promise<SecretList> => {
      const q = request.query;
      // The person sees archived secrets when they ask for them; asking for the status is asking.
      const includeArchived = q.include_archived === 'true' || q.status === 'archived';
      const secrets = call(request.log, () =>
        vault.search({
          ...(q.query !== undefined ? { query: q.query } : {}),
          ...(q.type !== undefined ? { type: q.type } : {}),
          ...(q.tag !== undefined ? { tag: q.tag } : {}),
          ...(q.status !== undefined ? { status: q.status } : {}),
          ...(q.limit !== undefined ? { limit: Number(q.limit) } : {}),
          includeArchived,
        }),
      );
      return { secrets };
    },
  );

  app.post<{ Body: NewSecret }>(
    '/vault/secrets',
    { config: consent, bodyLimit: SECRET_BODY_BYTES, schema: { body: newSecretBody } },
    async (request, reply): Promise<SecretRecord> => {
      const record = call(request.log, () => vault.create(request.body, user));
      reply.code(201);
      return record;
    },
  );

  app.get<{ Params: { id: string } }>(
    '/vault/secrets/:id',
    { config: consent, schema: { params: idParams } },
    async (request): Promise<SecretRecord> =>
      call(request.log, () => vault.get(request.params.id, { includeArchived: true })),
  );

  app.patch<{ Params: { id: string }; Body: SecretPatch }>(
    '/vault/secrets/:id',
    { config: consent, bodyLimit: SECRET_BODY_BYTES, schema: { params: idParams, body: patchBody } },
    async (request): Promise<SecretRecord> =>
      call(request.log, () => vault.update(request.params.id, request.body, user)),
  );

  app.post<{ Params: { id: string }; Body: StatusRequest }>(
    '/vault/secrets/:id/status',
    { config: consent, bodyLimit: SMALL_BODY_BYTES, schema: { params: idParams, body: statusBody } },
    async (request): Promise<SecretRecord> =>
      call(request.log, () => vault.setStatus(request.params.id, request.body.status, user)),
  );

  app.post<{ Params: { id: string }; Body: unknown }>(
    '/vault/secrets/:id/archive',
    { config: consent, bodyLimit: SMALL_BODY_BYTES, schema: { params: idParams } },
    async (request): Promise<SecretRecord> => {
      // A body schema would also refuse a request without one; this route takes none, or `{}`.
      const body = request.body;
      if (body !== undefined && (typeof body !== 'object' || body === null || Object.keys(body).length > 0))
        throw new ApiError('BAD_REQUEST', 'archiving takes no body; send none (or {})');
      return call(request.log, () => vault.archive(request.params.id, user));
    },
  );

  app.post<{ Params: { id: string }; Body: RevealRequest }>(
    '/vault/secrets/:id/reveal',
    { config: consent, bodyLimit: SMALL_BODY_BYTES, schema: { params: idParams, body: revealBody } },
    async (request): Promise<RevealReply> => {
      const { field, reason } = request.body;
      const audit: AuditContext = reason ? { ...user, reason } : user;
      return { value: call(request.log, () => vault.reveal(request.params.id, field, audit)) };
    },
  );

  app.get<{ Querystring: { limit?: string; secret_id?: string } }>(
    '/vault/audit',
    { config: consent, schema: { querystring: auditQuery } },
    async (request): Promise<AuditList> => {
      const { limit, secret_id } = request.query;
      const entries = call(request.log, () =>
        vault.auditLog({
          ...(limit !== undefined ? { limit: Number(limit) } : {}),
          ...(secret_id !== undefined ? { secret_id } : {}),
        }),
      );
      return { entries };
    },
  );
};
