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

/**
 * The person's answer to an MCP server's request for input (`elicitation_request`). `values`
 * only with `accept`: the form's values, checked against the server's schema before they go.
 */
export const elicitationAnswerCommandSchema = z.object({
  type: z.literal('elicitation_answer'),
  elicitation_id: z.string().min(1).max(200),
  action: z.enum(['accept', 'decline', 'cancel']),
  values: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Runs the session's last user message again: every message after it (the answer, its tool
 * calls, or the error of a failed turn) is removed from both buffers first (`history_rewound`).
 * The client's Regenerate and Retry both send it.
 */
export const regenerateCommandSchema = z.object({
  type: z.literal('regenerate'),
});

/**
 * Replaces the user message `message_id` with new content and runs it: that message and every
 * message after it are removed from both buffers first (`history_rewound`). Only a message the
 * person typed can be edited, and only while it is still in the model's context (not yet
 * summarised by compression).
 */
export const editCommandSchema = userMessageCommandSchema.extend({
  type: z.literal('edit'),
  message_id: z.string().min(1).max(200),
});

export const clientCommandSchema = z.discriminatedUnion('type', [
  userMessageCommandSchema,
  formSubmitCommandSchema,
  toolConfirmCommandSchema,
  elicitationAnswerCommandSchema,
  regenerateCommandSchema,
  editCommandSchema,
]);

export type AttachedFile = z.infer<typeof attachedFileSchema>;
export type UserMessageCommand = z.infer<typeof userMessageCommandSchema>;
export type FormSubmitCommand = z.infer<typeof formSubmitCommandSchema>;
export type ToolConfirmCommand = z.infer<typeof toolConfirmCommandSchema>;
export type ElicitationAnswerCommand = z.infer<typeof elicitationAnswerCommandSchema>;
export type RegenerateCommand = z.infer<typeof regenerateCommandSchema>;
export type EditCommand = z.infer<typeof editCommandSchema>;
export type ClientCommand = z.infer<typeof clientCommandSchema>;
