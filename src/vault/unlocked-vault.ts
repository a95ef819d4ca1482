/**
 * The vault once its data key is unwrapped: masked records for every listing, plaintext only
 * from `reveal` and `resolve` after their audit entry is on disk, and every change made in one
 * transaction whose audit entry is written before it commits.
 */
import { randomUUID } from 'node:crypto';
import { type AuditEvent, AuditLog, auditEntry } from './audit-log.js';
import type { ImportCounts } from './backup.js';
import { fieldAad, IntegrityError, open, seal } from './crypto.js';
import {
  type AuditContext,
  type AuditEntry,
  type MaskedField,
  type NewSecret,
  type SecretFieldInput,
  type SecretPatch,
  type SecretQuery,
  type SecretRecord,
  type SecretStatus,
  secretReference,
  type Vault,
  VaultError,
  type VaultState,
} from './types.js';
import {
  checkAuditContext,
  checkAuditQuery,
  checkFieldName,
  checkNewSecret,
  checkPatch,
  checkQuery,
  checkStatus,
  LIMITS,
  notFound,
  parseId,
} from './validation.js';
import type { FieldRow, SecretRow, VaultDb } from './vault-db.js';

/** Always the same, so a mask never tells how long the value is. */
export const MASK = '••••••••';

/** A secret with its fields in plaintext: what a backup holds. */
export interface PlainSecret {
  id: string;
  name: string;
  type: SecretRecord['type'];
  tags: string[];
  status: SecretStatus;
  created_at: string;
  updated_at: string;
  fields: SecretFieldInput[];
}

type StoredField = Omit<FieldRow, 'secret_id' | 'position'>;

export class UnlockedVault implements Vault {
  private readonly audit: AuditLog;
  private closed = false;

  constructor(
    private readonly db: VaultDb,
    private readonly dataKey: Buffer,
    private readonly state: Extract<VaultState, { state: 'unlocked' }>,
    auditLogPath: string,
  ) {
    this.audit = new AuditLog(auditLogPath);
  }

  status(): VaultState {
    return { ...this.state };
  }

  search(query?: SecretQuery): SecretRecord[] {
    this.ensureOpen();
    const q = checkQuery(query);
    const out: SecretRecord[] = [];
    for (const row of this.db.secrets()) {
      if (out.length >= q.limit) break;
      if (!q.statuses.includes(row.status)) continue;
      if (q.type && row.type !== q.type) continue;
      const tags = parseTags(row.tags);
      if (q.tag && !tags.some((t) => t.toLowerCase() === q.tag)) continue;
      const fields = this.db.fields(row.id);
      if (q.words.length > 0) {
        // Never the secret values: a search must not become a way to guess them.
        const haystack = [row.name, ...tags, ...fields.filter((f) => !f.secret).map((f) => f.plain ?? '')]
          .join('\n')
          .toLowerCase();
        if (!q.words.every((w) => haystack.includes(w))) continue;
      }
      out.push(toRecord(row, fields));
    }
    return out;
  }

  get(id: string, options?: { includeArchived?: boolean }): SecretRecord {
    this.ensureOpen();
    const row = this.visibleRow(id, options?.includeArchived === true);
    return toRecord(row, this.db.fields(row.id));
  }

  reveal(id: string, field: string, audit: AuditContext): string {
    return this.readValue(id, field, audit, 'reveal').value;
  }

  resolve(id: string, field: string, audit: AuditContext): { value: string; label: string } {
    return this.readValue(id, field, audit, 'use');
  }

  create(secret: NewSecret, audit: AuditContext): SecretRecord {
    this.ensureOpen();
    const input = checkNewSecret(secret);
    const ctx = checkAuditContext(audit);
    const id = randomUUID();
    const now = new Date().toISOString();
    const row: SecretRow = {
      id,
      name: input.name,
      type: input.type,
      tags: JSON.stringify(input.tags),
      status: input.status,
      created_at: now,
      updated_at: now,
    };
    const fields = input.fields.map((f) => this.storeField(id, f));
    this.db.write(() => {
      this.db.insertSecret(row);
      this.db.replaceFields(id, fields);
      this.record({ action: 'create', secret_id: id, secret_name: row.name }, ctx);
    });
    return this.get(id);
  }

  update(id: string, patch: SecretPatch, audit: AuditContext): SecretRecord {
    this.ensureOpen();
    const change = checkPatch(patch);
    const ctx = checkAuditContext(audit);
    const secretId = parseId(id);
    this.db.write(() => {
      const row = this.changeableRow(secretId, ctx);
      const fields: StoredField[] = this.db.fields(secretId);
      for (const name of change.remove_fields ?? []) {
        const at = fields.findIndex((f) => f.name === name);
        if (at < 0) throw noField(row, name, fields);
        fields.splice(at, 1);
      }
      for (const f of change.fields ?? []) {
        const stored = this.storeField(secretId, f);
        const at = fields.findIndex((x) => x.name === f.name);
        if (at >= 0) fields[at] = stored;
        else fields.push(stored);
      }
      if (fields.length === 0 || fields.length > LIMITS.fields)
        throw new VaultError(
          'invalid',
          `a secret keeps 1 to ${LIMITS.fields} fields and this change would leave ${fields.length}; ` +
            (fields.length === 0 ? 'keep at least one field, or archive the secret' : 'remove some fields'),
        );
      const next: SecretRow = {
        ...row,
        name: change.name ?? row.name,
        type: change.type ?? row.type,
        tags: change.tags ? JSON.stringify(change.tags) : row.tags,
        updated_at: new Date().toISOString(),
      };
      this.db.updateSecret(next);
      this.db.replaceFields(secretId, fields);
      this.record(
        { action: 'update', secret_id: secretId, secret_name: next.name, detail: changeSummary(change) },
        ctx,
      );
    });
    return this.get(secretId);
  }

  setStatus(id: string, status: SecretStatus, audit: AuditContext): SecretRecord {
    this.ensureOpen();
    return this.changeStatus(id, checkStatus(status), audit);
  }

  archive(id: string, audit: AuditContext): SecretRecord {
    this.ensureOpen();
    return this.changeStatus(id, 'archived', audit);
  }

  auditLog(query?: { limit?: number; secret_id?: string }): AuditEntry[] {
    this.ensureOpen();
    const q = checkAuditQuery(query);
    return this.audit.read(q.limit, q.secretId);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.dataKey.fill(0);
    this.db.close();
  }

  /** How many secrets are in use (actual or outdated) and archived: for `navi vault status`. */
  counts(): { active: number; archived: number } {
    this.ensureOpen();
    const rows = this.db.secrets();
    const archived = rows.filter((r) => r.status === 'archived').length;
    return { active: rows.length - archived, archived };
  }

  /** Every secret, archived ones included, with plaintext values: for backups only. */
  exportAll(): PlainSecret[] {
    this.ensureOpen();
    return this.db.secrets().map((row) => ({
      id: row.id,
      name: row.name,
      type: row.type,
      tags: parseTags(row.tags),
      status: row.status,
      created_at: row.created_at,
      updated_at: row.updated_at,
      fields: this.db
        .fields(row.id)
        .map((f) => ({ name: f.name, secret: f.secret === 1, value: this.decrypt(row, f) })),
    }));
  }

  /**
   * Merges secrets (a backup's) by id: one the vault lacks is added, one it holds in an older
   * version is replaced, one it holds as new or newer is kept. One transaction, its `import`
   * audit entry (whose detail `describe` writes from the counts) appended before it commits.
   */
  importSecrets(
    secrets: PlainSecret[],
    describe: (counts: ImportCounts) => string,
    audit: AuditContext,
  ): ImportCounts {
    this.ensureOpen();
    return this.db.write(() => {
      const counts: ImportCounts = { added: 0, updated: 0, skipped: 0 };
      for (const secret of secrets) {
        const stored = this.db.secret(secret.id);
        if (stored && stored.updated_at >= secret.updated_at) {
          counts.skipped++;
          continue;
        }
        const row: SecretRow = { ...secret, tags: JSON.stringify(secret.tags) };
        if (stored) {
          this.db.updateSecret(row);
          counts.updated++;
        } else {
          this.db.insertSecret(row);
          counts.added++;
        }
        this.db.replaceFields(
          secret.id,
          secret.fields.map((f) => this.storeField(secret.id, f)),
        );
      }
      this.record({ action: 'import', detail: describe(counts) }, audit);
      return counts;
    });
  }

  /** Appends an audit entry; inside a transaction, a failure rolls the change back. */
  record(event: AuditEvent, ctx: AuditContext): void {
    this.audit.append(auditEntry(event, ctx));
  }

  private ensureOpen(): void {
    if (this.closed) throw new VaultError('io', 'the vault was closed; open it again');
  }

  private readValue(
    id: string,
    field: string,
    audit: AuditContext,
    action: 'reveal' | 'use',
  ): { value: string; label: string } {
    this.ensureOpen();
    const ctx = checkAuditContext(audit);
    // The person may still read an archived secret; the agent no longer sees or uses it.
    const row = this.visibleRow(id, action === 'reveal' && ctx.actor === 'user');
    const name = checkFieldName(field);
    const stored = this.db.field(row.id, name);
    if (!stored) throw noField(row, name, this.db.fields(row.id));
    // Written and flushed first: without the entry, no value leaves the vault.
    this.record({ action, secret_id: row.id, secret_name: row.name, field: name }, ctx);
    return { value: this.decrypt(row, stored), label: `${row.name}.${name}` };
  }

  /** Archiving is audited as `archive`, any other change of status as `status`. */
  private changeStatus(id: string, next: SecretStatus, audit: AuditContext): SecretRecord {
    const ctx = checkAuditContext(audit);
    const secretId = parseId(id);
    this.db.write(() => {
      const row = this.db.secret(secretId);
      // An archived secret exists only for the person; they alone may bring it back.
      if (!row || (row.status === 'archived' && ctx.actor !== 'user')) throw notFound(id);
      if (row.status === next) return;
      this.db.updateSecret({ ...row, status: next, updated_at: new Date().toISOString() });
      const event = { secret_id: secretId, secret_name: row.name };
      this.record(
        next === 'archived' ? { action: 'archive', ...event } : { action: 'status', ...event, detail: next },
        ctx,
      );
    });
    return this.get(secretId, { includeArchived: true });
  }

  private visibleRow(id: string, includeArchived: boolean): SecretRow {
    const row = this.db.secret(parseId(id));
    if (!row || (row.status === 'archived' && !includeArchived)) throw notFound(id);
    return row;
  }

  private changeableRow(secretId: string, ctx: AuditContext): SecretRow {
    const row = this.db.secret(secretId);
    if (!row || (row.status === 'archived' && ctx.actor !== 'user')) throw notFound(secretId);
    if (row.status === 'archived')
      throw new VaultError(
        'invalid',
        `the secret "${row.name}" is archived and cannot be changed; set its status to actual first`,
      );
    return row;
  }

  private storeField(secretId: string, f: SecretFieldInput): StoredField {
    if (!f.secret) return { name: f.name, secret: 0, plain: f.value, sealed: null };
    return {
      name: f.name,
      secret: 1,
      plain: null,
      sealed: seal(this.dataKey, Buffer.from(f.value, 'utf8'), fieldAad(secretId, f.name)),
    };
  }

  private decrypt(row: SecretRow, f: StoredField): string {
    if (f.secret !== 1) return f.plain ?? '';
    try {
      if (!(f.sealed instanceof Buffer)) throw new IntegrityError();
      return open(this.dataKey, f.sealed, fieldAad(row.id, f.name)).toString('utf8');
    } catch (err) {
      if (!(err instanceof IntegrityError)) throw err;
      throw new VaultError(
        'io',
        `the stored value of ${row.name}.${f.name} fails its integrity check: the vault file was changed ` +
          'outside Navi or is damaged; restore it from a backup',
      );
    }
  }
}

function parseTags(text: string): string[] {
  try {
    const tags: unknown = JSON.parse(text);
    return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

function toRecord(row: SecretRow, fields: StoredField[]): SecretRecord {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    tags: parseTags(row.tags),
    status: row.status,
    fields: fields.map(
      (f): MaskedField =>
        f.secret === 1
          ? { name: f.name, secret: true, value: MASK, reference: secretReference(row.id, f.name) }
          : { name: f.name, secret: false, value: f.plain ?? '' },
    ),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function noField(row: SecretRow, name: string, fields: StoredField[]): VaultError {
  return new VaultError(
    'not_found',
    `the secret "${row.name}" has no field "${name}"; its fields are ${fields.map((f) => f.name).join(', ') || 'none'}`,
  );
}

/** What a change touched, by name only: the audit log never holds a value. */
function changeSummary(change: SecretPatch): string {
  const parts: string[] = [];
  if (change.name !== undefined) parts.push('name');
  if (change.type !== undefined) parts.push('type');
  if (change.tags !== undefined) parts.push('tags');
  if (change.fields?.length) parts.push(`fields ${change.fields.map((f) => f.name).join(', ')}`);
  if (change.remove_fields?.length) parts.push(`removed ${change.remove_fields.join(', ')}`);
  return parts.join('; ');
}
