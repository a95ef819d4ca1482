/**
 * The secrets vault as clients see it: masked records, references, the audit log. Shared by
 * Navi's vault core, its REST routes, the gnexus-creds MCP server and the web client's Vault
 * page. No shape here ever carries the plaintext of a secret field.
 */

export const SECRET_TYPES = ['password', 'api_token', 'ssh_key', 'note', 'card', 'custom'] as const;
export type SecretType = (typeof SECRET_TYPES)[number];

export const SECRET_STATUSES = ['actual', 'outdated', 'archived'] as const;
export type SecretStatus = (typeof SECRET_STATUSES)[number];

/** The tag of the vault secrets in which Navi keeps the OAuth tokens of MCP servers. */
export const MCP_OAUTH_TAG = 'navi-mcp-oauth';

/**
 * Tags of the records Navi keeps in the vault for itself. The gnexus-creds tools treat a secret
 * carrying one as nonexistent and refuse to give one to a secret; the Vault page shows them.
 */
export const NAVI_INTERNAL_TAGS: readonly string[] = [MCP_OAUTH_TAG];

/** Whether a secret's tags mark it as one of Navi's own records (tags compare case-insensitively). */
export function isNaviInternal(tags: readonly string[]): boolean {
  return tags.some((t) => NAVI_INTERNAL_TAGS.includes(t.trim().toLowerCase()));
}

/** Field names: what a reference can name without quoting. */
export const FIELD_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A secret's id: a UUID, in either case (the vault stores it lower-case). A string pattern, so
 * the REST routes' JSON schemas can use it as well as regular expressions.
 */
export const SECRET_ID_PATTERN =
  '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** `{{secret:<uuid>.<field>}}`: how a tool call names a secret value it must not see. */
export const SECRET_REFERENCE =
  /\{\{secret:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{1,64})\}\}/g;

export function secretReference(id: string, field: string): string {
  return `{{secret:${id}.${field}}}`;
}

const WHOLE_REFERENCE = new RegExp(`^${SECRET_REFERENCE.source}$`);

/** The secret and field a text that is exactly one reference names, or undefined. */
export function parseSecretReference(text: string): { id: string; field: string } | undefined {
  const match = WHOLE_REFERENCE.exec(text.trim());
  return match ? { id: match[1]!, field: match[2]! } : undefined;
}

export interface SecretFieldInput {
  name: string;
  value: string;
  /** Secret fields are encrypted and only ever shown masked; others (a user name, a URL) are plain. */
  secret: boolean;
}

/** A field as every listing shows it: secret values masked, with the reference that stands for them. */
export interface MaskedField {
  name: string;
  secret: boolean;
  /** The plain value of a non-secret field; for a secret field, a mask such as `••••••••`. */
  value: string;
  /** Secret fields only: `{{secret:<id>.<name>}}`. */
  reference?: string;
}

export interface SecretRecord {
  id: string;
  name: string;
  type: SecretType;
  tags: string[];
  status: SecretStatus;
  fields: MaskedField[];
  created_at: string;
  updated_at: string;
}

export interface NewSecret {
  name: string;
  type: SecretType;
  tags?: string[];
  fields: SecretFieldInput[];
  status?: Exclude<SecretStatus, 'archived'>;
}

/**
 * A change to a secret: `fields` adds or replaces the named fields (a value must not be empty),
 * `remove_fields` deletes fields by name. An archived secret cannot be changed.
 */
export interface SecretPatch {
  name?: string;
  type?: SecretType;
  tags?: string[];
  fields?: SecretFieldInput[];
  remove_fields?: string[];
}

export interface SecretQuery {
  /** Case-insensitive words matched against the name, tags and non-secret field values. */
  query?: string;
  type?: SecretType;
  tag?: string;
  /** Default: `actual` and `outdated`. */
  status?: SecretStatus;
  /** Default 50, at most 200. */
  limit?: number;
  /** Only the person's own REST calls set this; no MCP tool ever does. */
  includeArchived?: boolean;
}

/** Who asked, for the audit log. */
export interface AuditContext {
  actor: 'agent' | 'user' | 'navi';
  session_id?: string;
  /** The tool that used a value by reference, or `reveal_secret`. */
  tool?: string;
  reason?: string;
}

export type AuditAction =
  | 'reveal'
  | 'use'
  | 'create'
  | 'update'
  | 'status'
  | 'archive'
  | 'rotate_key'
  | 'export'
  | 'import';

export interface AuditEntry {
  at: string;
  action: AuditAction;
  secret_id?: string;
  secret_name?: string;
  field?: string;
  actor: AuditContext['actor'];
  session_id?: string;
  tool?: string;
  reason?: string;
  /** For `status`: the new status. */
  detail?: string;
}

/** `GET /vault` and `navi vault status`: whether the vault can be used, and if not, why and how to fix it. */
export type VaultState =
  | { state: 'unlocked'; keySource: 'env' | 'file'; path: string }
  | { state: 'locked'; reason: string; howToUnlock: string; path: string };

/** `GET /vault/secrets`: masked records, newest change first. */
export interface SecretList {
  secrets: SecretRecord[];
}

/** `POST /vault/secrets/{id}/reveal` body: the field to show, and why (kept in the audit log). */
export interface RevealRequest {
  field: string;
  reason?: string;
}

/** `POST /vault/secrets/{id}/reveal` answer: the plaintext, sent with `Cache-Control: no-store`. */
export interface RevealReply {
  value: string;
}

/** `POST /vault/secrets/{id}/status` body. */
export interface StatusRequest {
  status: SecretStatus;
}

/** `GET /vault/audit`: newest first. */
export interface AuditList {
  entries: AuditEntry[];
}
