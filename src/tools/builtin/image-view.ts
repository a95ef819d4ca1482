/**
 * `image_view` (docs/machine-tools.md#fetching-images-the-ssrf-guard): loads an image from a local path (inside FS_ALLOWED_PATHS) or an
 * http(s) URL (through the SSRF guard), shrinks it to at most 1024 px, converts it to JPEG and
 * returns it as base64 in `metadata` (`is_image`), which the agent injects into the context.
 */
import { constants } from 'node:fs';
import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
import { type PathGuard, PathRefusedError } from '../../machine/fs/path-guard.js';
import {
  type GuardedRequestOptions,
  guardedRequest,
  RequestRefusedError,
} from '../../machine/net/guarded-request.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

export interface ImageViewToolDeps {
  settings: Pick<Settings, 'FS_ALLOWED_PATHS' | 'HTTP_ALLOW_PRIVATE'>;
  /** Every path goes through it; the composition root passes the one guard all file tools share. */
  guard: PathGuard;
  /** Resolver override for the URL guard (tests map names to their local servers). */
  fetchOverrides?: Pick<GuardedRequestOptions, 'resolve'>;
  maxBytes?: number;
  timeoutMs?: number;
  maxSide?: number;
  /** Decompression-bomb bound: images with more pixels are refused before decoding. */
  maxInputPixels?: number;
}

/** A source this tool will not load; its message goes to the model as it is. */
class ImageRefusedError extends Error {}

const parameters = z.strictObject({
  source: z.string().describe('Local path (inside the allowed folders) or http(s) URL.'),
});

export function createImageViewTool(deps: ImageViewToolDeps): TypedTool<typeof parameters> {
  const { guard } = deps;
  const maxBytes = deps.maxBytes ?? 20 * 1024 * 1024;
  const timeoutMs = deps.timeoutMs ?? 20_000;
  const maxSide = deps.maxSide ?? 1024;
  const maxInputPixels = deps.maxInputPixels ?? 50_000_000;

  async function load(source: string, signal: AbortSignal): Promise<{ data: Buffer; label: string }> {
    if (/^https?:\/\//i.test(source)) {
      const res = await guardedRequest(source, {
        policy: deps.settings.HTTP_ALLOW_PRIVATE,
        ...deps.fetchOverrides,
        maxBytes,
        timeoutMs,
        signal,
        headers: { accept: 'image/*' },
      });
      if (res.status < 200 || res.status >= 300)
        throw new ImageRefusedError(`The server answered HTTP ${res.status} for ${res.finalUrl}.`);
      return { data: res.body, label: res.finalUrl };
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source))
      throw new ImageRefusedError('Only local paths and http(s) URLs are supported.');
    const { handle, path, stats: info } = await guard.openFile(source, constants.O_RDONLY, { signal });
    try {
      if (!info.isFile()) throw new ImageRefusedError(`${path} is not a file.`);
      if (info.size > maxBytes)
        throw new ImageRefusedError(`${path} is ${info.size} bytes, over the ${maxBytes}-byte limit.`);
      return { data: await handle.readFile(), label: path };
    } finally {
      await handle.close();
    }
  }

  return defineTool({
    name: 'image_view',
    group: 'web',
    risk: { reads: true, network: true },
    description:
      'Look at an image: a local file path or an http(s) URL. The image is shrunk to at most ' +
      `${maxSide} px, converted to JPEG and shown to you.`,
    parameters,
    async execute(params, ctx) {
      const source = params.source.trim();
      if (source === '') return fail('Parameter "source" must be a path or an http(s) URL.');
      let loaded: { data: Buffer; label: string };
      try {
        loaded = await load(source, ctx.signal);
      } catch (err) {
        if (
          err instanceof PathRefusedError ||
          err instanceof RequestRefusedError ||
          err instanceof ImageRefusedError
        )
          return fail(err.message);
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'ENOENT') return fail(`No such file: ${source}.`);
        return fail(`Could not load ${source}: ${e.message}`);
      }
      try {
        // sharp maps libvips (about 15 MB resident) as it loads: only once an image is viewed.
        const { default: sharp } = await import('sharp');
        const image = sharp(loaded.data, { limitInputPixels: maxInputPixels, failOn: 'error' });
        const meta = await image.metadata();
        const { data, info } = await image
          .rotate()
          .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
          .flatten({ background: '#ffffff' })
          .jpeg({ quality: 85 })
          .toBuffer({ resolveWithObject: true });
        const original =
          meta.width && meta.height ? `${meta.width}x${meta.height} ${meta.format ?? ''}`.trim() : 'image';
        return ok(`Image ${loaded.label} (${original}) loaded as ${info.width}x${info.height} JPEG.`, {
          is_image: true,
          base64: data.toString('base64'),
          mime_type: 'image/jpeg',
          width: info.width,
          height: info.height,
        });
      } catch (err) {
        const message = (err as Error).message;
        if (/pixel limit/i.test(message)) {
          return fail(
            `Refused: ${loaded.label} has more than ${maxInputPixels} pixels (possible decompression bomb).`,
          );
        }
        return fail(
          `${loaded.label} is not a supported or intact image (${message}). Supported: JPEG, PNG, WebP, GIF, AVIF, TIFF, SVG.`,
        );
      }
    },
  });
}
