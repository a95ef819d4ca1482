/**
 * `scratchpad`: named working notes for the session (findings, intermediate results, drafts),
 * so the agent does not have to keep them in the conversation. Per session in the KvStore;
 * subagents get their own. The description offered to the LLM lists the sections the profile
 * suggests (`scratchpad_sections`); other names are allowed too.
 */

import { z } from 'zod';
import type { Profile } from '../../config/profiles.js';
import type { KvStore } from '../../store/types.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

export const SCRATCHPAD_KV_KEY = 'scratchpad';
const MAX_SECTION_CHARS = 100_000;

type Pad = Record<string, string>;

async function readPad(kv: KvStore, sessionId: string): Promise<Pad> {
  const value = await kv.get<unknown>(sessionId, SCRATCHPAD_KV_KEY);
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Pad) : {};
}

function formatPad(pad: Pad): string {
  const names = Object.keys(pad);
  if (names.length === 0) return 'The scratchpad is empty.';
  return names.map((n) => `## ${n}\n${pad[n]}`).join('\n\n');
}

const BASE_DESCRIPTION =
  'Working notes for this session, kept in named sections. "write" replaces a section, ' +
  '"append" adds to its end, "read" shows one section (or all without "section"), ' +
  '"clear" empties one section (or all without "section"). Keep findings and intermediate ' +
  'results here instead of repeating them.';

const parameters = z.strictObject({
  action: z.enum(['write', 'append', 'read', 'clear']),
  section: z.string().min(1).max(64).optional().describe('Section name.'),
  content: z.string().optional().describe('For write and append: the text.'),
});

export function createScratchpadTool(kv: KvStore): TypedTool<typeof parameters> {
  return defineTool({
    name: 'scratchpad',
    group: 'session',
    // Only the session's own notes.
    risk: {},
    description: BASE_DESCRIPTION,
    describeFor(profile: Profile): string {
      const sections = profile.scratchpad_sections;
      return sections.length > 0
        ? `${BASE_DESCRIPTION} Suggested sections: ${sections.join(', ')}.`
        : BASE_DESCRIPTION;
    },
    parameters,
    async execute(params, ctx) {
      const { action, content } = params;
      const section = params.section?.trim();
      const pad = await readPad(kv, ctx.sessionId);
      if (action === 'read') {
        if (!section) return ok(formatPad(pad));
        const text = pad[section];
        if (text === undefined) {
          const known = Object.keys(pad);
          return ok(
            `Section "${section}" is empty.${known.length > 0 ? ` Sections with notes: ${known.join(', ')}.` : ''}`,
          );
        }
        return ok(`## ${section}\n${text}`);
      }
      if (action === 'clear') {
        if (section) delete pad[section];
        await kv.set(ctx.sessionId, SCRATCHPAD_KV_KEY, section ? pad : {});
        return ok(section ? `Section "${section}" cleared.` : 'Scratchpad cleared.');
      }
      if (!section) return fail(`"${action}" needs "section".`);
      if (content === undefined) return fail(`"${action}" needs "content".`);
      const next = action === 'append' && pad[section] ? `${pad[section]}\n${content}` : content;
      if (next.length > MAX_SECTION_CHARS) {
        return fail(
          `Section "${section}" would exceed ${MAX_SECTION_CHARS} characters; summarise it and write it again.`,
        );
      }
      pad[section] = next;
      await kv.set(ctx.sessionId, SCRATCHPAD_KV_KEY, pad);
      return ok(
        `Section "${section}" ${action === 'write' ? 'written' : 'appended'} (${next.length} characters).`,
      );
    },
  });
}
