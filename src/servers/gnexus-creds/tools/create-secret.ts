/** `create_secret`: stores a new secret; its values are never echoed back. */
import { type ShippedTool, toolText } from '../../common/tool.js';
import { fieldList, MAX_FIELDS, secretName, secretType, tags } from '../input.js';
import { oneSecretText } from '../present.js';
import { auditContext, type GnexusToolDeps, withVault } from '../vault-call.js';

const inputSchema = {
  name: secretName.describe('What the person calls it, like "Gitea admin" or "Hetzner API token".'),
  type: secretType.describe('password, api_token, ssh_key, note, card or custom.'),
  tags: tags.optional().describe('Words to find it by, like ["work", "git"].'),
  fields: fieldList
    .min(1, {
      message: 'fields is empty: a secret needs at least one field, like {"name": "password", "value": "…"}',
    })
    .describe(
      `The values to store (1 to ${MAX_FIELDS}), like [{"name": "username", "value": "alice", "secret": false}, ` +
        '{"name": "password", "value": "…"}]. A field is secret unless it says "secret": false.',
    ),
};

export function createSecretTool({ vault }: GnexusToolDeps): ShippedTool<typeof inputSchema> {
  return {
    name: 'create_secret',
    description:
      "Stores a new secret in the person's vault: a password, API token, SSH key, note, card or anything " +
      'else, with named fields (secret ones encrypted and only shown masked). Answers with the stored ' +
      'secret, its id and the reference of each secret field. Store a value only when the person gave ' +
      'it to be kept; never repeat the value in your answer.',
    inputSchema,
    annotations: {
      title: 'Store a new secret',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
    handler: (args, _signal, request) =>
      withVault('create_secret', () => {
        const record = vault.create(
          {
            name: args.name,
            type: args.type,
            ...(args.tags && { tags: args.tags }),
            fields: args.fields.map((f) => ({ name: f.name, value: f.value, secret: f.secret ?? true })),
          },
          auditContext(request, 'create_secret'),
        );
        return toolText(oneSecretText('Stored the secret:', record));
      }),
  };
}
