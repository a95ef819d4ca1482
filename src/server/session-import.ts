/**
 * Reading a session export (`SessionExport`, docs/protocol.md#export-and-import) back in. The
 * file comes from anywhere, so every field is checked with zod, sizes are capped, and what
 * points outside the file is not trusted: attached and published files keep their names but
 * are pointed at the new session's own folder, where they are not (an export holds no file
 * contents); the answer says which are missing. Fields this version does not know are dropped,
 * and so is the `client_system` kind: no system message of a file reaches the model.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { attachedFileSchema } from '../protocol/commands.js';
import { errorTable } from '../protocol/error-codes.js';
import { TOOL_OUTCOMES } from '../protocol/events.js';
import { MESSAGE_KINDS, type SessionMessage } from '../protocol/rest.js';
import type { BufferedMessage } from '../store/types.js';
import { ApiError } from './errors.js';
import { sanitiseFileName } from './file-names.js';

/** A buffer longer than this is not a conversation anyone had. */
export const MAX_IMPORT_MESSAGES = 20_000;
const MAX_TEXT = 1_000_000;
const MAX_IMAGE = 16 * 1024 * 1024;
const MAX_ID = 200;
const MAX_TITLE = 200;

const shortText = z.string().max(MAX_ID);
/** Any date JavaScript reads, stored in the one form Navi writes, so times compare as text. */
const isoTime = z
  .string()
  .max(40)
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be a date and time such as 2026-01-02T03:04:05.000Z')
  .transform((s) => new Date(s).toISOString());
const object = z.record(z.string(), z.unknown());

const messageSchema = z.object({
  id: z.string().min(1).max(MAX_ID),
  role: z.enum(['user', 'assistant', 'tool', 'system']),
  content: z.string().max(MAX_TEXT).nullable(),
  created_at: isoTime,
  kind: z.enum(MESSAGE_KINDS).optional(),
  images: z
    .array(
      z
        .string()
        .min(1)
        .max(MAX_IMAGE)
        .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64 image data without a data: prefix'),
    )
    .max(16)
    .optional(),
  attachments: z.array(attachedFileSchema).max(32).optional(),
  trigger: z.enum(['form', 'recall']).optional(),
  recall: z
    .object({ recall_id: shortText, scheduled_for: isoTime, late_ms: z.number().int().min(0).optional() })
    .optional(),
  form_submit: z.object({ form_id: shortText, values: object }).optional(),
  tool_calls: z
    .array(z.object({ id: shortText, name: shortText, arguments: object }))
    .max(128)
    .optional(),
  tool_call_id: shortText.optional(),
  name: shortText.optional(),
  thinking: z.string().max(MAX_TEXT).optional(),
  interrupted: z.literal(true).optional(),
  stopped: z.literal(true).optional(),
  success: z.boolean().optional(),
  outcome: z.enum(TOOL_OUTCOMES).optional(),
  error: z
    .object({
      message: z.string().max(10_000),
      code: z
        .string()
        .refine((c): c is keyof typeof errorTable => Object.hasOwn(errorTable, c), 'is not a Navi error code')
        .optional(),
    })
    .optional(),
  unverified_claims: z.array(z.string().max(10_000)).max(100).optional(),
  ui_component: z.object({ component: shortText, payload: object }).optional(),
  published: z
    .object({
      name: z.string().min(1).max(255),
      url: z.string().max(4096),
      kind: z.enum(['image', 'markdown', 'html', 'text', 'pdf', 'model']),
      mime_type: shortText,
      title: z.string().max(1000),
    })
    .optional(),
  tool_metadata: object.optional(),
});

type ParsedMessage = z.infer<typeof messageSchema>;
// Does not compile when SessionMessage gains a field the schema above does not read, or when a
// parsed message would not be a SessionMessage.
const _everyField: Record<Exclude<keyof SessionMessage, keyof ParsedMessage>, never> = {};
const _fits = (m: ParsedMessage): SessionMessage => m;

const buffer = (name: string) =>
  z
    .array(messageSchema)
    .max(MAX_IMPORT_MESSAGES)
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      list.forEach((m, i) => {
        if (seen.has(m.id)) {
          ctx.addIssue({
            code: 'custom',
            path: [i, 'id'],
            message: `"${m.id.slice(0, 40)}" is the id of an earlier message of ${name}; ids must be unique`,
          });
        }
        seen.add(m.id);
      });
    });

const exportSchema = z.object({
  navi_export: z.literal(1),
  exported_at: isoTime.optional(),
  session: z.object({
    title: z.string().max(MAX_TITLE),
    profile_id: z.string().max(64),
    created_at: isoTime,
    pinned: z.boolean().optional(),
  }),
  messages: buffer('messages'),
  context: buffer('context').optional(),
});

export type ParsedExport = z.infer<typeof exportSchema>;

/** `{navi_export: 1, …}` checked, or INVALID_IMPORT saying what is wrong and where. */
export function parseExport(body: unknown): ParsedExport {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError(
      'INVALID_IMPORT',
      'send the JSON object that GET /sessions/{id}/export?format=json gives (a Markdown export cannot be imported)',
    );
  }
  const version = (body as { navi_export?: unknown }).navi_export;
  if (version === undefined) {
    throw new ApiError(
      'INVALID_IMPORT',
      'it has no navi_export field; export the session as JSON from Navi and import that file',
    );
  }
  if (version !== 1) {
    throw new ApiError(
      'INVALID_IMPORT',
      `its navi_export is ${JSON.stringify(version).slice(0, 20)}, and this Navi reads version 1; import it into the Navi that wrote it, or update this one`,
    );
  }
  const parsed = exportSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : 'the file';
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more problems)` : '';
  throw new ApiError('INVALID_IMPORT', `${where}: ${issue?.message ?? 'is not valid'}${more}`);
}

/** What becomes of an export in this Navi: the buffers to append and what the person should know. */
export interface ImportPlan {
  entries: BufferedMessage[];
  /** Names of attached and published files the new session refers to but does not have. */
  missingFiles: string[];
}

export interface ImportTarget {
  /** The new session's files folder. */
  filesDir: string;
  /** The URL a file of the new session is served at. */
  fileUrl(name: string): string;
}

/**
 * The messages to append to the new session: the display buffer, then the context buffer
 * (rebuilt from the display buffer when the export has none: everything but failed-turn
 * notices, which the model never reads). File references are pointed at the new session.
 */
export function planImport(data: ParsedExport, target: ImportTarget): ImportPlan {
  const missing = new Set<string>();
  const rehome = (m: ParsedMessage): SessionMessage => {
    const message: SessionMessage = { ...m };
    // The model reads a stored system message only when Navi tagged it as an OpenAI client's own:
    // a file anyone can write must not get to instruct it, so its tag goes and the text stays.
    if (message.kind === 'client_system') delete message.kind;
    if (m.attachments) {
      message.attachments = m.attachments.map((file) => {
        const name = sanitiseFileName(file.name) ?? 'file';
        missing.add(name);
        return { name, path: join(target.filesDir, name) };
      });
    }
    if (m.published) {
      const name = sanitiseFileName(m.published.name) ?? 'file';
      missing.add(name);
      message.published = { ...m.published, name, url: target.fileUrl(name) };
    }
    return message;
  };
  const entries: BufferedMessage[] = data.messages.map((m) => ({
    message: rehome(m),
    display: true,
    context: data.context === undefined && m.kind !== 'error',
  }));
  for (const m of data.context ?? []) entries.push({ message: rehome(m), display: false, context: true });
  return { entries, missingFiles: [...missing] };
}
