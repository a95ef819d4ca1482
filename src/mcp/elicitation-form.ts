/**
 * An MCP server's `elicitation/create` form (docs/mcp.md#elicitation): its requested schema,
 * a flat object of strings, numbers, booleans and choices, becomes the navi-ui form the chat
 * draws with the form component; the person's answer is checked against that same schema
 * (ajv) before it goes back, with the schema's defaults filled in for fields left empty and
 * the form's strings turned into the types the schema asks for.
 *
 * What a form cannot show as its own kind of field (a date and time, a choice among more
 * options than a form lists) stays a text field whose help says what to type.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FormField, FormOption, FormPayload } from '../protocol/ui-components.js';
import { FIELD_NAME_PATTERN, UI_LIMITS } from '../protocol/ui-components.js';
import { isRecord } from '../util/is-record.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsImport as { default?: unknown }).default ?? addFormatsImport) as (
  ajv: Ajv,
) => Ajv;

/** Bounds of what Navi shows: a form in a chat, not a whole application. */
export const ELICITATION_LIMITS = {
  /** Fields of one form (the navi-ui form's own limit). */
  fields: UI_LIMITS.formFields,
  /** Choices shown as a list; more become a text field whose help names them. */
  options: UI_LIMITS.options,
  /** Choices at all: beyond this the schema is refused rather than shown. */
  choices: 1000,
  /** The server's message, and each field's description. */
  messageChars: UI_LIMITS.longText,
} as const;

/** The form, or why the requested schema cannot be shown (sent back to the server as the error). */
export type ElicitationFormBuild = { ok: true; form: FormPayload } | { ok: false; reason: string };

/** The values to send back, or every problem as `<field label>: <what is wrong>`. */
export type ElicitationCheck =
  | { ok: true; content: Record<string, string | number | boolean | string[]> }
  | { ok: false; problems: string[] };

type Property = Record<string, unknown>;

interface Choice {
  value: string;
  label: string;
}

const FORMAT_HELP: Record<string, string> = {
  'date-time': 'A date and time, such as 2026-11-25T14:30:00Z.',
  date: 'A date, such as 2026-11-25.',
  email: 'An email address, such as name@example.com.',
  uri: 'An address, such as https://example.com.',
};

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * The form field name of each property, in schema order. A property whose name a form field
 * cannot carry (spaces, `__proto__`) gets `field_<n>`; conversion and checking agree on it.
 */
export function fieldNames(properties: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>();
  const taken = new Set(
    Object.keys(properties).filter((p) => FIELD_NAME_PATTERN.test(p) && p !== '__proto__'),
  );
  let n = 0;
  for (const property of Object.keys(properties)) {
    if (FIELD_NAME_PATTERN.test(property) && property !== '__proto__') {
      out.set(property, property);
      continue;
    }
    let name: string;
    do name = `field_${++n}`;
    while (taken.has(name));
    taken.add(name);
    out.set(property, name);
  }
  return out;
}

/** The choices of a single or multiple choice property, or undefined when it offers none. */
function choicesOf(p: Property): Choice[] | undefined {
  const fromEnum = (values: unknown, names?: unknown): Choice[] | undefined =>
    Array.isArray(values)
      ? values.map((v, i) => {
          const label = Array.isArray(names) && typeof names[i] === 'string' ? names[i] : String(v);
          return { value: String(v), label: label.trim() === '' ? String(v) : label };
        })
      : undefined;
  const fromConsts = (list: unknown): Choice[] | undefined =>
    Array.isArray(list)
      ? list.filter(isRecord).map((o) => ({
          value: String(o.const),
          label: typeof o.title === 'string' && o.title.trim() !== '' ? o.title : String(o.const),
        }))
      : undefined;
  if (p.type === 'array') {
    const items = isRecord(p.items) ? p.items : {};
    return fromEnum(items.enum) ?? fromConsts(items.anyOf) ?? fromConsts(items.oneOf);
  }
  return fromEnum(p.enum, p.enumNames) ?? fromConsts(p.oneOf) ?? fromConsts(p.anyOf);
}

/** Why a property cannot be a field, or undefined when it can. */
function propertyProblem(p: unknown): string | undefined {
  if (!isRecord(p)) return 'is not a schema object';
  const type = p.type;
  if (type === 'object' || isRecord(p.properties))
    return 'is a nested object; a form takes only strings, numbers, integers, booleans and lists of choices';
  if (type === 'array') {
    if (!choicesOf(p))
      return 'is a list without choices; a form takes lists only of fixed choices (items with enum or anyOf)';
  } else if (!['string', 'number', 'integer', 'boolean'].includes(String(type))) {
    return `has type ${JSON.stringify(type ?? null)}; a form takes string, number, integer, boolean or array`;
  }
  const choices = choicesOf(p);
  if (choices && choices.length === 0) return 'offers no choices';
  if (choices && choices.length > ELICITATION_LIMITS.choices)
    return `offers ${choices.length} choices; Navi shows at most ${ELICITATION_LIMITS.choices}`;
  if (typeof p.pattern === 'string') {
    try {
      new RegExp(p.pattern, 'u');
    } catch (err) {
      return `has a pattern that is not a valid regular expression (${(err as Error).message})`;
    }
  }
  return undefined;
}

/** Why the requested schema as a whole cannot be shown, or undefined. */
function schemaProblem(schema: unknown): string | undefined {
  if (!isRecord(schema)) return 'the requested schema is not an object';
  if (schema.type !== 'object') return 'the requested schema must have type "object"';
  if (!isRecord(schema.properties)) return 'the requested schema has no "properties" object';
  const names = Object.keys(schema.properties);
  if (names.length > ELICITATION_LIMITS.fields)
    return `the form has ${names.length} fields; Navi shows at most ${ELICITATION_LIMITS.fields}`;
  const required = schema.required;
  if (required !== undefined) {
    if (!Array.isArray(required) || required.some((r) => typeof r !== 'string'))
      return '"required" must be a list of property names';
    const missing = required.filter((r) => !Object.hasOwn(schema.properties as object, r as string));
    if (missing.length > 0)
      return `"required" names ${missing.join(', ')}, which the schema has no property for`;
  }
  for (const name of names) {
    const problem = propertyProblem((schema.properties as Record<string, unknown>)[name]);
    if (problem) return `property "${name}" ${problem}`;
  }
  return undefined;
}

/** The default a field starts from, when the schema's fits the field; otherwise none. */
function shownDefault(field: FormField, value: unknown): FormField['default'] {
  switch (field.type) {
    case 'checkbox':
      return typeof value === 'boolean' ? value : undefined;
    case 'number':
      return typeof value === 'number' ? value : undefined;
    case 'multiselect': {
      const allowed = new Set(field.options?.map((o) => o.value));
      return Array.isArray(value) && value.every((v) => allowed.has(String(v)))
        ? value.map(String)
        : undefined;
    }
    case 'select':
      return typeof value === 'string' && field.options?.some((o) => o.value === value) ? value : undefined;
    default:
      return typeof value === 'string' || typeof value === 'number'
        ? clip(String(value), UI_LIMITS.longText)
        : Array.isArray(value)
          ? value.join(', ')
          : undefined;
  }
}

function toField(property: string, name: string, p: Property, required: boolean): FormField {
  const title = typeof p.title === 'string' && p.title.trim() !== '' ? p.title : property;
  const help: string[] = [];
  if (typeof p.description === 'string' && p.description.trim() !== '') help.push(p.description.trim());
  const field: FormField = { name, label: clip(title.trim(), UI_LIMITS.shortText), type: 'text', required };
  const choices = choicesOf(p);
  const asOptions = (list: Choice[]): FormOption[] =>
    list.map((c) => ({
      value: clip(c.value, UI_LIMITS.shortText),
      label: clip(c.label, UI_LIMITS.shortText),
    }));
  if (choices && choices.length <= ELICITATION_LIMITS.options) {
    field.type = p.type === 'array' ? 'multiselect' : 'select';
    field.options = asOptions(choices);
  } else if (choices) {
    const listed = choices.map((c) => c.value).join(', ');
    const many = p.type === 'array' ? 'one or more, separated by commas,' : 'one';
    help.push(clip(`Type ${many} of: ${listed}`, 1500));
  } else if (p.type === 'boolean') {
    field.type = 'checkbox';
    // A checkbox always answers true or false, so a required one need not be ticked.
    field.required = false;
  } else if (p.type === 'number' || p.type === 'integer') {
    field.type = 'number';
    if (typeof p.minimum === 'number') field.min = p.minimum;
    if (typeof p.maximum === 'number') field.max = p.maximum;
    if (p.type === 'integer') help.push('A whole number.');
  } else {
    const format = typeof p.format === 'string' ? p.format : undefined;
    if (format === 'email') field.type = 'email';
    else if (format === 'uri') field.type = 'url';
    else if (format === 'date') field.type = 'date';
    else if (format && FORMAT_HELP[format]) help.push(FORMAT_HELP[format]);
    else if (format) help.push(`Format: ${format}.`);
    if (field.type === 'text') {
      if (Number.isInteger(p.minLength) && (p.minLength as number) >= 0)
        field.minLength = p.minLength as number;
      if (Number.isInteger(p.maxLength) && (p.maxLength as number) >= 1)
        field.maxLength = p.maxLength as number;
      if (typeof p.pattern === 'string' && p.pattern.length <= 500) field.pattern = p.pattern;
    } else {
      // Email, address and date fields keep their length rules in words; the answer check applies them.
      if (typeof p.minLength === 'number') help.push(`At least ${p.minLength} characters.`);
      if (typeof p.maxLength === 'number') help.push(`At most ${p.maxLength} characters.`);
    }
  }
  if (p.default !== undefined) {
    const value = shownDefault(field, p.default);
    if (value !== undefined) field.default = value;
  }
  if (help.length > 0) field.description = clip(help.join(' '), UI_LIMITS.longText);
  return field;
}

/**
 * The navi-ui form for a requested schema, or why it cannot be shown: not a flat object,
 * nested objects, free lists, more than `ELICITATION_LIMITS.fields` fields or
 * `ELICITATION_LIMITS.choices` choices, broken patterns, `required` naming missing properties.
 * A schema with no properties is a form of no fields: the person only accepts or declines.
 */
export function elicitationForm(formId: string, schema: unknown): ElicitationFormBuild {
  const problem = schemaProblem(schema);
  if (problem) return { ok: false, reason: problem };
  const s = schema as { properties: Record<string, Property>; required?: string[] };
  const names = fieldNames(s.properties);
  const required = new Set(s.required ?? []);
  // A required field with a default may be left empty: the default is sent in its place.
  const fields = Object.entries(s.properties).map(([property, p]) =>
    toField(property, names.get(property) as string, p, required.has(property) && p.default === undefined),
  );
  return { ok: true, form: { form_id: formId, fields, submit_label: 'Send' } };
}

function isEmpty(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    (typeof value === 'string' && value.trim() === '') ||
    (Array.isArray(value) && value.length === 0)
  );
}

/** A form's value in the type the property asks for; what cannot be turned stays as it is for ajv to name. */
function coerce(p: Property, value: unknown): unknown {
  if (p.type === 'number' || p.type === 'integer') {
    if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
      return Number(value);
    return value;
  }
  if (p.type === 'boolean') {
    if (value === 'true') return true;
    if (value === 'false') return false;
    return value;
  }
  if (p.type === 'array') {
    if (typeof value === 'string')
      return value
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value;
}

/** The schema ajv checks: the requested one without what is only for display. */
function checkedSchema(properties: Record<string, Property>, required: string[]): Record<string, unknown> {
  const clean: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(properties)) {
    const { enumNames: _names, default: _default, title: _title, description: _description, ...rule } = p;
    clean[name] = rule;
  }
  return { type: 'object', properties: clean, required, additionalProperties: false };
}

function describeProblem(error: ErrorObject, labels: Map<string, string>): string {
  const property =
    error.keyword === 'required'
      ? String(error.params.missingProperty)
      : (error.instancePath.split('/')[1] ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
  const label = labels.get(property) ?? property;
  if (error.keyword === 'required') return `${label}: is required; fill it in`;
  if (
    error.keyword === 'enum' ||
    error.keyword === 'const' ||
    error.keyword === 'anyOf' ||
    error.keyword === 'oneOf'
  )
    return `${label}: choose one of the offered values`;
  if (error.keyword === 'format')
    return `${label}: must be ${FORMAT_HELP[String(error.params.format)] ?? `a ${String(error.params.format)}`}`.replace(
      /\.$/,
      '',
    );
  return `${label}: ${error.message ?? 'is not valid'}`;
}

/**
 * Checks the person's answer (`values`, keyed by form field name) against the requested schema:
 * empty fields take the schema's default, strings become the numbers, booleans and lists the
 * schema asks for, and every problem is named by the field's label. `schema` must be one
 * `elicitationForm` accepted.
 */
export function checkElicitationAnswer(schema: unknown, values: Record<string, unknown>): ElicitationCheck {
  const problem = schemaProblem(schema);
  if (problem) return { ok: false, problems: [problem] };
  const s = schema as { properties: Record<string, Property>; required?: string[] };
  const names = fieldNames(s.properties);
  const byField = new Map([...names].map(([property, field]) => [field, property]));
  const labels = new Map(
    Object.entries(s.properties).map(([property, p]) => [
      property,
      typeof p.title === 'string' && p.title.trim() !== '' ? p.title : property,
    ]),
  );
  const problems: string[] = [];
  for (const field of Object.keys(values))
    if (!byField.has(field)) problems.push(`${field}: is not a field of this form`);
  if (problems.length > 0) return { ok: false, problems };
  const content: Record<string, unknown> = {};
  for (const [property, p] of Object.entries(s.properties)) {
    const field = names.get(property) as string;
    const value = Object.hasOwn(values, field) ? values[field] : undefined;
    if (!isEmpty(value)) content[property] = coerce(p, value);
    else if (p.default !== undefined) content[property] = structuredClone(p.default);
  }
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  let validate: ReturnType<Ajv['compile']>;
  try {
    validate = ajv.compile(checkedSchema(s.properties, s.required ?? []));
  } catch (err) {
    return { ok: false, problems: [`the server's schema cannot be checked: ${(err as Error).message}`] };
  }
  if (!validate(content))
    return { ok: false, problems: (validate.errors ?? []).map((e) => describeProblem(e, labels)) };
  return { ok: true, content: content as Record<string, string | number | boolean | string[]> };
}
