/**
 * Card grids and forms stored by an older Navi, before the shared schema: the schema refuses
 * them, and the web client's lenient readers (web/src/lib/card-grid.ts, form-validation.ts)
 * still turn them into what the components draw.
 */
import { describe, expect, it } from 'vitest';
import { validateUiComponent } from '../../src/protocol/ui-components.js';
import { parseCardGrid } from '../../web/src/lib/card-grid.js';
import { initialValue, parseFormPayload, validateField } from '../../web/src/lib/form-validation.js';

describe('an older form payload', () => {
  const legacy = {
    form_id: 'trip',
    fields: [
      { name: 'city', label: 'City', type: 'select', options: ['Oslo', 'Rome'], default: 'Rome' },
      { name: 'nights', type: 'number', default: '3', required: true },
      { name: 'when', type: 'calendar' },
    ],
  };

  it('is refused by the schema, each problem named by its path', () => {
    const check = validateUiComponent('form', legacy);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.problems.some((p) => p.startsWith('payload.fields[0].options[0]'))).toBe(true);
    expect(check.problems.some((p) => p.startsWith('payload.fields[2].type'))).toBe(true);
  });

  it('is read leniently into a form the component can validate', () => {
    const form = parseFormPayload(legacy);
    expect(form?.fields.map((f) => [f.name, f.type])).toEqual([
      ['city', 'select'],
      ['nights', 'number'],
      ['when', 'text'],
    ]);
    const [city, nights] = form?.fields ?? [];
    if (!city || !nights) throw new Error('fields missing');
    expect(city.options).toEqual([
      { label: 'Oslo', value: 'Oslo' },
      { label: 'Rome', value: 'Rome' },
    ]);
    expect(initialValue(city)).toBe('Rome');
    expect(initialValue(nights)).toBe(3);
    expect(validateField(city, 'Paris')).toBe('Choose from the list.');
    expect(validateField(nights, null)).toBe('This field is required.');
    expect(form?.submit_label).toBe('Submit');
  });

  it('that is no form at all is not read as one', () => {
    expect(parseFormPayload({ fields: 'none' })).toBeNull();
    expect(parseFormPayload(null)).toBeNull();
  });
});

describe('an older card grid payload', () => {
  it('with items, names and fields as an object, is still a grid', () => {
    const legacy = {
      items: [{ name: 'Hotel Azur', fields: { price: '120 EUR' }, image: 'javascript:alert(1)' }],
    };
    expect(validateUiComponent('card_grid', legacy).ok).toBe(false);
    const grid = parseCardGrid(legacy);
    expect(grid?.cards).toHaveLength(1);
    expect(grid?.cards[0]).toMatchObject({
      title: 'Hotel Azur',
      fields: [{ label: 'price', value: '120 EUR' }],
    });
    expect(grid?.cards[0]?.image).toBeUndefined();
  });
});
