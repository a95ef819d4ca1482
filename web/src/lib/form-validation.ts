/**
 * The `form` UI component's client side: the lenient reader of payloads stored before the shared
 * schema (src/protocol/ui-components.ts), and the validation as the person types: required,
 * pattern, min/max, minLength/maxLength and the email/url formats.
 */
// Relative rather than `@protocol`, as in vault.ts. Types only: the schema's code (and zod)
// stays out of this module.
import { FORM_FIELD_TYPES, type FormFieldType } from '../../../src/protocol/form-field-types.js';
import type { FormField, FormOption, FormPayload } from '../../../src/protocol/ui-components.js';

export type FieldValue = string | number | boolean | string[] | null;

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function parseOption(option: unknown): FormOption | null {
  if (typeof option === 'string' || typeof option === 'number')
    return { label: String(option), value: String(option) };
  if (option && typeof option === 'object') {
    const o = option as Record<string, unknown>;
    const value = o.value ?? o.label;
    if (value === undefined) return null;
    return { label: String(o.label ?? value), value: String(value) };
  }
  return null;
}

/** A stored default of a kind a field can start from; anything else is dropped. */
function defaultOf(value: unknown): FormField['default'] {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map(String);
  return undefined;
}

/**
 * A payload stored by an older Navi, before the shared schema, read as far as it can be: the
 * fallback when `validateUiComponent` refuses it. Null when it is not a form at all.
 */
export function parseFormPayload(payload: unknown): FormPayload | null {
  if (!payload || typeof payload !== 'object') return null;
  const p = payload as Record<string, unknown>;
  if (!Array.isArray(p.fields)) return null;
  const fields: FormField[] = [];
  for (const raw of p.fields) {
    if (!raw || typeof raw !== 'object') continue;
    const f = raw as Record<string, unknown>;
    const name = str(f.name);
    if (!name) continue;
    const type = FORM_FIELD_TYPES.includes(f.type as FormFieldType) ? (f.type as FormFieldType) : 'text';
    fields.push({
      name,
      label: str(f.label) ?? name,
      type,
      required: f.required === true,
      placeholder: str(f.placeholder),
      default: defaultOf(f.default),
      options: Array.isArray(f.options)
        ? f.options.map(parseOption).filter((o): o is FormOption => o !== null)
        : [],
      min: num(f.min),
      max: num(f.max),
      minLength: num(f.minLength),
      maxLength: num(f.maxLength),
      pattern: str(f.pattern),
      description: str(f.description),
    });
  }
  return {
    form_id: str(p.form_id) ?? 'form',
    title: str(p.title),
    description: str(p.description),
    fields,
    submit_label: str(p.submit_label) ?? 'Submit',
  };
}

/** The starting value of a field (its `default`, else empty of the right kind). */
export function initialValue(field: FormField): FieldValue {
  const d = field.default;
  switch (field.type) {
    case 'checkbox':
      return d === true;
    case 'multiselect':
      return Array.isArray(d) ? d.map(String) : [];
    case 'number':
      return typeof d === 'number'
        ? d
        : typeof d === 'string' && d !== '' && !Number.isNaN(Number(d))
          ? Number(d)
          : null;
    default:
      return d === undefined || d === null ? '' : String(d);
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function isUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function isEmpty(value: FieldValue): boolean {
  return value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

/** The first problem with a value, in words for the user; null when it is valid. */
export function validateField(field: FormField, value: FieldValue): string | null {
  if (field.type === 'checkbox') {
    return field.required && value !== true ? 'Please tick this box.' : null;
  }
  if (isEmpty(value)) return field.required ? 'This field is required.' : null;
  if (field.type === 'number') {
    const n = typeof value === 'number' ? value : Number(value);
    if (!Number.isFinite(n)) return 'Enter a number.';
    if (field.min !== undefined && n < field.min) return `Must be at least ${field.min}.`;
    if (field.max !== undefined && n > field.max) return `Must be at most ${field.max}.`;
    return null;
  }
  if (field.type === 'multiselect') {
    const allowed = new Set((field.options ?? []).map((o) => o.value));
    return Array.isArray(value) && value.every((v) => allowed.has(v)) ? null : 'Choose from the list.';
  }
  const text = String(value);
  if (field.type === 'select') {
    return (field.options ?? []).some((o) => o.value === text) ? null : 'Choose from the list.';
  }
  if (field.minLength !== undefined && text.length < field.minLength) {
    return `Use at least ${field.minLength} characters.`;
  }
  if (field.maxLength !== undefined && text.length > field.maxLength) {
    return `Use at most ${field.maxLength} characters.`;
  }
  if (field.type === 'email' && !EMAIL.test(text)) return 'Enter an email address like name@example.com.';
  if (field.type === 'url' && !isUrl(text))
    return 'Enter a full web address starting with http:// or https://.';
  if (field.type === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(text)) return 'Enter a date.';
  if (field.pattern) {
    let regex: RegExp | null = null;
    try {
      regex = new RegExp(`^(?:${field.pattern})$`, 'u');
    } catch {
      regex = null; // A broken pattern from the model must not block the user.
    }
    if (regex && !regex.test(text)) return 'This does not have the expected format.';
  }
  return null;
}

/** Values as they are sent: numbers as numbers, empty optional fields as null. */
export function submittableValues(
  fields: FormField[],
  values: Record<string, FieldValue>,
): Record<string, FieldValue> {
  const out: Record<string, FieldValue> = {};
  for (const field of fields) {
    const value = values[field.name] ?? null;
    out[field.name] =
      field.type === 'number' && value !== null && value !== '' ? Number(value) : value === '' ? null : value;
  }
  return out;
}

/** A value for the read-only summary. */
export function displayValue(field: FormField | undefined, value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  const label = (v: unknown) => field?.options?.find((o) => o.value === String(v))?.label ?? String(v);
  if (Array.isArray(value)) return value.length ? value.map(label).join(', ') : '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return label(value);
}
