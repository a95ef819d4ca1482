import { describe, expect, it } from 'vitest';
import { formPayloadSchema } from '../protocol/ui-components.js';
import {
  checkElicitationAnswer,
  ELICITATION_LIMITS,
  elicitationForm,
  fieldNames,
} from './elicitation-form.js';

const schema = (properties: Record<string, unknown>, required?: string[]) => ({
  type: 'object',
  properties,
  ...(required ? { required } : {}),
});

function formOf(s: unknown) {
  const built = elicitationForm('elicit-1', s);
  if (!built.ok) throw new Error(built.reason);
  return built.form;
}

const every = schema(
  {
    name: { type: 'string', title: 'Your name', minLength: 2, maxLength: 40, pattern: '^[A-Z].*' },
    email: { type: 'string', format: 'email', description: 'For the receipt' },
    site: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date', default: '2026-12-24' },
    at: { type: 'string', format: 'date-time' },
    guests: { type: 'integer', minimum: 1, maximum: 12, default: 2 },
    budget: { type: 'number', minimum: 0.5 },
    vegan: { type: 'boolean', default: false },
    size: { type: 'string', enum: ['s', 'm', 'l'], enumNames: ['Small', 'Medium', 'Large'] },
    colour: {
      type: 'string',
      oneOf: [
        { const: '#f00', title: 'Red' },
        { const: '#00f', title: 'Blue' },
      ],
      default: '#00f',
    },
    toppings: { type: 'array', items: { type: 'string', enum: ['cheese', 'ham'] }, default: ['cheese'] },
    extras: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'bread', title: 'Bread' },
          { const: 'wine', title: 'Wine' },
        ],
      },
      minItems: 1,
    },
  },
  ['name', 'guests', 'vegan'],
);

describe('elicitationForm', () => {
  it('maps every type of the requested schema to the nearest form field, valid as a navi-ui form', () => {
    const form = formOf(every);
    const byName = Object.fromEntries(form.fields.map((f) => [f.name, f]));
    expect(byName.name).toMatchObject({
      label: 'Your name',
      type: 'text',
      required: true,
      minLength: 2,
      maxLength: 40,
      pattern: '^[A-Z].*',
    });
    expect(byName.email).toMatchObject({ type: 'email', description: 'For the receipt', required: false });
    expect(byName.site?.type).toBe('url');
    expect(byName.day).toMatchObject({ type: 'date', default: '2026-12-24' });
    // No field of its own: a text field whose help says what to type.
    expect(byName.at).toMatchObject({ type: 'text' });
    expect(byName.at?.description).toMatch(/date and time, such as 2026-11-25T14:30:00Z/);
    // Required, but left empty its default is sent: the form need not insist.
    expect(byName.guests).toMatchObject({ type: 'number', min: 1, max: 12, default: 2, required: false });
    expect(byName.guests?.description).toMatch(/whole number/);
    expect(byName.budget).toMatchObject({ type: 'number', min: 0.5 });
    // A checkbox always answers, so "required" does not mean "must be ticked".
    expect(byName.vegan).toMatchObject({ type: 'checkbox', required: false, default: false });
    expect(byName.size).toMatchObject({
      type: 'select',
      options: [
        { value: 's', label: 'Small' },
        { value: 'm', label: 'Medium' },
        { value: 'l', label: 'Large' },
      ],
    });
    expect(byName.colour).toMatchObject({ type: 'select', default: '#00f' });
    expect(byName.colour?.options?.map((o) => o.label)).toEqual(['Red', 'Blue']);
    expect(byName.toppings).toMatchObject({ type: 'multiselect', default: ['cheese'] });
    expect(byName.extras?.options).toEqual([
      { value: 'bread', label: 'Bread' },
      { value: 'wine', label: 'Wine' },
    ]);
    expect(formPayloadSchema.safeParse(form).success).toBe(true);
  });

  it('shows a choice among more options than a form lists as a text field naming them', () => {
    const many = Array.from({ length: ELICITATION_LIMITS.options + 1 }, (_, i) => `c${i}`);
    const form = formOf(schema({ pick: { type: 'string', enum: many } }));
    expect(form.fields[0]?.type).toBe('text');
    expect(form.fields[0]?.description).toMatch(/^Type one of: c0, c1, c2/);
    const check = checkElicitationAnswer(schema({ pick: { type: 'string', enum: many } }), { pick: 'nope' });
    expect(check).toEqual({ ok: false, problems: ['pick: choose one of the offered values'] });
  });

  it('refuses schemas it cannot show, saying why', () => {
    const cases: [unknown, RegExp][] = [
      [null, /not an object/],
      [{ type: 'array', properties: {} }, /type "object"/],
      [{ type: 'object' }, /no "properties"/],
      [
        schema({ address: { type: 'object', properties: { street: { type: 'string' } } } }),
        /"address" is a nested object/,
      ],
      [schema({ tags: { type: 'array', items: { type: 'string' } } }), /"tags" is a list without choices/],
      [schema({ x: { type: 'null' } }), /"x" has type "null"/],
      [schema({ x: 'string' }), /"x" is not a schema object/],
      [schema({ x: { type: 'string', enum: [] } }), /"x" offers no choices/],
      [
        schema({
          x: { type: 'string', enum: Array.from({ length: ELICITATION_LIMITS.choices + 1 }, String) },
        }),
        /offers 1001 choices; Navi shows at most 1000/,
      ],
      [schema({ x: { type: 'string', pattern: '(' } }), /pattern that is not a valid regular expression/],
      [
        schema({ a: { type: 'string' } }, ['a', 'b']),
        /"required" names b, which the schema has no property for/,
      ],
      [{ type: 'object', properties: {}, required: 'a' }, /"required" must be a list/],
      [
        schema(
          Object.fromEntries(
            Array.from({ length: ELICITATION_LIMITS.fields + 1 }, (_, i) => [`f${i}`, { type: 'string' }]),
          ),
        ),
        /21 fields; Navi shows at most 20/,
      ],
    ];
    for (const [bad, reason] of cases) {
      const built = elicitationForm('elicit-1', bad);
      expect(built.ok, JSON.stringify(bad).slice(0, 80)).toBe(false);
      if (!built.ok) expect(built.reason).toMatch(reason);
    }
  });

  it('takes a schema without properties: a form the person only accepts or declines', () => {
    expect(formOf(schema({})).fields).toEqual([]);
  });

  it('gives properties a form field cannot be named after a name of their own, and maps answers back', () => {
    const s = schema({
      'first name': { type: 'string' },
      __proto__x: { type: 'string' },
      field_1: { type: 'string' },
    });
    const names = fieldNames(s.properties);
    expect(names.get('first name')).toBe('field_2');
    expect(formOf(s).fields.map((f) => f.name)).toEqual(['field_2', '__proto__x', 'field_1']);
    expect(checkElicitationAnswer(s, { field_2: 'Ada' })).toEqual({
      ok: true,
      content: { 'first name': 'Ada' },
    });
  });

  it('clips long titles and descriptions to what a form holds, and drops defaults that do not fit', () => {
    const form = formOf(
      schema({
        x: { type: 'string', title: 'T'.repeat(500), description: 'D'.repeat(5000) },
        n: { type: 'number', default: 'many' },
        s: { type: 'string', enum: ['a'], default: 'b' },
      }),
    );
    expect(form.fields[0]?.label).toHaveLength(200);
    expect(form.fields[0]?.description?.length).toBeLessThanOrEqual(4000);
    expect(form.fields[1]?.default).toBeUndefined();
    expect(form.fields[2]?.default).toBeUndefined();
    expect(formPayloadSchema.safeParse(form).success).toBe(true);
  });
});

describe('checkElicitationAnswer', () => {
  it('fills in the defaults of fields left empty and turns form strings into the schema types', () => {
    const check = checkElicitationAnswer(every, {
      name: 'Ada',
      guests: '',
      budget: '12.5',
      vegan: 'true',
      extras: 'bread, wine',
      email: '',
    });
    expect(check).toEqual({
      ok: true,
      content: {
        name: 'Ada',
        day: '2026-12-24',
        guests: 2,
        budget: 12.5,
        vegan: true,
        colour: '#00f',
        toppings: ['cheese'],
        extras: ['bread', 'wine'],
      },
    });
  });

  it('names every field that does not fit, by its label', () => {
    const check = checkElicitationAnswer(every, {
      name: 'a',
      email: 'not-an-email',
      site: 'nowhere',
      at: 'yesterday',
      guests: 2.5,
      budget: 'lots',
      size: 'xl',
      extras: ['beer'],
    });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    const text = check.problems.join('\n');
    expect(text).toMatch(/Your name: must NOT have fewer than 2 characters/);
    expect(text).toMatch(/Your name: must match pattern/);
    expect(text).toMatch(/email: must be An email address/);
    expect(text).toMatch(/site: must be An address/);
    expect(text).toMatch(/at: must be A date and time/);
    expect(text).toMatch(/guests: must be integer/);
    expect(text).toMatch(/budget: must be number/);
    expect(text).toMatch(/size: choose one of the offered values/);
    expect(text).toMatch(/extras: choose one of the offered values/);
  });

  it('asks for required fields that have no default', () => {
    const check = checkElicitationAnswer(schema({ code: { type: 'string' } }, ['code']), {});
    expect(check).toEqual({ ok: false, problems: ['code: is required; fill it in'] });
  });

  it('refuses fields the form does not have, and hostile values', () => {
    const hostile = JSON.parse('{"name":"Ada","__proto__":{"polluted":true},"extra":1}');
    expect(checkElicitationAnswer(every, hostile)).toEqual({
      ok: false,
      problems: ['__proto__: is not a field of this form', 'extra: is not a field of this form'],
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const wrong = checkElicitationAnswer(schema({ a: { type: 'string' } }), { a: { nested: true } });
    expect(wrong).toEqual({ ok: false, problems: ['a: must be string'] });
    const huge = checkElicitationAnswer(schema({ a: { type: 'string', maxLength: 10 } }), {
      a: 'x'.repeat(100_000),
    });
    expect(huge.ok).toBe(false);
  });

  it('refuses to check against a schema it would not have shown', () => {
    expect(
      checkElicitationAnswer({ type: 'object', properties: { a: { type: 'object' } } }, {}),
    ).toMatchObject({
      ok: false,
    });
  });
});
