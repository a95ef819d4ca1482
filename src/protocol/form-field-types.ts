/**
 * The types a form field may have. Apart from the schemas in ui-components.ts so the web
 * client's main bundle can use the list without loading zod.
 */
export const FORM_FIELD_TYPES = [
  'text',
  'textarea',
  'number',
  'email',
  'url',
  'select',
  'multiselect',
  'checkbox',
  'date',
] as const;

export type FormFieldType = (typeof FORM_FIELD_TYPES)[number];
