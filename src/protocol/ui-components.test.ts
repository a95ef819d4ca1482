/**
 * The UI component schemas, rule by rule: each form field type and each rule valid and invalid,
 * the card grid's links, the table's cells by column type. The problems name their path.
 */
import { describe, expect, it } from 'vitest';
import { FORM_FIELD_TYPES, UI_LIMITS, validateUiComponent } from './ui-components.js';

function problems(name: string, payload: unknown): string[] {
  const checked = validateUiComponent(name, payload);
  return checked.ok ? [] : checked.problems;
}

const form = (...fields: Record<string, unknown>[]) => ({ form_id: 'f1', fields });
const options = [
  { label: 'Beach', value: 'beach' },
  { label: 'City', value: 'city' },
];

describe('form', () => {
  const valid: Record<string, Record<string, unknown>> = {
    text: { minLength: 2, maxLength: 40, pattern: '[A-Za-z ]+', default: 'Ada', placeholder: 'Name' },
    textarea: { maxLength: 500, default: '' },
    number: { min: 1, max: 9, default: 2 },
    email: { default: 'ada@example.org' },
    url: { default: 'https://example.org' },
    select: { options, default: 'city' },
    multiselect: { options, default: ['beach', 'city'] },
    checkbox: { default: true },
    date: { default: '2026-11-25' },
  };

  it.each(FORM_FIELD_TYPES)('accepts a %s field with every rule that applies to it', (type) => {
    const field = {
      name: `f_${type}`,
      label: type,
      type,
      required: true,
      description: 'hint',
      ...valid[type],
    };
    const checked = validateUiComponent('form', form(field));
    expect(checked.ok ? [] : checked.problems).toEqual([]);
    if (checked.ok && checked.value.component === 'form') {
      expect(checked.value.payload.submit_label).toBe('Submit');
      expect(checked.value.payload.fields[0]?.type).toBe(type);
    }
  });

  it('takes a field without a type as text and fills the defaults in', () => {
    const checked = validateUiComponent('form', form({ name: 'city', label: 'City' }));
    expect(checked.ok && checked.value.payload).toMatchObject({
      fields: [{ name: 'city', type: 'text', required: false }],
      submit_label: 'Submit',
    });
  });

  it('turns numeric option values into text, as the client sends them back', () => {
    const checked = validateUiComponent(
      'form',
      form({ name: 'n', label: 'N', type: 'select', options: [{ label: 'One', value: 1 }] }),
    );
    expect(
      checked.ok && checked.value.component === 'form' && checked.value.payload.fields[0]?.options,
    ).toEqual([{ label: 'One', value: '1' }]);
  });

  it.each([
    ['a select without options', { type: 'select' }, 'fields[0].options: is required for a select field'],
    [
      'a multiselect without options',
      { type: 'multiselect' },
      'fields[0].options: is required for a multiselect',
    ],
    ['empty options', { type: 'select', options: [] }, 'fields[0].options: must list at least one option'],
    ['options on a text field', { type: 'text', options }, 'fields[0].options: is only for select'],
    ['min on a text field', { type: 'text', min: 1 }, 'fields[0].min: is only for number fields'],
    ['max on a date field', { type: 'date', max: 1 }, 'fields[0].max: is only for number fields'],
    ['min above max', { type: 'number', min: 5, max: 1 }, 'fields[0].max: must not be below min (5)'],
    [
      'minLength on a number',
      { type: 'number', minLength: 1 },
      'fields[0].minLength: is only for text and textarea',
    ],
    ['a pattern on an email field', { type: 'email', pattern: 'x' }, 'fields[0].pattern: is only for text'],
    [
      'minLength above maxLength',
      { minLength: 9, maxLength: 2 },
      'fields[0].maxLength: must not be below minLength (9)',
    ],
    ['a negative minLength', { minLength: -1 }, 'fields[0].minLength:'],
    ['a fractional maxLength', { maxLength: 2.5 }, 'fields[0].maxLength:'],
    ['a broken pattern', { pattern: '([a-z' }, 'fields[0].pattern: is not a valid regular expression'],
    ['an unknown type', { type: 'colour' }, 'fields[0].type: Invalid option'],
    [
      'a text default on a checkbox',
      { type: 'checkbox', default: 'yes' },
      'fields[0].default: must be true or false',
    ],
    ['a text default on a number', { type: 'number', default: '3' }, 'fields[0].default: must be a number'],
    [
      'a default that is no option',
      { type: 'select', options, default: 'moon' },
      'fields[0].default: must be one of the option values',
    ],
    [
      'a multiselect default with a stranger',
      { type: 'multiselect', options, default: ['beach', 'moon'] },
      'fields[0].default: must be a list of the option values',
    ],
    [
      'a date default in another format',
      { type: 'date', default: '25.11.2026' },
      'fields[0].default: must be a date written YYYY-MM-DD',
    ],
    ['a number default on a text field', { default: 4 }, 'fields[0].default: must be text'],
    ['required given as text', { required: 'yes' }, 'fields[0].required:'],
    ['an unknown key', { colour: 'red' }, 'colour'],
  ])('refuses %s', (_what, extra, expected) => {
    const found = problems('form', form({ name: 'f', label: 'F', ...extra }));
    expect(found.join('\n')).toContain(`payload.${expected}`.replace('payload.colour', 'colour'));
  });

  it('refuses field names outside letters, digits, "_" and "-", and names used twice', () => {
    expect(problems('form', form({ name: 'due date', label: 'Due' }))).toEqual([
      'payload.fields[0].name: must use only letters, digits, "_" and "-" (such as "due_date")',
    ]);
    expect(problems('form', form({ name: '../x', label: 'X' }))[0]).toContain('fields[0].name');
    expect(problems('form', form({ name: '__proto__', label: 'X' }))).toEqual([
      'payload.fields[0].name: is a reserved name; choose another (such as "kind")',
    ]);
    // Other names objects already have are ordinary keys to the client.
    expect(problems('form', form({ name: 'constructor', label: 'X' }))).toEqual([]);
    expect(problems('form', form({ name: 'a', label: 'A' }, { name: 'a', label: 'B' }))).toEqual([
      'payload.fields[1].name: "a" is used twice',
    ]);
  });

  it(`refuses more than ${UI_LIMITS.formFields} fields, none, a missing or hostile form_id`, () => {
    const many = Array.from({ length: UI_LIMITS.formFields + 1 }, (_, i) => ({
      name: `f${i}`,
      label: `F${i}`,
    }));
    expect(problems('form', form(...many))).toEqual([
      `payload.fields: may list at most ${UI_LIMITS.formFields} fields`,
    ]);
    expect(problems('form', form())).toEqual(['payload.fields: must list at least one field']);
    expect(problems('form', { fields: [{ name: 'a', label: 'A' }] })[0]).toContain('payload.form_id');
    expect(problems('form', { form_id: '<script>', fields: [{ name: 'a', label: 'A' }] })[0]).toContain(
      'payload.form_id: must be 1–100 letters',
    );
  });

  it('names every problem of a payload at once', () => {
    const found = problems(
      'form',
      form({ name: 'a b', label: '' }, { name: 'n', label: 'N', type: 'select' }),
    );
    expect(found).toHaveLength(3);
  });
});

describe('card_grid', () => {
  it('accepts cards with title, subtitle, image, fields and details', () => {
    const checked = validateUiComponent('card_grid', {
      title: 'Hotels',
      cards: [
        {
          title: 'Casa Verde',
          subtitle: 'Lisbon',
          image: '/sessions/s1/files/casa.png',
          url: 'https://example.org',
          tags: ['garden'],
          fields: [{ label: 'Price', value: 120 }],
          details: '**Breakfast** included.',
        },
      ],
    });
    expect(checked.ok && checked.value.payload).toMatchObject({
      cards: [{ fields: [{ label: 'Price', value: '120' }] }],
    });
  });

  it.each([
    ['a card without a title', { cards: [{ subtitle: 'x' }] }, 'payload.cards[0].title'],
    ['no cards', { cards: [] }, 'payload.cards: must list at least one card'],
    [
      'a script link as image',
      { cards: [{ title: 'x', image: 'javascript:alert(1)' }] },
      'payload.cards[0].image: must start with',
    ],
    [
      'a protocol-relative link',
      { cards: [{ title: 'x', url: '//evil.example/x' }] },
      'payload.cards[0].url',
    ],
    [
      'a path a browser reads as another site',
      { cards: [{ title: 'x', url: '/\\evil.example/x' }] },
      'payload.cards[0].url: must start with',
    ],
    [
      'a control character a browser drops',
      { cards: [{ title: 'x', image: '/\t/evil.example/x.png' }] },
      'payload.cards[0].image: must start with',
    ],
    ['a data: URL', { cards: [{ title: 'x', image: 'data:text/html,<b>' }] }, 'payload.cards[0].image'],
    ['fields as an object', { cards: [{ title: 'x', fields: { a: 1 } }] }, 'payload.cards[0].fields'],
    [
      'a field without a label',
      { cards: [{ title: 'x', fields: [{ value: 1 }] }] },
      'payload.cards[0].fields[0].label',
    ],
    [
      'too many cards',
      { cards: Array.from({ length: UI_LIMITS.cards + 1 }, () => ({ title: 'x' })) },
      'payload.cards: may list at most',
    ],
  ])('refuses %s', (_what, payload, expected) => {
    expect(problems('card_grid', payload).join('\n')).toContain(expected);
  });
});

describe('table', () => {
  const columns = [
    { key: 'name', label: 'Name' },
    { key: 'price', label: 'Price', type: 'number' },
    { key: 'due', label: 'Due', type: 'date' },
    { key: 'paid', label: 'Paid', type: 'boolean' },
    { key: 'link', label: 'Link', type: 'url' },
  ];

  it('accepts rows as arrays or objects and hands them on as objects', () => {
    const checked = validateUiComponent('table', {
      columns,
      rows: [
        ['Ada', 12.5, '2026-11-25', true, 'https://example.org/a'],
        { name: 'Bob', price: null, due: '2026-11-25T14:30:00Z', paid: false },
      ],
    });
    expect(checked.ok && checked.value.payload).toEqual({
      columns: columns.map((c) => ({ type: 'text', ...c })),
      rows: [
        { name: 'Ada', price: 12.5, due: '2026-11-25', paid: true, link: 'https://example.org/a' },
        { name: 'Bob', price: null, due: '2026-11-25T14:30:00Z', paid: false },
      ],
      sortable: true,
      filterable: true,
    });
  });

  it.each([
    ['text in a number column', { name: 'a', price: '12' }, 'payload.rows[0].price: must be a number'],
    ['a date in another format', { due: '25/11/2026' }, 'payload.rows[0].due: must be a date'],
    ['text in a boolean column', { paid: 'yes' }, 'payload.rows[0].paid: must be true, false or null'],
    ['a script link', { link: 'javascript:alert(1)' }, 'payload.rows[0].link: must be a web address'],
    ['a boolean in a text column', { name: true }, 'payload.rows[0].name: must be text or a number'],
    [
      'an unknown column',
      { colour: 'red' },
      'payload.rows[0].colour: is not a column (columns: name, price, due, paid, link)',
    ],
    ['a nested object', { name: { a: 1 } }, 'payload.rows[0]'],
  ])('refuses %s', (_what, row, expected) => {
    expect(problems('table', { columns, rows: [row] }).join('\n')).toContain(expected);
  });

  it('refuses an array row of the wrong length, duplicate keys, no columns and too many rows', () => {
    expect(problems('table', { columns, rows: [['Ada']] })).toEqual([
      'payload.rows[0]: has 1 cells; the table has 5 columns',
    ]);
    expect(problems('table', { columns: [columns[0], columns[0]], rows: [] })).toEqual([
      'payload.columns[1].key: "name" is used twice',
    ]);
    expect(problems('table', { columns: [], rows: [] })).toEqual([
      'payload.columns: must list at least one column',
    ]);
    const rows = Array.from({ length: UI_LIMITS.tableRows + 1 }, () => ['x']);
    expect(problems('table', { columns: [columns[0]], rows })).toEqual([
      `payload.rows: may list at most ${UI_LIMITS.tableRows} rows`,
    ]);
    expect(problems('table', { columns: [{ key: 'a b', label: 'A' }], rows: [] })[0]).toContain(
      'payload.columns[0].key',
    );
    expect(problems('table', { columns, rows: [], file_name: '../../etc/passwd' })[0]).toContain(
      'payload.file_name',
    );
  });
});

describe('any component', () => {
  it('names the components when the name is unknown, and the payload when it is no object', () => {
    expect(problems('chart', {})).toEqual([
      'component_name: "chart" is not a component; use one of card_grid, form, table',
    ]);
    expect(problems('__proto__', {})[0]).toContain('is not a component');
    expect(problems('table', 'rows')).toEqual(['payload: Invalid input: expected object, received string']);
    expect(problems('form', null)[0]).toMatch(/^payload: /);
  });
});
