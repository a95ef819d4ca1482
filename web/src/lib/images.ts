/**
 * Images a person attaches or pastes travel in the message's `images` (base64), so the model
 * sees them, instead of as uploaded files it could only read as bytes. Before they go, they are
 * made fit to send: at most 2048 pixels on the longest side (more only costs the model time and
 * the frame room), PNG or JPEG (what every backend reads; a GIF keeps its first frame), and
 * together well under the WebSocket frame limit the server enforces.
 */
import type { ModelChoice, ProfileSummary } from '../../../src/protocol/rest.js';

/** Image types sent as images; other files (SVG, HEIC…) are uploaded as files. */
export const IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
/** The longest side an image is sent with. */
export const MAX_IMAGE_SIDE = 2048;
/** Decoded bytes one prepared image may have (the server takes 20 MB; a 2048 px JPEG is ~1 MB). */
export const MAX_IMAGE_BYTES = 8 * 1024 * 1024;
/**
 * Base64 characters all images of one message may have: the server closes frames over 32 MB,
 * and the text and JSON around the images need room too.
 */
export const MAX_MESSAGE_IMAGE_CHARS = 24 * 1024 * 1024;

const EXTENSION_TYPES: ReadonlyMap<string, string> = new Map([
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['gif', 'image/gif'],
  ['webp', 'image/webp'],
]);

/** The image type of a file, from its MIME type or (when the browser gives none) its name. */
export function imageTypeOf(file: { type: string; name: string }): string | null {
  const type = file.type.toLowerCase();
  if (IMAGE_TYPES.includes(type)) return type;
  if (type !== '' && type !== 'application/octet-stream') return null;
  const extension = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase() ?? '';
  return EXTENSION_TYPES.get(extension) ?? null;
}

export interface Fitted {
  width: number;
  height: number;
  scaled: boolean;
}

/** The size an image of `width`×`height` is sent with: its own, or shrunk to `max` on its longest side. */
export function fitWithin(width: number, height: number, max = MAX_IMAGE_SIDE): Fitted {
  const longest = Math.max(width, height);
  if (longest <= max || longest === 0) return { width, height, scaled: false };
  const ratio = max / longest;
  return {
    width: Math.max(1, Math.round(width * ratio)),
    height: Math.max(1, Math.round(height * ratio)),
    scaled: true,
  };
}

/**
 * Whether the file's own bytes can go as they are: a PNG or JPEG of a size that needs no
 * shrinking. Anything else is drawn on a canvas and encoded again.
 */
export function keepsOriginal(type: string, fitted: Fitted, bytes: number): boolean {
  return !fitted.scaled && (type === 'image/png' || type === 'image/jpeg') && bytes <= MAX_IMAGE_BYTES;
}

/** Decoded bytes of a base64 body or `data:` URI. */
export function decodedBytes(dataUri: string): number {
  const comma = dataUri.indexOf(',');
  const body = dataUri.startsWith('data:') && comma >= 0 ? dataUri.slice(comma + 1) : dataUri;
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  return Math.floor((body.length / 4) * 3) - padding;
}

/** "1.4 MB", "820 KB". */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/**
 * Identifies the model the session's next run uses, as far as the client can tell: null for the
 * default backend's default model (whose capabilities `GET /llm/status` reports), otherwise a
 * key that changes whenever the model picker or the profile changes the model.
 */
export function sessionModelKey(
  choice: ModelChoice | null,
  profile: Pick<ProfileSummary, 'model' | 'llm_backend'> | undefined,
): string | null {
  if (choice) return `${choice.backend}/${choice.model}`;
  if (profile?.model || profile?.llm_backend) return `${profile.llm_backend ?? ''}/${profile.model ?? ''}`;
  return null;
}

/** What `GET /llm/status` tells about the default model seeing images. */
export interface VisionStatus {
  default_model: string;
  capabilities: { vision: boolean | null } | null;
}

/** A plain sentence when the default model is known to read text only, else null (it does, or nobody knows). */
export function textOnlyNote(status: VisionStatus): string | null {
  if (status.capabilities?.vision !== false) return null;
  return `${status.default_model || 'The model'} reads text only, so it cannot see images.`;
}

/** An image ready to send. */
export interface PreparedImage {
  /** `data:image/png;base64,…` or `data:image/jpeg;base64,…`. */
  dataUri: string;
  name: string;
  width: number;
  height: number;
  /** The size it had before it was shrunk, when it was. */
  original?: { width: number; height: number };
  /** The file as chosen, for "attach as a file instead". */
  file: File;
}

/** Why an image cannot be sent as an image (shown to the person as it is). */
export class ImageProblem extends Error {
  constructor(
    message: string,
    /** The image could not even be decoded: attaching it as a file is the way left. */
    readonly unreadable = false,
  ) {
    super(message);
    this.name = 'ImageProblem';
  }
}

function readAsDataUri(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('unreadable image'));
    reader.readAsDataURL(blob);
  });
}

function canvasBlob(canvas: HTMLCanvasElement, type: string, quality?: number): Promise<Blob | null> {
  return new Promise((resolve) => canvas.toBlob(resolve, type, quality));
}

/** Draws the image at its sent size; `opaque` paints white under it first (JPEG has no alpha). */
function draw(bitmap: ImageBitmap, fitted: Fitted, opaque: boolean): HTMLCanvasElement {
  const canvas = document.createElement('canvas');
  canvas.width = fitted.width;
  canvas.height = fitted.height;
  const context = canvas.getContext('2d');
  if (!context) throw new ImageProblem('this browser cannot draw images');
  if (opaque) {
    context.fillStyle = '#fff';
    context.fillRect(0, 0, fitted.width, fitted.height);
  }
  context.imageSmoothingQuality = 'high';
  context.drawImage(bitmap, 0, 0, fitted.width, fitted.height);
  return canvas;
}

/**
 * Makes `file` fit to send as an image (browser only). Throws an `ImageProblem` saying what is
 * wrong when it cannot be read, or is still over the limit after shrinking.
 */
export async function prepareImage(file: File): Promise<PreparedImage> {
  const name = file.name || 'pasted image';
  const type = imageTypeOf(file) ?? file.type;
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    throw new ImageProblem(`“${name}” could not be read as an image.`, true);
  }
  try {
    const fitted = fitWithin(bitmap.width, bitmap.height);
    const original = fitted.scaled ? { width: bitmap.width, height: bitmap.height } : undefined;
    const base = {
      name,
      width: fitted.width,
      height: fitted.height,
      file,
      ...(original ? { original } : {}),
    };
    if (keepsOriginal(type, fitted, file.size)) return { ...base, dataUri: await readAsDataUri(file) };
    // A photo keeps its JPEG; a screenshot or drawing goes as PNG unless that is too large.
    let blob =
      type === 'image/jpeg'
        ? await canvasBlob(draw(bitmap, fitted, true), 'image/jpeg', 0.9)
        : await canvasBlob(draw(bitmap, fitted, false), 'image/png');
    if (blob && blob.size > MAX_IMAGE_BYTES)
      blob = await canvasBlob(draw(bitmap, fitted, true), 'image/jpeg', 0.85);
    if (!blob) throw new ImageProblem(`“${name}” could not be converted for sending.`);
    if (blob.size > MAX_IMAGE_BYTES) {
      throw new ImageProblem(
        `“${name}” is still ${describeBytes(blob.size)} at ${fitted.width}×${fitted.height} pixels; one image may have ${describeBytes(MAX_IMAGE_BYTES)}. Attach it as a file instead.`,
      );
    }
    return { ...base, dataUri: await readAsDataUri(blob) };
  } finally {
    bitmap.close();
  }
}
