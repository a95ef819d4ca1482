/**
 * Secrets as the model reads them: one block per secret (name, type, tags, status, id, dates,
 * then its fields), a secret field always as a mask with the reference that stands for it, and
 * one line that says how a value is used without being seen.
 */
import { MASK, type SecretRecord, secretReference } from '../../vault/index.js';

export const USE_BY_REFERENCE =
  'To use a secret value, put its reference in the argument of the tool that needs it (a terminal ' +
  'command, an HTTP header, an SSH password); Navi substitutes it when the tool runs and hides it in ' +
  'the output. Only use reveal_secret when the person asks to see the value.';

/** A plain value on one line: a value with line breaks or quotes is shown as a JSON string. */
function plainValue(value: string): string {
  return /[\r\n"]/.test(value) || value.trim() !== value ? JSON.stringify(value) : value;
}

function secretText(record: SecretRecord): string {
  const lines = [
    `${record.name}`,
    `  type: ${record.type}`,
    `  tags: ${record.tags.length > 0 ? record.tags.join(', ') : '(none)'}`,
    `  status: ${record.status}`,
    `  id: ${record.id}`,
    `  created: ${record.created_at}, updated: ${record.updated_at}`,
  ];
  if (record.fields.length === 0) lines.push('  fields: (none)');
  else lines.push('  fields:');
  for (const field of record.fields) {
    // The record is masked already; the mask is written here anyway so no value can slip through.
    lines.push(
      field.secret
        ? `    ${field.name}: ${MASK} (secret; use ${secretReference(record.id, field.name)})`
        : `    ${field.name}: ${plainValue(field.value)}`,
    );
  }
  return lines.join('\n');
}

/** Secrets under a heading line, then the line about references. */
export function secretListText(heading: string, records: readonly SecretRecord[]): string {
  return `${heading}\n\n${records.map(secretText).join('\n\n')}\n\n${USE_BY_REFERENCE}`;
}

export function oneSecretText(heading: string, record: SecretRecord): string {
  return secretListText(heading, [record]);
}

/** What archive_secret and set_secret_status answer once a secret is archived. */
export function archivedText(record: SecretRecord): string {
  return `Archived "${record.name}" (${record.id}). No tool can see it any more; the person can still find it on the Vault page.`;
}
