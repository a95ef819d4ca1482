/** `archive_secret`: retires a secret; from then on every tool answers as for an unknown id. */
import { type ShippedTool, toolText } from '../../common/tool.js';
import { MAX_REASON_CHARS, reason, secretId } from '../input.js';
import { archivedText } from '../present.js';
import { auditContext, type GnexusToolDeps, withVault } from '../vault-call.js';

const inputSchema = {
  id: secretId,
  reason: reason.optional().describe(`Why, for the audit log (at most ${MAX_REASON_CHARS} characters).`),
};

export function archiveSecretTool({ vault }: GnexusToolDeps): ShippedTool<typeof inputSchema> {
  return {
    name: 'archive_secret',
    description:
      'Archives a stored secret the person no longer needs: it stays in the vault for the person, but no ' +
      'tool (search, get, reveal, update, references) can see or use it any more. Ask the person first ' +
      'unless they told you to.',
    inputSchema,
    annotations: {
      title: 'Archive a secret',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    handler: (args, _signal, request) =>
      withVault('archive_secret', () => {
        // The vault answers an archived secret as an unknown one to the agent: archiving twice too.
        const record = vault.archive(
          args.id.toLowerCase(),
          auditContext(request, 'archive_secret', args.reason),
        );
        return toolText(archivedText(record));
      }),
  };
}
