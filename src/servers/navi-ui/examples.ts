/**
 * One short, valid payload per component, shown in the tool's description: small models copy
 * the shape of an example far more reliably than they read a schema. The tests check that each
 * example passes validation, so the description never teaches a broken payload.
 */
import type { UiComponentName } from '../../protocol/ui-components.js';

export const UI_COMPONENT_EXAMPLES: Record<UiComponentName, Record<string, unknown>> = {
  card_grid: {
    title: 'Hotels in Lisbon',
    cards: [
      {
        title: 'Casa Verde',
        subtitle: '4 stars · Alfama',
        image: 'https://example.org/casa-verde.jpg',
        fields: [{ label: 'Price', value: '120 EUR' }],
        details: 'Garden rooms, breakfast included.',
      },
    ],
  },
  form: {
    form_id: 'trip_details',
    title: 'Your trip',
    fields: [
      { name: 'city', label: 'City', type: 'text', required: true },
      { name: 'nights', label: 'Nights', type: 'number', min: 1, max: 30 },
      {
        name: 'kind',
        label: 'Kind',
        type: 'select',
        options: [
          { label: 'Beach', value: 'beach' },
          { label: 'City', value: 'city' },
        ],
      },
    ],
    submit_label: 'Plan it',
  },
  table: {
    title: 'Invoices',
    columns: [
      { key: 'number', label: 'No.', type: 'text' },
      { key: 'due', label: 'Due', type: 'date' },
      { key: 'amount', label: 'Amount', type: 'number' },
    ],
    rows: [
      ['2026-017', '2026-12-01', 420.5],
      ['2026-018', '2026-12-15', 99],
    ],
  },
};
