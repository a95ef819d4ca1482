/**
 * `content_publish`: marks a file of this session for inline viewing in the
 * client. The registration lives in the tool result's `metadata.published`, which the agent
 * stores on the tool message (src/agent/tool-turn.ts), so it is sent with the `tool_call` event
 * and comes back with the session's messages after a reload. The client renders HTML only in a
 * frame with an empty `sandbox` attribute (web/src/components/PublishedContent.vue); the bytes are
 * always served by the files route, never embedded in the message.
 */
import { join, relative, resolve } from 'node:path';
import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
import { isTextMime, mimeTypeOf } from '../../machine/fs/mime.js';
import type { PublishedContent } from '../../protocol/rest.js';
import type { FileStore } from '../../store/types.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';
import { sessionFileUrl } from './share-file.js';

// `metadata.published` is what a client renders, so its shape is the protocol's.
type PublishedKind = PublishedContent['kind'];

export interface ContentPublishToolDeps {
  settings: Pick<Settings, 'SESSION_FILES_DIR'>;
  files: FileStore;
  now?: () => Date;
}

const KINDS = [
  'image',
  'markdown',
  'html',
  'text',
  'pdf',
  'model',
] as const satisfies readonly PublishedKind[];

function kindOf(mime: string): PublishedKind | undefined {
  if (mime.startsWith('image/')) return 'image';
  if (mime === 'text/markdown') return 'markdown';
  if (mime === 'text/html') return 'html';
  if (mime === 'application/pdf') return 'pdf';
  // The client's 3D viewer reads STL, ASCII or binary.
  if (mime === 'model/stl') return 'model';
  if (isTextMime(mime)) return 'text';
  return undefined;
}

const parameters = z.strictObject({
  name: z.string().describe('Name of a session file (as share_file returned it).'),
  title: z.string().optional().describe('Caption shown above the content.'),
  kind: z.enum(KINDS).optional().describe('How to render it; guessed from the file type when left out.'),
});

export function createContentPublishTool(deps: ContentPublishToolDeps): TypedTool<typeof parameters> {
  const now = deps.now ?? (() => new Date());
  return defineTool({
    name: 'content_publish',
    group: 'session',
    risk: { reads: true, writes: true },
    description:
      "Show a file of this session inline in the user's chat (image, Markdown, HTML in a sandboxed " +
      'frame, plain text, PDF, an STL model in a 3D viewer). Share a local file with share_file ' +
      'first, then publish it by name.',
    parameters,
    async execute(params, ctx) {
      const name = params.name.trim();
      if (name === '') return fail('Parameter "name" must name a file of this session.');
      const record = await deps.files.get(ctx.sessionId, name);
      const sessionDir = resolve(join(deps.settings.SESSION_FILES_DIR, ctx.sessionId));
      const rel = record ? relative(sessionDir, resolve(record.path)) : '';
      if (
        !record ||
        Date.parse(record.expires_at) <= now().getTime() ||
        rel.startsWith('..') ||
        rel.includes('/')
      ) {
        const known = (await deps.files.list(ctx.sessionId))
          .filter((r) => Date.parse(r.expires_at) > now().getTime())
          .map((r) => r.name);
        return fail(
          `This session has no file named "${name}". ` +
            (known.length > 0
              ? `Its files: ${known.join(', ')}.`
              : 'It has no files yet: copy one in with share_file first.'),
        );
      }
      const mime = record.mime_type || mimeTypeOf(record.name);
      const guessed = kindOf(mime);
      const kind: PublishedKind | undefined = params.kind ?? guessed;
      if (!kind) {
        return fail(
          `"${name}" is ${mime}, which cannot be shown inline (images, Markdown, HTML, text, PDF and STL models can). ` +
            `The user can still download it from ${sessionFileUrl(ctx.sessionId, name)}.`,
        );
      }
      if (kind === 'image' && guessed !== 'image')
        return fail(`"${name}" is ${mime}, not an image; choose another kind or leave "kind" out.`);
      if (kind === 'pdf' && guessed !== 'pdf')
        return fail(`"${name}" is ${mime}, not a PDF; choose another kind or leave "kind" out.`);
      if (kind === 'model' && guessed !== 'model')
        return fail(`"${name}" is ${mime}, not an STL model; choose another kind or leave "kind" out.`);
      const title = params.title?.trim() || name;
      const published: PublishedContent = {
        name,
        url: sessionFileUrl(ctx.sessionId, name),
        kind,
        mime_type: mime,
        title,
      };
      return ok(`Published "${name}" for the user to see inline as ${kind} ("${title}").`, { published });
    },
  });
}
