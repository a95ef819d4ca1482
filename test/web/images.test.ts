/**
 * Images in the composer (web/src/lib/images.ts, image-drafts.ts): which files go as images,
 * the size they are sent with, the budget of one message, and what the composer knows about the
 * model seeing them. The canvas work itself runs in the browser test (test/e2e/webmedia.test.ts);
 * here `prepare` is a stand-in that returns what a canvas would.
 */
import { describe, expect, it } from 'vitest';
import type { ChatEntry } from '../../web/src/lib/entries.js';
import { ImageDrafts, withdrawRefusedMessage } from '../../web/src/lib/image-drafts.js';
import {
  decodedBytes,
  describeBytes,
  fitWithin,
  ImageProblem,
  imageTypeOf,
  keepsOriginal,
  MAX_IMAGE_BYTES,
  MAX_MESSAGE_IMAGE_CHARS,
  type PreparedImage,
  sessionModelKey,
  textOnlyNote,
  type VisionStatus,
} from '../../web/src/lib/images.js';

describe('imageTypeOf', () => {
  it('takes PNG, JPEG, GIF and WebP by MIME type, whatever the name says', () => {
    expect(imageTypeOf({ type: 'image/png', name: 'x.txt' })).toBe('image/png');
    expect(imageTypeOf({ type: 'IMAGE/JPEG', name: 'a' })).toBe('image/jpeg');
    expect(imageTypeOf({ type: 'image/gif', name: 'a.gif' })).toBe('image/gif');
    expect(imageTypeOf({ type: 'image/webp', name: '' })).toBe('image/webp');
  });

  it('falls back on the extension only when the browser gives no type', () => {
    expect(imageTypeOf({ type: '', name: 'photo.JPG' })).toBe('image/jpeg');
    expect(imageTypeOf({ type: 'application/octet-stream', name: 'shot.webp' })).toBe('image/webp');
    expect(imageTypeOf({ type: '', name: 'notes.txt' })).toBeNull();
    expect(imageTypeOf({ type: '', name: 'no-extension' })).toBeNull();
  });

  it('leaves other images and hostile names to the file upload', () => {
    expect(imageTypeOf({ type: 'image/svg+xml', name: 'logo.svg' })).toBeNull();
    expect(imageTypeOf({ type: 'image/heic', name: 'IMG_1.heic' })).toBeNull();
    expect(imageTypeOf({ type: 'text/html', name: 'evil.png' })).toBeNull();
    expect(imageTypeOf({ type: '', name: '../../etc/passwd.png.exe' })).toBeNull();
    expect(imageTypeOf({ type: '', name: '__proto__' })).toBeNull();
    expect(imageTypeOf({ type: '', name: 'x.constructor' })).toBeNull();
  });
});

describe('fitWithin', () => {
  it('keeps an image that fits', () => {
    expect(fitWithin(2048, 1000)).toEqual({ width: 2048, height: 1000, scaled: false });
    expect(fitWithin(1, 1)).toEqual({ width: 1, height: 1, scaled: false });
  });

  it('shrinks the longest side to 2048 and keeps the proportions', () => {
    expect(fitWithin(4032, 3024)).toEqual({ width: 2048, height: 1536, scaled: true });
    expect(fitWithin(1000, 6000)).toEqual({ width: 341, height: 2048, scaled: true });
  });

  it('never makes a side zero, even for a sliver', () => {
    expect(fitWithin(100_000, 3)).toEqual({ width: 2048, height: 1, scaled: true });
  });

  it('answers for an empty image without dividing by zero', () => {
    expect(fitWithin(0, 0)).toEqual({ width: 0, height: 0, scaled: false });
  });
});

describe('keepsOriginal', () => {
  const fits = { width: 800, height: 600, scaled: false };
  it('sends a small PNG or JPEG as it is', () => {
    expect(keepsOriginal('image/png', fits, 200_000)).toBe(true);
    expect(keepsOriginal('image/jpeg', fits, MAX_IMAGE_BYTES)).toBe(true);
  });
  it('draws again what is too large, shrunk, or not PNG/JPEG', () => {
    expect(keepsOriginal('image/png', fits, MAX_IMAGE_BYTES + 1)).toBe(false);
    expect(keepsOriginal('image/png', { ...fits, scaled: true }, 1000)).toBe(false);
    expect(keepsOriginal('image/gif', fits, 1000)).toBe(false);
    expect(keepsOriginal('image/webp', fits, 1000)).toBe(false);
  });
});

describe('sizes', () => {
  it('counts decoded bytes of a data URI or bare base64', () => {
    const bytes = Buffer.from('hello world!');
    const base64 = bytes.toString('base64');
    expect(decodedBytes(base64)).toBe(bytes.length);
    expect(decodedBytes(`data:image/png;base64,${base64}`)).toBe(bytes.length);
    expect(decodedBytes(Buffer.from('a').toString('base64'))).toBe(1);
    expect(decodedBytes(Buffer.from('ab').toString('base64'))).toBe(2);
  });

  it('describes sizes the way a person reads them', () => {
    expect(describeBytes(820 * 1024)).toBe('820 KB');
    expect(describeBytes(10)).toBe('1 KB');
    expect(describeBytes(1.45 * 1024 * 1024)).toBe('1.4 MB');
  });

  it('keeps all images of a message well under the 32 MB frame the server accepts', () => {
    expect(MAX_MESSAGE_IMAGE_CHARS).toBeLessThan(32 * 1024 * 1024 - 1024 * 1024);
  });
});

describe('sessionModelKey', () => {
  it('is null while the default model answers, and names a chosen or profile model', () => {
    expect(sessionModelKey(null, undefined)).toBeNull();
    expect(sessionModelKey(null, { model: null, llm_backend: null })).toBeNull();
    expect(sessionModelKey({ backend: 'ollama', model: 'llava' }, undefined)).toBe('ollama/llava');
    expect(sessionModelKey(null, { model: 'qwen3', llm_backend: null })).toBe('/qwen3');
    expect(sessionModelKey(null, { model: null, llm_backend: 'openai' })).toBe('openai/');
  });
});

describe('textOnlyNote', () => {
  const status = (vision: boolean | null): VisionStatus => ({
    default_model: 'gemma3:1b',
    capabilities: { vision },
  });
  it('speaks only when the model is known to read text only', () => {
    expect(textOnlyNote(status(false))).toBe('gemma3:1b reads text only, so it cannot see images.');
    expect(textOnlyNote(status(true))).toBeNull();
    expect(textOnlyNote(status(null))).toBeNull();
    expect(textOnlyNote({ default_model: '', capabilities: null })).toBeNull();
    expect(textOnlyNote({ default_model: '', capabilities: { vision: false } })).toMatch(/^The model reads/);
  });
});

function prepared(name: string, chars = 100): PreparedImage {
  return {
    dataUri: `data:image/png;base64,${'A'.repeat(chars)}`,
    name,
    width: 10,
    height: 10,
    file: new File([new Uint8Array([1, 2, 3])], name, { type: 'image/png' }),
  };
}

function drafts(options: { vision?: boolean | null; prepare?: (file: File) => Promise<PreparedImage> } = {}) {
  const attached: string[] = [];
  let statusCalls = 0;
  const d = new ImageDrafts({
    status: async () => {
      statusCalls += 1;
      return { default_model: 'text-model', capabilities: { vision: options.vision ?? true } };
    },
    attachAsFiles: (files) => attached.push(...files.map((f) => f.name)),
    prepare: options.prepare ?? (async (file) => prepared(file.name)),
  });
  return { d, attached, statusCalls: () => statusCalls };
}

const file = (name: string) => new File([new Uint8Array([1])], name, { type: 'image/png' });

describe('ImageDrafts', () => {
  it('adds prepared images and hands their data URIs over once', async () => {
    const { d } = drafts();
    await d.add(file('a.png'));
    await d.add(file('b.png'));
    expect(d.state.items.map((i) => i.name)).toEqual(['a.png', 'b.png']);
    expect(d.state.preparing).toBe(0);
    const sent = d.take();
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^data:image\/png;base64,/);
    expect(d.state.items).toEqual([]);
  });

  it('keeps the order the images were added in, whichever is ready first', async () => {
    const finish = new Map<string, () => void>();
    const { d } = drafts({
      prepare: (f) => new Promise((resolve) => finish.set(f.name, () => resolve(prepared(f.name)))),
    });
    const adding = [d.add(file('big.jpg')), d.add(file('small.gif')), d.add(file('mid.webp'))];
    finish.get('small.gif')?.();
    finish.get('mid.webp')?.();
    finish.get('big.jpg')?.();
    await Promise.all(adding);
    expect(d.state.items.map((i) => i.name)).toEqual(['big.jpg', 'small.gif', 'mid.webp']);
  });

  it('blocks sending while an image is still being prepared', async () => {
    let finish: () => void = () => {};
    const { d } = drafts({
      prepare: (f) =>
        new Promise((resolve) => {
          finish = () => resolve(prepared(f.name));
        }),
    });
    const adding = d.add(file('slow.png'));
    expect(d.blocksSending).toBe(true);
    finish();
    await adding;
    expect(d.blocksSending).toBe(false);
  });

  it('says plainly when the default model reads text only, and sends nothing until the person chooses', async () => {
    const { d, attached } = drafts({ vision: false });
    d.setModel(null);
    await d.add(file('chart.png'));
    await d.checkVision();
    expect(d.state.textOnly).toBe('text-model reads text only, so it cannot see images.');
    expect(d.blocksSending).toBe(true);
    d.attachAllAsFiles();
    expect(attached).toEqual(['chart.png']);
    expect(d.state.items).toEqual([]);
    expect(d.blocksSending).toBe(false);
  });

  it('does not guess about a model other than the default: the server decides', async () => {
    const { d, statusCalls } = drafts({ vision: false });
    d.setModel('ollama/llava');
    await d.add(file('a.png'));
    await d.checkVision();
    expect(statusCalls()).toBe(0);
    expect(d.state.textOnly).toBeNull();
  });

  it('forgets what it knew when the model changes', async () => {
    const { d } = drafts({ vision: false });
    await d.add(file('a.png'));
    await d.checkVision();
    expect(d.state.textOnly).not.toBeNull();
    d.setModel('ollama/llava');
    expect(d.state.textOnly).toBeNull();
  });

  it('gives the images back when the server refuses them, with its words', async () => {
    const { d } = drafts({ vision: null });
    await d.add(file('a.png'));
    d.take();
    expect(d.refused('llama3 (ollama) reads text only (ollama /api/show)')).toBe(true);
    expect(d.state.items.map((i) => i.name)).toEqual(['a.png']);
    expect(d.state.textOnly).toContain('reads text only');
    // A second refusal has nothing more to give back: it is not about this draft.
    expect(d.refused('again')).toBe(false);
    expect(d.state.items).toHaveLength(1);
  });

  it('lets go of a message once its run started: a later refusal is someone else’s', async () => {
    const { d } = drafts({ vision: null });
    await d.add(file('a.png'));
    d.take();
    d.accepted();
    expect(d.refused('reads text only')).toBe(false);
    expect(d.state.items).toEqual([]);
    expect(d.state.textOnly).toBeNull();
  });

  it('attaches an image it cannot read as a file, and says so', async () => {
    const { d, attached } = drafts({
      prepare: async (f) => {
        throw new ImageProblem(`“${f.name}” could not be read as an image.`, true);
      },
    });
    await d.add(file('broken.png'));
    expect(attached).toEqual(['broken.png']);
    expect(d.state.items).toEqual([]);
    expect(d.state.note).toBe(
      '“broken.png” could not be read as an image. It is attached as a file instead.',
    );
  });

  it('says when an image is still too big, and keeps it out', async () => {
    const { d, attached } = drafts({
      prepare: async () => {
        throw new ImageProblem('“huge.png” is still 9.0 MB at 2048×2048 pixels; one image may have 8.0 MB.');
      },
    });
    await d.add(file('huge.png'));
    expect(attached).toEqual([]);
    expect(d.state.items).toEqual([]);
    expect(d.state.note).toMatch(/still 9.0 MB/);
  });

  it('keeps one message under the frame limit: an image that does not fit waits for the next', async () => {
    const big = Math.floor(MAX_MESSAGE_IMAGE_CHARS / 2) + 10;
    const { d } = drafts({ prepare: async (f) => prepared(f.name, big) });
    await d.add(file('one.png'));
    await d.add(file('two.png'));
    expect(d.state.items.map((i) => i.name)).toEqual(['one.png']);
    expect(d.state.note).toMatch(/“two.png” does not fit in this message/);
    expect(d.chars).toBeLessThanOrEqual(MAX_MESSAGE_IMAGE_CHARS);
  });
});

describe('withdrawRefusedMessage', () => {
  const user = (images: string[]): ChatEntry => ({ kind: 'user', key: 'u', text: 'look', images, files: [] });
  it('removes the newest bubble when it is a message with images', () => {
    const entries = [user([]), user(['data:image/png;base64,AAAA'])];
    withdrawRefusedMessage(entries);
    expect(entries).toHaveLength(1);
  });
  it('leaves everything else alone', () => {
    const entries: ChatEntry[] = [user(['x']), { kind: 'notice', key: 'n', text: 'hi' }];
    withdrawRefusedMessage(entries);
    expect(entries).toHaveLength(2);
    const plain = [user([])];
    withdrawRefusedMessage(plain);
    expect(plain).toHaveLength(1);
    const none: ChatEntry[] = [];
    withdrawRefusedMessage(none);
    expect(none).toEqual([]);
  });
});
