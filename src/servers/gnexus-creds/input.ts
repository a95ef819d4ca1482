/**
 * The argument pieces the gnexus-creds tools share, with the limits every tool applies: the SDK
 * checks them before a handler runs and answers a bad call with the messages written here.
 */
import { z } from 'zod';
import { FIELD_NAME, SECRET_ID_PATTERN, SECRET_TYPES } from '../../vault/types.js';
import { LIMITS } from '../../vault/validation.js';

// The vault's own limits, so a call the SDK lets through is never refused by the vault for size.
export const MAX_NAME_CHARS = LIMITS.name;
export const MAX_FIELDS = LIMITS.fields;
export const MAX_VALUE_BYTES = LIMITS.valueBytes;
export const MAX_TAGS = LIMITS.tags;
export const MAX_TAG_CHARS = LIMITS.tag;
/** The vault keeps any reason; this keeps the audit log's lines short. */
export const MAX_REASON_CHARS = LIMITS.reason;

/** A string argument whose type error says whether it was missing or of the wrong type. */
function text(name: string, hint: string) {
  return z.string({
    error: (issue) =>
      issue.input === undefined ? `${name} is missing: ${hint}` : `${name} must be a string: ${hint}`,
  });
}

/** A secret id as the vault writes it; checked here so nothing else (paths, SQL) reaches the vault. */
const ID = new RegExp(SECRET_ID_PATTERN);

export const secretId = text('id', 'the id of a secret as search_secrets shows it')
  .regex(ID, {
    message:
      'id must be the id of a secret (a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e) as search_secrets shows it',
  })
  .describe('The id of the secret, as search_secrets or get_secret shows it.');

export const secretName = text('name', 'what the person calls the secret, like "Gitea admin"')
  .trim()
  .min(1, { message: 'name is empty: give the secret a name the person recognises, like "Gitea admin"' })
  .max(MAX_NAME_CHARS, { message: `name is over ${MAX_NAME_CHARS} characters: give a shorter one` });

export const secretType = z.enum(SECRET_TYPES, {
  error: (issue) =>
    `type ${issue.input === undefined ? 'is missing' : 'is not a secret type'}: use one of ${SECRET_TYPES.join(', ')}`,
});

export const fieldName = text('the field name', 'like password, username or api_key').regex(FIELD_NAME, {
  message: 'a field name is 1 to 64 letters, digits, "_" or "-" (like password, username, api_key)',
});

export const tags = z
  .array(
    z
      .string({ message: 'a tag must be a string' })
      .trim()
      .min(1, { message: 'a tag must not be empty' })
      .max(MAX_TAG_CHARS, { message: `a tag is at most ${MAX_TAG_CHARS} characters` }),
    { message: 'tags must be a list of words, like ["work", "git"]' },
  )
  .max(MAX_TAGS, { message: `at most ${MAX_TAGS} tags` });

const fieldValue = text('the field value', 'the text to store')
  .min(1, {
    message: 'a field value must not be empty: leave the field out, or remove it with remove_fields',
  })
  .max(MAX_VALUE_BYTES, { message: `a field value is at most ${MAX_VALUE_BYTES} bytes` })
  .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_VALUE_BYTES, {
    message: `a field value is at most ${MAX_VALUE_BYTES} bytes`,
  });

/** One field to store; `secret` is optional here because its default differs between create and update. */
export const fieldInput = z.object({
  name: fieldName.describe('The field name, like password, username, url, api_key.'),
  value: fieldValue.describe('The value to store.'),
  secret: z
    .boolean({ message: 'secret must be true or false' })
    .optional()
    .describe(
      'true (the default for a new field): encrypted and only ever shown masked, like a password. ' +
        'false: a plain value anyone may read, like a user name or a URL.',
    ),
});

export const fieldList = z
  .array(fieldInput, { message: 'fields must be a list of {name, value, secret} objects' })
  .max(MAX_FIELDS, { message: `a secret holds at most ${MAX_FIELDS} fields` });

export const reason = text('reason', 'why, in one sentence')
  .trim()
  .max(MAX_REASON_CHARS, {
    message: `reason is over ${MAX_REASON_CHARS} characters: say it in one sentence`,
  });
