/**
 * Checks of everything that reaches the vault from outside (MCP tool calls, REST bodies,
 * backups). Inputs are `unknown`: a hostile or confused caller gets `VaultError('invalid')`
 * saying what was wrong and what to send instead, never a crash.
 */

import { isRecord } from '../util/is-record.js';
import {
  type AuditContext,
  FIELD_NAME,
  type NewSecret,
  SECRET_ID_PATTERN,
  SECRET_STATUSES,
  SECRET_TYPES,
  type SecretFieldInput,
  type SecretPatch,
  type SecretStatus,
  type SecretType,
  VaultError,
} from './types.js';

export const LIMITS = {
  name: 200,
  tags: 20,
  tag: 64,
  fields: 50,
  valueBytes: 64 * 1024,
  query: 1000,
  searchDefault: 50,
  searchMax: 200,
  auditDefault: 100,
  auditMax: 1000,
  /** The reason a reveal gives, as the tools and the REST routes accept it. */
  reason: 500,
} as const;

const UUID = new RegExp(SECRET_ID_PATTERN);

const invalid = (message: string) => new VaultError('invalid', message);

/** How an id is shown in a message: quoted, and short whatever it was. */
export function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

export function notFound(id: unknown): VaultError {
  return new VaultError(
    'not_found',
    `no secret with id ${shown(id)}; search the vault by name to find the id of the secret you mean`,
  );
}

/** A secret's id in its stored (lower-case) form; anything that is not a UUID is no secret's id. */
export function parseId(id: unknown): string {
  if (typeof id !== 'string' || !UUID.test(id)) throw notFound(id);
  return id.toLowerCase();
}

export function checkName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || name.length > LIMITS.name)
    throw invalid(
      `name must be text of 1 to ${LIMITS.name} characters; give the secret a short name such as "GitHub token"`,
    );
  return name;
}

export function checkType(value: unknown): SecretType {
  if (typeof value !== 'string' || !(SECRET_TYPES as readonly string[]).includes(value))
    throw invalid(`type ${shown(value)} is not a secret type; use one of ${SECRET_TYPES.join(', ')}`);
  return value as SecretType;
}

export function checkStatus(value: unknown): SecretStatus {
  if (typeof value !== 'string' || !(SECRET_STATUSES as readonly string[]).includes(value))
    throw invalid(`status ${shown(value)} is not a status; use one of ${SECRET_STATUSES.join(', ')}`);
  return value as SecretStatus;
}

export function checkTags(value: unknown): string[] {
  const message = `tags must be a list of at most ${LIMITS.tags} words of 1 to ${LIMITS.tag} characters each`;
  if (!Array.isArray(value) || value.length > LIMITS.tags) throw invalid(message);
  const tags: string[] = [];
  for (const tag of value) {
    const t = typeof tag === 'string' ? tag.trim() : '';
    if (t === '' || t.length > LIMITS.tag) throw invalid(`${message}; ${shown(tag)} is not`);
    if (!tags.includes(t)) tags.push(t);
  }
  return tags;
}

export function checkFieldName(value: unknown): string {
  if (typeof value !== 'string' || !FIELD_NAME.test(value))
    throw invalid(
      `field name ${shown(value)} is not allowed; use 1 to 64 letters, digits, _ or - (such as "password" or "api_key")`,
    );
  return value;
}

function checkField(value: unknown): SecretFieldInput {
  if (!isRecord(value))
    throw invalid(
      'each field must be an object { name, value, secret }, such as { "name": "password", "value": "…", "secret": true }',
    );
  const name = checkFieldName(value.name);
  if (typeof value.secret !== 'boolean')
    throw invalid(
      `field "${name}" needs secret: true (encrypted, shown masked) or false (plain, such as a user name)`,
    );
  if (typeof value.value !== 'string' || value.value === '')
    throw invalid(
      `the value of field "${name}" is missing or empty; give its value as text, or leave the field out`,
    );
  const bytes = Buffer.byteLength(value.value, 'utf8');
  if (bytes > LIMITS.valueBytes)
    throw invalid(
      `the value of field "${name}" is ${bytes} bytes, more than the ${LIMITS.valueBytes / 1024} KiB a field holds; store a shorter value`,
    );
  return { name, value: value.value, secret: value.secret };
}

export function checkFields(value: unknown, { min }: { min: number }): SecretFieldInput[] {
  if (!Array.isArray(value) || value.length < min || value.length > LIMITS.fields)
    throw invalid(
      `fields must be a list of ${min} to ${LIMITS.fields} fields { name, value, secret }, such as [{ "name": "password", "value": "…", "secret": true }]`,
    );
  const fields = value.map(checkField);
  const seen = new Set<string>();
  for (const f of fields) {
    if (seen.has(f.name)) throw invalid(`field "${f.name}" appears twice; give each field its own name`);
    seen.add(f.name);
  }
  return fields;
}

function checkKeys(value: Record<string, unknown>, allowed: readonly string[], what: string): void {
  const unknown = Object.keys(value).filter((k) => value[k] !== undefined && !allowed.includes(k));
  if (unknown.length > 0)
    throw invalid(
      `${what} has no ${unknown.map((k) => shown(k)).join(', ')}; it takes ${allowed.join(', ')}`,
    );
}

export function checkNewSecret(value: unknown): Required<NewSecret> {
  if (!isRecord(value))
    throw invalid('a new secret must be an object { name, type, fields, tags?, status? }');
  checkKeys(value, ['name', 'type', 'tags', 'fields', 'status'], 'a new secret');
  const status = value.status === undefined ? 'actual' : checkStatus(value.status);
  if (status === 'archived')
    throw invalid('a new secret cannot start archived; use status actual or outdated');
  return {
    name: checkName(value.name),
    type: checkType(value.type),
    tags: value.tags === undefined ? [] : checkTags(value.tags),
    fields: checkFields(value.fields, { min: 1 }),
    status,
  };
}

export function checkPatch(value: unknown): SecretPatch {
  if (!isRecord(value))
    throw invalid('a change must be an object { name?, type?, tags?, fields?, remove_fields? }');
  checkKeys(value, ['name', 'type', 'tags', 'fields', 'remove_fields'], 'a change');
  const patch: SecretPatch = {};
  if (value.name !== undefined) patch.name = checkName(value.name);
  if (value.type !== undefined) patch.type = checkType(value.type);
  if (value.tags !== undefined) patch.tags = checkTags(value.tags);
  if (value.fields !== undefined) patch.fields = checkFields(value.fields, { min: 0 });
  if (value.remove_fields !== undefined) {
    if (!Array.isArray(value.remove_fields) || value.remove_fields.length > LIMITS.fields)
      throw invalid('remove_fields must be a list of field names');
    patch.remove_fields = value.remove_fields.map(checkFieldName);
    const both = patch.remove_fields.filter((n) => patch.fields?.some((f) => f.name === n));
    if (both.length > 0) throw invalid(`field "${both[0]}" is both set and removed; do one or the other`);
  }
  if (Object.keys(patch).length === 0 || (patch.fields?.length === 0 && Object.keys(patch).length === 1))
    throw invalid('the change is empty; give at least one of name, type, tags, fields or remove_fields');
  return patch;
}

export interface CheckedQuery {
  words: string[];
  type?: SecretType;
  tag?: string;
  statuses: SecretStatus[];
  limit: number;
}

export function checkQuery(value: unknown): CheckedQuery {
  if (value !== undefined && !isRecord(value))
    throw invalid('a search must be an object { query?, type?, tag?, status?, limit? }');
  const q = (value ?? {}) as Record<string, unknown>;
  checkKeys(q, ['query', 'type', 'tag', 'status', 'limit', 'includeArchived'], 'a search');
  if (q.query !== undefined && (typeof q.query !== 'string' || q.query.length > LIMITS.query))
    throw invalid(
      `query must be text of at most ${LIMITS.query} characters: words from the name, tags or plain fields`,
    );
  const words = typeof q.query === 'string' ? q.query.toLowerCase().split(/\s+/).filter(Boolean) : [];
  const limit = checkLimit(q.limit, LIMITS.searchDefault, LIMITS.searchMax);
  const includeArchived = q.includeArchived === true;
  let statuses: SecretStatus[] = includeArchived ? [...SECRET_STATUSES] : ['actual', 'outdated'];
  if (q.status !== undefined) {
    const status = checkStatus(q.status);
    if (status === 'archived' && !includeArchived)
      throw invalid(
        'archived secrets are not searchable here; search actual or outdated ones, or ask the person to look on the Vault page',
      );
    statuses = [status];
  }
  let tag: string | undefined;
  if (q.tag !== undefined) {
    if (typeof q.tag !== 'string' || q.tag.trim() === '' || q.tag.length > LIMITS.tag)
      throw invalid(`tag must be text of 1 to ${LIMITS.tag} characters`);
    tag = q.tag.trim().toLowerCase();
  }
  return {
    words,
    ...(q.type !== undefined ? { type: checkType(q.type) } : {}),
    ...(tag !== undefined ? { tag } : {}),
    statuses,
    limit,
  };
}

export function checkAuditContext(value: unknown): AuditContext {
  if (!isRecord(value) || !['agent', 'user', 'navi'].includes(value.actor as string))
    throw invalid('the audit context needs actor "agent", "user" or "navi"');
  const text = (key: string) => (typeof value[key] === 'string' ? (value[key] as string) : undefined);
  const ctx: AuditContext = { actor: value.actor as AuditContext['actor'] };
  for (const key of ['session_id', 'tool', 'reason'] as const) {
    const t = text(key);
    if (t !== undefined) ctx[key] = t;
  }
  return ctx;
}

/** A whole number from 1 to `max`, `fallback` when absent. */
function checkLimit(value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max)
    throw invalid(`limit must be a whole number from 1 to ${max}`);
  return value;
}

/** The newest-first audit query: `limit` 1–1000 (default 100), `secret_id` a UUID when given. */
export function checkAuditQuery(value: unknown): { limit: number; secretId?: string } {
  if (value === undefined) return { limit: LIMITS.auditDefault };
  if (!isRecord(value)) throw invalid('an audit query must be an object { limit?, secret_id? }');
  const limit = checkLimit(value.limit, LIMITS.auditDefault, LIMITS.auditMax);
  return value.secret_id === undefined ? { limit } : { limit, secretId: parseId(value.secret_id) };
}
