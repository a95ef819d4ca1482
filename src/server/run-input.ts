/**
 * Turning what a client sent (a chat message or a form submission, over REST or WebSocket)
 * into the agent's `RunInput`, refusing what the agent must never see: empty messages,
 * images that are not base64 or that the session's model cannot see, files that were not
 * uploaded to this very session.
 */
import { resolve } from 'node:path';
import type { RunInput } from '../agent/types.js';
import type { AttachedFile } from '../protocol/commands.js';
import { ApiError } from './errors.js';
import type { SessionFiles } from './session-files.js';

/** Decoded size allowed for one image. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

export interface ClientMessage {
  content: string;
  images?: string[];
  files?: AttachedFile[];
}

const DATA_URI_PREFIX = /^data:[a-z0-9.+/-]*(;[a-z0-9=.+-]+)*;base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strips a `data:…;base64,` prefix and checks the rest is base64 within the size cap. */
export function normaliseImage(raw: string, index: number): string {
  const body = raw.replace(DATA_URI_PREFIX, '').replace(/\s+/g, '');
  if (body.length === 0 || body.length % 4 !== 0 || !BASE64.test(body)) {
    throw new ApiError('INVALID_IMAGE', `image ${index + 1} is not base64`);
  }
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  if ((body.length / 4) * 3 - padding > MAX_IMAGE_BYTES) {
    throw new ApiError(
      'INVALID_IMAGE',
      `image ${index + 1} is larger than ${MAX_IMAGE_BYTES / (1024 * 1024)} MB`,
    );
  }
  return body;
}

/** Only files uploaded to `sessionId` whose recorded path is the path given are accepted. */
async function checkFiles(
  sessionId: string,
  files: AttachedFile[],
  store: SessionFiles,
): Promise<AttachedFile[]> {
  const checked: AttachedFile[] = [];
  for (const file of files) {
    const record = await store.find(sessionId, file.name);
    if (!record || resolve(record.path) !== resolve(file.path)) {
      throw new ApiError('FILE_NOT_IN_SESSION', `"${file.name}" was not uploaded to this session`);
    }
    checked.push({ name: record.name, path: record.path });
  }
  return checked;
}

/**
 * The run input of a chat message. `refuseImages`, when given, is asked before anything else
 * happens whenever the message carries images, and throws to refuse them (a text-only model).
 */
export async function userMessageInput(
  sessionId: string,
  message: ClientMessage,
  store: SessionFiles,
  refuseImages?: (sessionId: string) => Promise<void>,
): Promise<RunInput> {
  const images = (message.images ?? []).map(normaliseImage);
  if (images.length > 0) await refuseImages?.(sessionId);
  const files = await checkFiles(sessionId, message.files ?? [], store);
  const content = message.content.trim();
  if (content === '' && images.length === 0 && files.length === 0) {
    throw new ApiError('BAD_REQUEST', 'the message is empty');
  }
  const input: RunInput = { content: message.content, trigger: 'user' };
  if (images.length > 0) input.images = images;
  if (files.length > 0) input.files = files;
  return input;
}

/** A submitted form reaches the LLM as JSON but is not shown as a chat bubble. */
export function formSubmitInput(formId: string, values: Record<string, unknown>): RunInput {
  return {
    content: JSON.stringify({ form_id: formId, values }),
    trigger: 'form',
    contextOnly: true,
    formSubmit: { form_id: formId, values },
  };
}
