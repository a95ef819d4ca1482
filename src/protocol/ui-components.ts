/**
 * The UI components a tool can ask the client to draw inside the chat (`card_grid`, `form`,
 * `table`): one schema each, used by the navi-ui server to validate what the model sends, by the
 * web client before it renders a stored payload, and by the tests. `validateUiComponent` names
 * every problem with its path, so a model can fix all of them in one go.
 */
import { z } from 'zod';
import { FORM_FIELD_TYPES, type FormFieldType } from './form-field-types.js';

/** Bounds that keep a component readable in a chat and its stored message small. */
export const UI_LIMITS = {
  formFields: 20,
  options: 100,
  cards: 60,
  cardFields: 20,
  tags: 12,
  tableColumns: 30,
  tableRows: 1000,
  shortText: 200,
  longText: 4000,
} as const;

/** The name of a form field or table column: letters, digits, `_` and `-`, such as `due_date`. */
export const FIELD_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

const short = () => z.string().max(UI_LIMITS.shortText);
const long = () => z.string().max(UI_LIMITS.longText);
const label = () => z.string().trim().min(1, 'must not be empty').max(UI_LIMITS.shortText);
/** As a key of form values or table rows, `__proto__` is dropped by JSON readers, so its cell would vanish. */
const fieldName = () =>
  z
    .string()
    .regex(FIELD_NAME_PATTERN, 'must use only letters, digits, "_" and "-" (such as "due_date")')
    .refine((name) => name !== '__proto__', 'is a reserved name; choose another (such as "kind")');

/**
 * Links a component may show: web addresses and this server's own paths (session files). A
 * browser reads `/\host` and `/<tab>/host` as `//host`, another site, so a path may not start
 * that way, and no link may hold control characters, which URL parsing drops.
 */
function isSafeLink(value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  return /^(https?:\/\/|\/(?![/\\]))[^\u0000-\u001f\u007f]*$/i.test(value);
}
const link = () =>
  z
    .string()
    .max(2000)
    .refine(
      isSafeLink,
      'must start with http://, https:// or a single / (a session file such as /sessions/…/files/a.png), without control characters',
    );

// ---------------------------------------------------------------------------------------------
// form

export { FORM_FIELD_TYPES, type FormFieldType };

const CHOICE_TYPES: readonly FormFieldType[] = ['select', 'multiselect'];
const LENGTH_TYPES: readonly FormFieldType[] = ['text', 'textarea'];

const formOption = z.strictObject({
  label: label(),
  value: z.union([short(), z.number()]).transform(String),
});

const formFieldBase = z.strictObject({
  name: fieldName(),
  label: label(),
  type: z.enum(FORM_FIELD_TYPES).default('text'),
  required: z.boolean().default(false),
  placeholder: short().optional(),
  default: z
    .union([z.string().max(UI_LIMITS.longText), z.number(), z.boolean(), z.array(short())])
    .optional(),
  options: z.array(formOption).min(1, 'must list at least one option').max(UI_LIMITS.options).optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  minLength: z.int().min(0).optional(),
  maxLength: z.int().min(1).optional(),
  pattern: z.string().max(500).optional(),
  description: long().optional(),
});

type FieldIn = z.output<typeof formFieldBase>;

/** The rules that tie a field's settings to its type. */
function fieldRules(field: FieldIn, ctx: z.RefinementCtx): void {
  const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  const choice = CHOICE_TYPES.includes(field.type);
  if (choice && !field.options) problem('options', `is required for a ${field.type} field`);
  if (!choice && field.options) problem('options', 'is only for select and multiselect fields');
  if (field.type !== 'number') {
    if (field.min !== undefined) problem('min', 'is only for number fields');
    if (field.max !== undefined) problem('max', 'is only for number fields');
  } else if (field.min !== undefined && field.max !== undefined && field.min > field.max) {
    problem('max', `must not be below min (${field.min})`);
  }
  if (!LENGTH_TYPES.includes(field.type)) {
    for (const key of ['minLength', 'maxLength', 'pattern'] as const)
      if (field[key] !== undefined) problem(key, 'is only for text and textarea fields');
  } else if (
    field.minLength !== undefined &&
    field.maxLength !== undefined &&
    field.minLength > field.maxLength
  ) {
    problem('maxLength', `must not be below minLength (${field.minLength})`);
  }
  if (field.pattern !== undefined) {
    try {
      new RegExp(field.pattern, 'u');
    } catch (err) {
      problem('pattern', `is not a valid regular expression: ${(err as Error).message}`);
    }
  }
  if (field.default !== undefined) {
    const wrong = defaultProblem(field);
    if (wrong) problem('default', wrong);
  }
}

function defaultProblem(field: FieldIn): string | undefined {
  const value = field.default;
  const values = new Set(field.options?.map((o) => o.value));
  switch (field.type) {
    case 'checkbox':
      return typeof value === 'boolean' ? undefined : 'must be true or false for a checkbox';
    case 'number':
      return typeof value === 'number' ? undefined : 'must be a number for a number field';
    case 'multiselect':
      return Array.isArray(value) && value.every((v) => values.has(v))
        ? undefined
        : 'must be a list of the option values';
    case 'select':
      return typeof value === 'string' && values.has(value) ? undefined : 'must be one of the option values';
    case 'date':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)
        ? undefined
        : 'must be a date written YYYY-MM-DD';
    default:
      return typeof value === 'string' ? undefined : `must be text for a ${field.type} field`;
  }
}

export const formFieldSchema = formFieldBase.superRefine(fieldRules);

export const formPayloadSchema = z
  .strictObject({
    form_id: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'must be 1–100 letters, digits or "_.:-" (such as "trip_details")'),
    title: short().optional(),
    description: long().optional(),
    fields: z
      .array(formFieldSchema)
      .min(1, 'must list at least one field')
      .max(UI_LIMITS.formFields, `may list at most ${UI_LIMITS.formFields} fields`),
    submit_label: short().default('Submit'),
  })
  .superRefine((form, ctx) => {
    const seen = new Set<string>();
    form.fields.forEach((field, i) => {
      if (seen.has(field.name))
        ctx.addIssue({
          code: 'custom',
          path: ['fields', i, 'name'],
          message: `"${field.name}" is used twice`,
        });
      seen.add(field.name);
    });
  });

export type FormPayload = z.output<typeof formPayloadSchema>;
export type FormField = FormPayload['fields'][number];
export type FormOption = NonNullable<FormField['options']>[number];

// ---------------------------------------------------------------------------------------------
// card_grid

const cardField = z.strictObject({
  label: label(),
  value: z.union([z.string().max(UI_LIMITS.longText), z.number(), z.boolean()]).transform(String),
});

export const cardSchema = z.strictObject({
  id: short().optional(),
  title: label(),
  subtitle: short().optional(),
  description: long().optional(),
  image: link().optional(),
  url: link().optional(),
  tags: z.array(short()).max(UI_LIMITS.tags).optional(),
  fields: z.array(cardField).max(UI_LIMITS.cardFields).optional(),
  /** Shown in the card's details window: plain text or Markdown. */
  details: z.string().max(20_000).optional(),
});

export const cardGridPayloadSchema = z.strictObject({
  title: short().optional(),
  description: long().optional(),
  cards: z
    .array(cardSchema)
    .min(1, 'must list at least one card')
    .max(UI_LIMITS.cards, `may list at most ${UI_LIMITS.cards} cards`),
});

export type CardGridPayload = z.output<typeof cardGridPayloadSchema>;
export type GridCard = CardGridPayload['cards'][number];

// ---------------------------------------------------------------------------------------------
// table

export const TABLE_COLUMN_TYPES = ['text', 'number', 'date', 'boolean', 'url'] as const;
export type TableColumnType = (typeof TABLE_COLUMN_TYPES)[number];

const tableColumn = z.strictObject({
  key: fieldName(),
  label: label(),
  type: z.enum(TABLE_COLUMN_TYPES).default('text'),
});

export type TableCell = string | number | boolean | null;
const cell = z.union([z.string().max(UI_LIMITS.longText), z.number(), z.boolean(), z.null()]);

export const tablePayloadSchema = z
  .strictObject({
    title: short().optional(),
    description: long().optional(),
    columns: z
      .array(tableColumn)
      .min(1, 'must list at least one column')
      .max(UI_LIMITS.tableColumns, `may list at most ${UI_LIMITS.tableColumns} columns`),
    /** One object per row keyed by column key, or one array per row in column order. */
    rows: z
      .array(z.union([z.array(cell), z.record(z.string(), cell)]))
      .max(UI_LIMITS.tableRows, `may list at most ${UI_LIMITS.tableRows} rows`),
    sortable: z.boolean().default(true),
    filterable: z.boolean().default(true),
    /** The name offered for the CSV download (without the extension). */
    file_name: z
      .string()
      .regex(/^[A-Za-z0-9 _.-]{1,80}$/, 'must be 1–80 letters, digits, spaces or "_.-"')
      .optional(),
  })
  .superRefine((table, ctx) => {
    const keys = table.columns.map((c) => c.key);
    const seen = new Set<string>();
    table.columns.forEach((column, i) => {
      if (seen.has(column.key))
        ctx.addIssue({
          code: 'custom',
          path: ['columns', i, 'key'],
          message: `"${column.key}" is used twice`,
        });
      seen.add(column.key);
    });
    table.rows.forEach((row, r) => {
      if (Array.isArray(row)) {
        if (row.length !== keys.length)
          ctx.addIssue({
            code: 'custom',
            path: ['rows', r],
            message: `has ${row.length} cells; the table has ${keys.length} columns`,
          });
        row.forEach((value, c) => {
          const column = table.columns[c];
          const wrong = column && cellProblem(column.type, value);
          if (wrong) ctx.addIssue({ code: 'custom', path: ['rows', r, c], message: wrong });
        });
        return;
      }
      for (const [key, value] of Object.entries(row)) {
        const column = table.columns.find((c) => c.key === key);
        const wrong = column
          ? cellProblem(column.type, value)
          : `is not a column (columns: ${keys.join(', ')})`;
        if (wrong) ctx.addIssue({ code: 'custom', path: ['rows', r, key], message: wrong });
      }
    });
  })
  .transform((table) => ({
    ...table,
    // Rows leave validation in one shape: an object keyed by column key.
    rows: table.rows.map(
      (row): Record<string, TableCell> =>
        Array.isArray(row) ? Object.fromEntries(table.columns.map((c, i) => [c.key, row[i] ?? null])) : row,
    ),
  }));

function cellProblem(type: TableColumnType, value: TableCell): string | undefined {
  if (value === null) return undefined;
  switch (type) {
    case 'number':
      return typeof value === 'number' ? undefined : 'must be a number (or null) in a number column';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true, false or null in a boolean column';
    case 'date':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)
        ? undefined
        : 'must be a date such as 2026-11-25 (or 2026-11-25T14:30:00Z) in a date column';
    case 'url':
      return typeof value === 'string' && /^https?:\/\//i.test(value)
        ? undefined
        : 'must be a web address starting with http:// or https:// in a url column';
    default:
      return typeof value === 'boolean' ? 'must be text or a number in a text column' : undefined;
  }
}

export type TablePayload = z.output<typeof tablePayloadSchema>;
export type TableColumn = TablePayload['columns'][number];

// ---------------------------------------------------------------------------------------------

export const UI_COMPONENT_SCHEMAS = {
  card_grid: cardGridPayloadSchema,
  form: formPayloadSchema,
  table: tablePayloadSchema,
} as const;

export type UiComponentName = keyof typeof UI_COMPONENT_SCHEMAS;
export const UI_COMPONENT_NAMES = Object.keys(UI_COMPONENT_SCHEMAS) as UiComponentName[];

/** A component as it leaves validation: defaults filled in, table rows as objects. */
export type ValidUiComponent =
  | { component: 'card_grid'; payload: CardGridPayload }
  | { component: 'form'; payload: FormPayload }
  | { component: 'table'; payload: TablePayload };

export type UiComponentCheck = { ok: true; value: ValidUiComponent } | { ok: false; problems: string[] };

/** `fields[2].options`, `rows[0].price`: a path as a reader writes it. */
export function issuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

function isComponentName(name: string): name is UiComponentName {
  return Object.hasOwn(UI_COMPONENT_SCHEMAS, name);
}

/** Validates `payload` as the component `name`; on failure, every problem as `path: message`. */
export function validateUiComponent(name: string, payload: unknown): UiComponentCheck {
  if (!isComponentName(name))
    return {
      ok: false,
      problems: [`component_name: "${name}" is not a component; use one of ${UI_COMPONENT_NAMES.join(', ')}`],
    };
  const parsed = UI_COMPONENT_SCHEMAS[name].safeParse(payload);
  if (!parsed.success)
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => {
        const where = issuePath(issue.path);
        return `${where === '' ? 'payload' : `payload.${where}`.replace('payload.[', 'payload[')}: ${issue.message}`;
      }),
    };
  return { ok: true, value: { component: name, payload: parsed.data } as ValidUiComponent };
}
