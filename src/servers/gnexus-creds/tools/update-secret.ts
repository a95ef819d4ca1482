/**
 * `update_secret`: renames, retypes, retags, adds or replaces fields, removes fields. A replaced
 * field keeps being secret or plain unless the call says otherwise; a new one is secret.
 */
import { z } from 'zod';
import type { SecretFieldInput, SecretPatch } from '../../../vault/types.js';
import { type ShippedTool, toolError, toolText } from '../../common/tool.js';
import { fieldList, fieldName, MAX_FIELDS, secretId, secretName, secretType, tags } from '../input.js';
import { oneSecretText } from '../present.js';
import { auditContext, type GnexusToolDeps, withVault } from '../vault-call.js';

const inputSchema = {
  id: secretId,
  name: secretName.optional().describe('A new name.'),
  type: secretType.optional().describe('A new type.'),
  tags: tags.optional().describe('The new tags, replacing the old ones ([] removes them all).'),
  fields: fieldList
    .optional()
    .describe(
      `Fields to add or replace (at most ${MAX_FIELDS}), by name. A replaced field stays secret or plain as ` +
        'it was unless "secret" is given; a new field is secret unless it says "secret": false.',
    ),
  remove_fields: z
    .array(fieldName, { message: 'remove_fields must be a list of field names' })
    .max(MAX_FIELDS, { message: `remove_fields names at most ${MAX_FIELDS} fields` })
    .optional()
    .describe('Names of fields to delete.'),
};

export function updateSecretTool({ vault }: GnexusToolDeps): ShippedTool<typeof inputSchema> {
  return {
    name: 'update_secret',
    description:
      'Changes a stored secret: its name, type or tags, new or replaced field values (a new password, a ' +
      'rotated token), or fields to remove. Give only what changes. Answers with the secret as it is now, ' +
      'values masked; never repeat a value in your answer.',
    inputSchema,
    annotations: {
      title: 'Change a secret',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    handler: (args, _signal, request) =>
      withVault('update_secret', () => {
        const { name, type, tags: newTags, fields, remove_fields: remove } = args;
        if (
          name === undefined &&
          type === undefined &&
          newTags === undefined &&
          !fields?.length &&
          !remove?.length
        )
          return toolError(
            'Nothing to change: give at least one of name, type, tags, fields or remove_fields.',
          );
        const id = args.id.toLowerCase();
        // Read first: an archived secret answers as an unknown one, and a replaced field keeps its kind.
        const current = vault.get(id);
        const wasSecret = new Map(current.fields.map((f) => [f.name, f.secret]));
        const patch: SecretPatch = {
          ...(name !== undefined && { name }),
          ...(type !== undefined && { type }),
          ...(newTags !== undefined && { tags: newTags }),
          ...(fields?.length && {
            fields: fields.map(
              (f): SecretFieldInput => ({
                name: f.name,
                value: f.value,
                secret: f.secret ?? wasSecret.get(f.name) ?? true,
              }),
            ),
          }),
          ...(remove?.length && { remove_fields: remove }),
        };
        const record = vault.update(id, patch, auditContext(request, 'update_secret'));
        return toolText(oneSecretText('Updated the secret:', record));
      }),
  };
}
