/** `set_secret_status`: marks a secret actual or outdated, or archives it. */
import { z } from 'zod';
import { type ShippedTool, toolText } from '../../common/tool.js';
import { secretId } from '../input.js';
import { archivedText, oneSecretText } from '../present.js';
import { auditContext, type GnexusToolDeps, withVault } from '../vault-call.js';

const inputSchema = {
  id: secretId,
  status: z
    .enum(['actual', 'outdated', 'archived'], { message: 'status must be actual, outdated or archived' })
    .describe(
      'actual: in use. outdated: kept, but probably no longer valid (an old password). archived: ' +
        'hidden from every tool from now on, as archive_secret does.',
    ),
};

export function setSecretStatusTool({ vault }: GnexusToolDeps): ShippedTool<typeof inputSchema> {
  return {
    name: 'set_secret_status',
    description:
      'Marks a stored secret as actual (in use) or outdated (kept, probably no longer valid), or archives ' +
      'it (then no tool sees it any more).',
    inputSchema,
    annotations: {
      title: 'Set the status of a secret',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    handler: (args, _signal, request) =>
      withVault('set_secret_status', () => {
        // The vault answers an archived secret as an unknown one to the agent.
        const id = args.id.toLowerCase();
        const record = vault.setStatus(id, args.status, auditContext(request, 'set_secret_status'));
        if (args.status === 'archived') return toolText(archivedText(record));
        return toolText(oneSecretText(`Marked "${record.name}" as ${record.status}:`, record));
      }),
  };
}
