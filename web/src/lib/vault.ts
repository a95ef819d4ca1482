/**
 * The Vault page's vocabulary and its form logic: labels for the secret types and statuses, the
 * editable draft of a secret, and how a draft becomes the body of a create or a change. Values
 * typed into a draft go to the vault's REST routes only.
 */
// Relative rather than `@protocol`: the unit tests in test/web compile this file with the
// server's tsconfig, which has no such alias.
import {
  FIELD_NAME,
  type MaskedField,
  type NewSecret,
  type SecretPatch,
  type SecretRecord,
  type SecretStatus,
  type SecretType,
} from '../../../src/protocol/vault.js';

export const typeLabels: Record<SecretType, string> = {
  password: 'Password',
  api_token: 'API token',
  ssh_key: 'SSH key',
  note: 'Note',
  card: 'Card',
  custom: 'Other',
};

export const statusLabels: Record<SecretStatus, string> = {
  actual: 'Actual',
  outdated: 'Outdated',
  archived: 'Archived',
};

/** The status filter of the list: the two current statuses (the default), one status, or all. */
export type StatusFilter = '' | SecretStatus | 'all';

export interface SecretFilter {
  query: string;
  type: SecretType | '';
  status: StatusFilter;
}

/** The query string of `GET /vault/secrets` for a filter. */
export function filterQuery(filter: SecretFilter): string {
  const params = new URLSearchParams();
  if (filter.query.trim()) params.set('query', filter.query.trim());
  if (filter.type) params.set('type', filter.type);
  if (filter.status === 'all') params.set('include_archived', 'true');
  else if (filter.status) {
    params.set('status', filter.status);
    if (filter.status === 'archived') params.set('include_archived', 'true');
  }
  return params.toString();
}

export interface FieldDraft {
  /** Stable key for the list while names are edited. */
  key: number;
  name: string;
  /** What the person typed; '' for a stored secret field means "keep the stored value". */
  value: string;
  secret: boolean;
  /** The stored field this row edits, if it is not new. */
  stored: MaskedField | null;
}

export interface SecretDraft {
  name: string;
  type: SecretType;
  /** Comma-separated, as typed. */
  tags: string;
  fields: FieldDraft[];
}

let nextKey = 1;

export function newField(name = '', value = '', secret = true): FieldDraft {
  return { key: nextKey++, name, value, secret, stored: null };
}

/** A draft for a new secret, optionally prefilled (the composer's detected value). */
export function emptyDraft(prefill?: Partial<SecretDraft>): SecretDraft {
  return {
    name: prefill?.name ?? '',
    type: prefill?.type ?? 'password',
    tags: prefill?.tags ?? '',
    fields: prefill?.fields ?? [newField('password', '', true)],
  };
}

/** A draft that edits `record`: secret values are left empty (kept unless retyped). */
export function draftOf(record: SecretRecord): SecretDraft {
  return {
    name: record.name,
    type: record.type,
    tags: record.tags.join(', '),
    fields: record.fields.map((f) => ({
      key: nextKey++,
      name: f.name,
      value: f.secret ? '' : f.value,
      secret: f.secret,
      stored: f,
    })),
  };
}

export function parseTags(text: string): string[] {
  const tags: string[] = [];
  for (const part of text.split(',')) {
    const tag = part.trim();
    if (tag && !tags.includes(tag)) tags.push(tag);
  }
  return tags;
}

export type DraftResult<T> = { ok: true; body: T } | { ok: false; error: string };

function checkNames(draft: SecretDraft): string | null {
  if (!draft.name.trim()) return 'Give the secret a name, such as "GitHub token".';
  const seen = new Set<string>();
  for (const field of draft.fields) {
    const name = field.name.trim();
    if (!FIELD_NAME.test(name))
      return `The field name "${name}" is not allowed: use 1 to 64 letters, digits, _ or - (such as "password").`;
    if (seen.has(name)) return `Two fields are named "${name}"; give each its own name.`;
    seen.add(name);
  }
  return null;
}

/** The body of `POST /vault/secrets`, or what the person must fix first. */
export function toNewSecret(draft: SecretDraft): DraftResult<NewSecret> {
  const problem = checkNames(draft);
  if (problem) return { ok: false, error: problem };
  if (draft.fields.length === 0) return { ok: false, error: 'Add at least one field, such as the password.' };
  const empty = draft.fields.find((f) => f.value === '');
  if (empty)
    return {
      ok: false,
      error: `The field "${empty.name.trim()}" has no value; type it or remove the field.`,
    };
  return {
    ok: true,
    body: {
      name: draft.name.trim(),
      type: draft.type,
      tags: parseTags(draft.tags),
      fields: draft.fields.map((f) => ({ name: f.name.trim(), value: f.value, secret: f.secret })),
    },
  };
}

/**
 * The body of `PATCH /vault/secrets/{id}`: only what changed. A stored secret field keeps its
 * value unless a new one is typed; renaming it or making it plain needs the value again, since
 * the page never has it.
 */
export function toPatch(record: SecretRecord, draft: SecretDraft): DraftResult<SecretPatch> {
  const problem = checkNames(draft);
  if (problem) return { ok: false, error: problem };
  if (draft.fields.length === 0) return { ok: false, error: 'A secret needs at least one field.' };
  const patch: SecretPatch = {};
  if (draft.name.trim() !== record.name) patch.name = draft.name.trim();
  if (draft.type !== record.type) patch.type = draft.type;
  const tags = parseTags(draft.tags);
  if (tags.join('\n') !== record.tags.join('\n')) patch.tags = tags;

  const fields: NonNullable<SecretPatch['fields']> = [];
  const kept = new Set<string>();
  for (const field of draft.fields) {
    const name = field.name.trim();
    const stored = field.stored;
    kept.add(name);
    if (stored?.secret && field.value === '') {
      if (name !== stored.name || !field.secret)
        return {
          ok: false,
          error: `To rename the field "${stored.name}" or make it plain, type its value again.`,
        };
      continue;
    }
    if (field.value === '')
      return { ok: false, error: `The field "${name}" has no value; type it or remove the field.` };
    const unchangedPlain =
      stored && !stored.secret && !field.secret && stored.name === name && stored.value === field.value;
    if (!unchangedPlain) fields.push({ name, value: field.value, secret: field.secret });
  }
  if (fields.length > 0) patch.fields = fields;
  const removed = record.fields.map((f) => f.name).filter((n) => !kept.has(n));
  if (removed.length > 0) patch.remove_fields = removed;
  return { ok: true, body: patch };
}

/** Whether a change has nothing in it (the dialog then just closes). */
export function isEmptyPatch(patch: SecretPatch): boolean {
  return Object.keys(patch).length === 0;
}
