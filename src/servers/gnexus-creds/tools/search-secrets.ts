/** `search_secrets`: finds secrets by words, type, tag or status; values stay masked. */
import { z } from 'zod';
import type { SecretQuery } from '../../../vault/types.js';
import { LIMITS } from '../../../vault/validation.js';
import { type ShippedTool, toolText } from '../../common/tool.js';
import { MAX_TAG_CHARS, secretType } from '../input.js';
import { secretListText, USE_BY_REFERENCE } from '../present.js';
import { type GnexusToolDeps, withVault } from '../vault-call.js';

const MAX_QUERY_CHARS = 200;
const DEFAULT_LIMIT = LIMITS.searchDefault;
const MAX_LIMIT = LIMITS.searchMax;

const inputSchema = {
  query: z
    .string({ message: 'query must be a string' })
    .trim()
    .max(MAX_QUERY_CHARS, { message: `query is over ${MAX_QUERY_CHARS} characters: search with fewer words` })
    .optional()
    .describe(
      'Words to look for in the names, tags and plain (non-secret) fields, like "gitea" or "mail work".',
    ),
  type: secretType.optional().describe('Only secrets of this type.'),
  tag: z
    .string({ message: 'tag must be a string' })
    .trim()
    .min(1, { message: 'tag is empty: leave it out, or give one tag' })
    .max(MAX_TAG_CHARS, { message: `tag is over ${MAX_TAG_CHARS} characters` })
    .optional()
    .describe('Only secrets carrying this tag.'),
  status: z
    .enum(['actual', 'outdated'], { message: 'status must be actual or outdated' })
    .optional()
    .describe('Only secrets with this status; leave it out for both.'),
  limit: z
    .number({ message: 'limit must be a number' })
    .int({ message: 'limit must be a whole number' })
    .min(1, { message: 'limit must be at least 1' })
    .max(MAX_LIMIT, { message: `limit must be at most ${MAX_LIMIT}` })
    .optional()
    .describe(
      `How many secrets to list, newest change first (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).`,
    ),
};

export function searchSecretsTool({ vault }: GnexusToolDeps): ShippedTool<typeof inputSchema> {
  return {
    name: 'search_secrets',
    description:
      "Finds the person's stored secrets (passwords, API tokens, SSH keys, notes, cards) by words, type, " +
      'tag or status, newest change first. Every secret value is masked and comes with its reference, ' +
      `{{secret:<id>.<field>}}. ${USE_BY_REFERENCE}`,
    inputSchema,
    annotations: { title: 'Search secrets', readOnlyHint: true, openWorldHint: false },
    handler: (args) =>
      withVault('search_secrets', () => {
        const query: SecretQuery = {
          limit: args.limit ?? DEFAULT_LIMIT,
          ...(args.query && { query: args.query }),
          ...(args.type && { type: args.type }),
          ...(args.tag && { tag: args.tag }),
          ...(args.status && { status: args.status }),
        };
        const found = vault.search(query);
        const what = describeQuery(query);
        if (found.length === 0)
          return toolText(
            `No secret matches ${what}. Try fewer words or no filter; to store a new one, use create_secret.`,
          );
        const more =
          found.length === query.limit ? ` (the first ${found.length}; narrow the search for others)` : '';
        return toolText(
          secretListText(
            `${found.length} secret${found.length === 1 ? '' : 's'} matching ${what}${more}:`,
            found,
          ),
        );
      }),
  };
}

function describeQuery(query: SecretQuery): string {
  const parts = [
    query.query !== undefined && `the words ${JSON.stringify(query.query)}`,
    query.type !== undefined && `type ${query.type}`,
    query.tag !== undefined && `tag ${JSON.stringify(query.tag)}`,
    query.status !== undefined ? `status ${query.status}` : 'status actual or outdated',
  ].filter((p): p is string => typeof p === 'string');
  return parts.join(', ');
}
