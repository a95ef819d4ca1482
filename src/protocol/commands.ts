/**
 * Client → server messages of the WebSocket protocol (docs/protocol.md#websocket), as zod schemas with the
 * TypeScript types inferred from them. The web client imports the types only.
 */
import { z } from 'zod';

/** Upper bound for one client frame; larger frames are refused with a recoverable error. */
export const MAX_CLIENT_FRAME_BYTES = 32 * 1024 * 1024;

export const attachedFileSchema = z.object({
  name: z.string().min(1).max(255),
  path: z.string().min(1).max(4096),
});

export const userMessageCommandSchema = z.object({
  type: z.literal('message'),
  content: z.string().max(1_000_000),
  images: z.array(z.string().min(1)).max(16).optional(),
  files: z.array(attachedFileSchema).max(32).optional(),
});

export const formSubmitCommandSchema = z.object({
  type: z.literal('form_submit'),
  form_id: z.string().min(1).max(200),
  values: z.record(z.string(), z.unknown()),
});

export const toolConfirmCommandSchema = z.object({
  type: z.literal('tool_confirm'),
  call_id: z.string().min(1).max(200),
  approved: z.boolean(),
});

export const clientCommandSchema = z.discriminatedUnion('type', [
  userMessageCommandSchema,
  formSubmitCommandSchema,
  toolConfirmCommandSchema,
]);

export type AttachedFile = z.infer<typeof attachedFileSchema>;
export type UserMessageCommand = z.infer<typeof userMessageCommandSchema>;
export type FormSubmitCommand = z.infer<typeof formSubmitCommandSchema>;
export type ToolConfirmCommand = z.infer<typeof toolConfirmCommandSchema>;
export type ClientCommand = z.infer<typeof clientCommandSchema>;
