/**
 * `reveal_secret`: the plaintext of one field, for when the person asks to see it. The vault
 * writes the audit entry before it hands the value out; the result names the value in its
 * `_meta` so Navi can hide it in what it stores of the conversation.
 */
import { REVEALED_META_KEY } from '../../../protocol/mcp-meta.js';
import { type ShippedTool, toolError } from '../../common/tool.js';
import { fieldName, MAX_REASON_CHARS, reason, secretId } from '../input.js';
import { auditContext, type GnexusToolDeps, withVault } from '../vault-call.js';

const inputSchema = {
  id: secretId,
  field: fieldName.describe('The field to show, like password.'),
  reason: reason
    .min(1, { message: 'reason is empty: say why the person wants to see the value' })
    .describe(
      `Why the person wants to see the value, in their words (at most ${MAX_REASON_CHARS} characters); it goes into the audit log.`,
    ),
};

export function revealSecretTool({ vault }: GnexusToolDeps): ShippedTool<typeof inputSchema> {
  return {
    name: 'reveal_secret',
    description:
      'Shows the plaintext of one secret field. Only for when the person asks to SEE the value (to copy ' +
      'it somewhere Navi cannot reach); the person is asked to approve, and the reveal is written to the ' +
      "vault's audit log with the reason. To USE a value, do not reveal it: put its reference " +
      '{{secret:<id>.<field>}} in the argument of the tool that needs it (a terminal command, an HTTP ' +
      'header, an SSH password); Navi substitutes it when the tool runs and hides it in the output.',
    inputSchema,
    annotations: { title: 'Reveal a secret value', readOnlyHint: true, openWorldHint: false },
    handler: (args, _signal, request) =>
      withVault('reveal_secret', () => {
        const id = args.id.toLowerCase();
        // Read first: an archived secret answers as an unknown one, whatever reveal would do.
        const record = vault.get(id);
        const field = record.fields.find((f) => f.name === args.field);
        if (!field)
          return toolError(
            `The secret "${record.name}" has no field "${args.field}"; its fields are ${record.fields.map((f) => f.name).join(', ') || '(none)'}.`,
          );
        if (!field.secret)
          return toolError(
            `The field "${args.field}" of "${record.name}" is not secret: get_secret shows its value, ${JSON.stringify(field.value)}, without revealing anything.`,
          );
        const value = vault.reveal(id, args.field, auditContext(request, 'reveal_secret', args.reason));
        // The name the masker shows, the same as for a value used by reference.
        const label = `${record.name}.${args.field}`;
        return {
          content: [
            {
              type: 'text',
              text:
                `The value of ${label} (the reveal is in the audit log):\n\n${value}\n\n` +
                'Show it to the person only; to use it in a tool, pass its reference instead.',
            },
          ],
          _meta: { [REVEALED_META_KEY]: [{ label, value }] },
        };
      }),
  };
}
