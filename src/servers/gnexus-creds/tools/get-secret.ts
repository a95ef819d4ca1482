/** `get_secret`: one secret by id, values masked. */
import { type ShippedTool, toolText } from '../../common/tool.js';
import { secretId } from '../input.js';
import { oneSecretText, USE_BY_REFERENCE } from '../present.js';
import { type GnexusToolDeps, withVault } from '../vault-call.js';

const inputSchema = { id: secretId };

export function getSecretTool({ vault }: GnexusToolDeps): ShippedTool<typeof inputSchema> {
  return {
    name: 'get_secret',
    description:
      'Shows one stored secret by id: name, type, tags, status, dates and its fields, every secret value ' +
      `masked with its reference {{secret:<id>.<field>}}. ${USE_BY_REFERENCE}`,
    inputSchema,
    annotations: { title: 'Get a secret', readOnlyHint: true, openWorldHint: false },
    handler: (args) =>
      withVault('get_secret', () => toolText(oneSecretText('The secret:', vault.get(args.id.toLowerCase())))),
  };
}
