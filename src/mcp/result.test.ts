/**
 * Turning MCP results into tool results: the navi-ui envelope read whole, several images for the
 * model within one budget, binary files named; and the returned files kept as session files
 * (real SQLite store, real files).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { testSettings } from '../config/settings.js';
import { FILE_NAME_META_KEY } from '../protocol/mcp-meta.js';
import { createSqliteStores } from '../store/sqlite/index.js';
import { truncate } from '../tools/result.js';
import { SessionFileWriter } from '../tools/session-file-writer.js';
import { tempDir } from './fixtures/harness.js';
import { convertCallResult } from './result.js';
import { keepResultFiles, MAX_RESULT_FILES } from './result-files.js';

const options = { maxChars: 1000, maxImageChars: 100, naviUi: false };
const png = (data: string, name?: string) => ({
  type: 'image' as const,
  data,
  mimeType: 'image/png',
  ...(name ? { _meta: { [FILE_NAME_META_KEY]: name } } : {}),
});
/** A PNG as far as its first bytes go, then `tag`. */
const picture = (tag: string) =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(tag)]).toString(
    'base64',
  );
const stl = (blob: string, uri = 'navi-3d://files/cube.stl', name?: string) => ({
  type: 'resource' as const,
  resource: { uri, mimeType: 'model/stl', blob },
  ...(name ? { _meta: { [FILE_NAME_META_KEY]: name } } : {}),
});

describe('the navi-ui envelope', () => {
  const envelope = (output: string, uiComponent: unknown) =>
    JSON.stringify({ output, metadata: { ui_component: uiComponent } });
  const table = (payload: unknown) => ({ component: 'table', payload });
  const asNaviUi = (text: string) =>
    convertCallResult({ content: [{ type: 'text', text }] }, { ...options, naviUi: true });

  it('is read whole even when it is longer than the text cap', () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ n: i }));
    const payload = { columns: [{ key: 'n', label: 'N', type: 'number' }], rows };
    const result = asNaviUi(envelope('Table rendered', table(payload)));
    expect(result).toEqual({
      success: true,
      output: 'Table rendered',
      metadata: {
        ui_component: table({ ...payload, sortable: true, filterable: true }),
      },
    });
  });

  it('makes an Error: output a failure, and drops a component too large to keep', () => {
    const failed = convertCallResult(
      {
        content: [{ type: 'text', text: JSON.stringify({ output: 'Error: payload.rows: bad' }) }],
        isError: true,
      },
      { ...options, naviUi: true },
    );
    expect(failed).toMatchObject({ success: false, error: 'Error: payload.rows: bad' });
    // Valid, but 1000 rows of 2500 characters each.
    const rows = Array.from({ length: 1000 }, () => ['x'.repeat(2500)]);
    const huge = asNaviUi(envelope('ok', table({ columns: [{ key: 'a', label: 'A' }], rows })));
    expect(huge.metadata).toBeUndefined();
    expect(huge.output).toMatch(/^ok\n\[UI component of \d+ characters left out: too large to keep\]$/);
  });

  it('keeps only a component the client can draw, and tells the model why another was left out', () => {
    const bad = asNaviUi(
      envelope('Drawn', table({ columns: [{ key: 'a b', label: '' }], rows: [], onclick: 'x' })),
    );
    expect(bad.metadata).toBeUndefined();
    expect(bad.success).toBe(true);
    expect(bad.output).toBe(
      'Drawn\n[UI component left out, it is not valid: ' +
        'payload.columns[0].key: must use only letters, digits, "_" and "-" (such as "due_date"); ' +
        'payload.columns[0].label: must not be empty; payload: Unrecognized key: "onclick"]',
    );
    expect(asNaviUi(envelope('x', { component: 'iframe', payload: {} })).output).toBe(
      'x\n[UI component left out, it is not valid: component_name: "iframe" is not a component; use one of card_grid, form, table]',
    );
    for (const shape of ['<b>hi</b>', ['table', {}], { payload: {} }, null]) {
      const result = asNaviUi(envelope('x', shape));
      expect(result.metadata).toBeUndefined();
      expect(result.output).toBe(
        'x\n[UI component left out: it must be an object with "component" and "payload"]',
      );
    }
    const deep = `{"output":"x","metadata":{"ui_component":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
    expect(asNaviUi(deep)).toEqual({
      success: true,
      output: 'x\n[UI component left out: it is nested too deeply to keep]',
    });
  });

  it('is not unwrapped for other servers', () => {
    const text = envelope('Table rendered', table({}));
    expect(convertCallResult({ content: [{ type: 'text', text }] }, options).output).toBe(text);
  });
});

describe('structured content', () => {
  it('is kept when small, and a hostile one nested too deeply is a note, not a failed call', () => {
    expect(convertCallResult({ content: [], structuredContent: { a: 1 } }, options)).toEqual({
      success: true,
      output: '{"a":1}',
      metadata: { structured_content: { a: 1 } },
    });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 200_000; i++) deep = { d: deep };
    expect(
      convertCallResult({ content: [{ type: 'text', text: 'ok' }], structuredContent: deep }, options),
    ).toEqual({
      success: true,
      output: 'ok\n[structured content left out: it is nested too deeply to keep]',
    });
  });
});

describe('images and files of a result', () => {
  it('shows the model up to four images within one budget and names the rest', () => {
    const [a, b, c, d, e, f] = ['a', 'b', 'c'.repeat(70), 'd', 'e', 'f'].map(picture);
    const result = convertCallResult(
      { content: [png(a!, 'a-front.png'), png(b!), png(c!), png(d!), png(e!), png(f!)] },
      options,
    );
    expect(result.metadata).toEqual({
      is_image: true,
      base64: a,
      mime_type: 'image/png',
      more_images: [b, d, e],
    });
    expect(result.output.split('\n')).toEqual([
      '[image "a-front.png": image/png, 9 bytes]',
      '[image: image/png, 9 bytes]',
      '[image (image/png, 104 base64 characters) dropped: over the 100-character limit for the images of one result]',
      '[image: image/png, 9 bytes]',
      '[image: image/png, 9 bytes]',
      '[image (image/png) not shown to the model: at most 4 images are]',
    ]);
  });

  it('shows the model only PNG, JPEG, GIF and WebP pictures, typed by their bytes, whatever the MIME type says', () => {
    const bytes = (...parts: (string | number[])[]) =>
      Buffer.concat(
        parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))),
      ).toString('base64');
    const jpeg = bytes([0xff, 0xd8, 0xff, 0xe0], 'JFIF');
    const gif = bytes('GIF89a', [1, 0]);
    const webp = bytes('RIFF', [4, 0, 0, 0], 'WEBPVP8 ');
    const svg = bytes('<svg xmlns="http://www.w3.org/2000/svg"/>');
    const result = convertCallResult(
      {
        content: [
          { type: 'image', data: svg, mimeType: 'image/png' },
          { type: 'image', data: '', mimeType: 'image/png' },
          { type: 'image', data: bytes('RIFF', [4, 0, 0, 0], 'WAVE'), mimeType: 'image/webp' },
          // The type the bytes show is kept, not a claim the server makes as long as it likes.
          { type: 'image', data: jpeg, mimeType: 'x'.repeat(100_000) },
          { type: 'image', data: gif, mimeType: 'image/gif' },
          { type: 'image', data: webp, mimeType: 'image/webp' },
        ],
      },
      options,
    );
    expect(result.metadata).toMatchObject({
      base64: jpeg,
      mime_type: 'image/jpeg',
      more_images: [gif, webp],
    });
    expect(result.output.split('\n').slice(0, 3)).toEqual([
      '[image (image/png) not shown to the model: it is not a PNG, JPEG, GIF or WebP picture]',
      '[image (image/png) not shown to the model: it is not a PNG, JPEG, GIF or WebP picture]',
      '[image (image/webp) not shown to the model: it is not a PNG, JPEG, GIF or WebP picture]',
    ]);
    const none = convertCallResult(
      { content: [{ type: 'image', data: svg, mimeType: 'image/svg+xml' }] },
      options,
    );
    expect(none.metadata).toBeUndefined();
  });

  it('names a binary resource by its _meta name, else by its address', () => {
    const result = convertCallResult(
      {
        content: [stl('AAAA', 'navi-3d://files/cube.stl', 'bracket.stl'), stl('AAAAAAAA', 'x://a/b%20c.stl')],
      },
      options,
    );
    expect(result.output).toBe(
      '[file "bracket.stl" (model/stl, 3 bytes)]\n[file "b c.stl" (model/stl, 6 bytes)]',
    );
  });
});

describe('keepResultFiles', () => {
  const tmp = tempDir('result-files');
  const stores = createSqliteStores(join(tmp.dir, 'navi.db'));
  const settings = testSettings({
    SESSION_FILES_DIR: join(tmp.dir, 'files'),
    SESSION_FILES_MAX_SIZE_MB: '1',
  });
  const writer = new SessionFileWriter(settings, stores.files);
  const ctx = { sessionId: 's1', signal: new AbortController().signal, isSubagent: false };
  afterAll(() => {
    stores.close();
    tmp.remove();
  });

  const raw: CallToolResult = {
    content: [
      { type: 'text', text: 'Compiled.' },
      stl(Buffer.from('solid a').toString('base64'), 'navi-3d://files/model.stl', 'cube.stl'),
      png(picture('front'), '../../etc/cube-front.png'),
    ],
  };

  it('saves every image and binary resource under its safe name and lists them', async () => {
    const kept = await keepResultFiles(convertCallResult(raw, options), raw, 'compile_scad', writer, ctx);
    const files = kept.metadata?.shared_files as {
      name: string;
      url: string;
      mime_type: string;
      size: number;
    }[];
    expect(files.map((f) => [f.name, f.mime_type, f.size])).toEqual([
      ['cube.stl', 'model/stl', 7],
      ['etc_cube-front.png', 'image/png', 13],
    ]);
    expect(files[0]?.url).toBe('/sessions/s1/files/cube.stl');
    expect(readFileSync(join(tmp.dir, 'files', 's1', 'cube.stl'), 'utf8')).toBe('solid a');
    expect(await stores.files.get('s1', 'etc_cube-front.png')).toMatchObject({ size: 13 });
    expect(kept.output).toContain(
      '[Saved "cube.stl" as the session file "cube.stl" (/sessions/s1/files/cube.stl).]',
    );
    expect(kept.metadata).toMatchObject({ is_image: true });

    // The same names again: numbered, never overwritten.
    const again = await keepResultFiles(convertCallResult(raw, options), raw, 'compile_scad', writer, ctx);
    expect((again.metadata?.shared_files as { name: string }[] | undefined)?.map((f) => f.name)).toEqual([
      'cube (1).stl',
      'etc_cube-front (1).png',
    ]);
  });

  it('saves a file whose asked-for name is too long in bytes, cut whole at a character', async () => {
    const named: CallToolResult = {
      content: [
        stl('AAAA', 'x://a.stl', `${'模'.repeat(300)}.stl`),
        png(picture('x'), `a${'😀'.repeat(100)}.png`),
      ],
    };
    const kept = await keepResultFiles(convertCallResult(named, options), named, 't', writer, ctx);
    const files = kept.metadata?.shared_files as { name: string }[];
    expect(files).toHaveLength(2);
    const lone = `half \uD83D of a pair.stl`;
    const broken: CallToolResult = { content: [stl('AAAA', 'x://a.stl', lone)] };
    const saved = await keepResultFiles(convertCallResult(broken, options), broken, 't', writer, ctx);
    expect(saved.metadata?.shared_files).toMatchObject([
      { name: 'half _ of a pair.stl', url: '/sessions/s1/files/half%20_%20of%20a%20pair.stl' },
    ]);
    for (const [file, ext] of [
      [files[0], '.stl'],
      [files[1], '.png'],
    ] as const) {
      expect(file?.name.endsWith(ext)).toBe(true);
      // With the u flag a lone surrogate is the only thing in this range: a pair is one code point.
      expect(file?.name).not.toMatch(/[\uD800-\uDFFF]/u);
      expect(Buffer.byteLength(file?.name ?? '')).toBeLessThanOrEqual(240);
      expect(existsSync(join(tmp.dir, 'files', 's1', file?.name ?? ''))).toBe(true);
    }
  });

  it('names the saved files before a text long enough to be truncated', async () => {
    const long: CallToolResult = {
      content: [
        { type: 'text', text: 'page text '.repeat(500) },
        png(Buffer.from('x').toString('base64'), 'shot.png'),
      ],
    };
    const kept = await keepResultFiles(
      convertCallResult(long, { ...options, maxChars: 10_000 }),
      long,
      't',
      writer,
      ctx,
    );
    const seen = truncate(kept.output, 1000);
    expect(seen).toMatch(/^\[Saved "shot\.png" as the session file "shot(?: \(\d+\))?\.png"/);
    expect(seen).toContain(
      "[content_publish with a session file's name shows it to the user.]\npage text page text",
    );
  });

  it('names an unnamed file after the tool and the time', async () => {
    const unnamed: CallToolResult = { content: [png(Buffer.from('x').toString('base64'))] };
    const kept = await keepResultFiles(
      convertCallResult(unnamed, options),
      unnamed,
      'web_view',
      writer,
      ctx,
      new Date('2026-11-25T10:20:30Z'),
    );
    expect(kept.metadata?.shared_files).toMatchObject([{ name: 'web_view-2026-11-25T10-20-30.png' }]);
  });

  it("makes a safe name of a hostile server's tool name for an unnamed file", async () => {
    const unnamed: CallToolResult = {
      content: [stl(Buffer.from('solid a').toString('base64'), 'x://models/')],
    };
    const when = new Date('2026-11-25T10:20:30Z');
    const hostile = await keepResultFiles(
      convertCallResult(unnamed, options),
      unnamed,
      '../../.hidden\nname',
      writer,
      ctx,
      when,
    );
    expect(hostile.metadata?.shared_files).toMatchObject([{ name: 'hidden_name-2026-11-25T10-20-30.stl' }]);
    const long = await keepResultFiles(
      convertCallResult(unnamed, options),
      unnamed,
      't'.repeat(5000),
      writer,
      ctx,
      when,
    );
    const file = (long.metadata?.shared_files as { name: string }[] | undefined)?.[0];
    expect(file?.name).toMatch(/^t{100,}\.stl$/);
    expect(readFileSync(join(tmp.dir, 'files', 's1', file?.name ?? ''), 'utf8')).toBe('solid a');
  });

  it('keeps at most MAX_RESULT_FILES files of one result and says how many it left', async () => {
    const many: CallToolResult = {
      content: Array.from({ length: MAX_RESULT_FILES + 12 }, (_, i) =>
        i % 2 === 0 ? png('AAAA', `v${i}.png`) : stl('AAAA', `x://m/m${i}.stl`),
      ),
    };
    const kept = await keepResultFiles(convertCallResult(many, options), many, 't', writer, {
      ...ctx,
      sessionId: 'many',
    });
    expect(kept.metadata?.shared_files).toHaveLength(MAX_RESULT_FILES);
    expect(readdirSync(join(tmp.dir, 'files', 'many'))).toHaveLength(MAX_RESULT_FILES);
    expect(await stores.files.list('many')).toHaveLength(MAX_RESULT_FILES);
    expect(kept.output).toContain(
      `[12 more file(s) of the result were not saved: at most ${MAX_RESULT_FILES} are kept from one call]`,
    );
  });

  it('keeps nothing of a failed call or a subagent, and notes a file over the size limit', async () => {
    const failed = { ...raw, isError: true };
    expect(
      (await keepResultFiles(convertCallResult(failed, options), failed, 't', writer, ctx)).metadata
        ?.shared_files,
    ).toBeUndefined();
    const sub = await keepResultFiles(convertCallResult(raw, options), raw, 't', writer, {
      ...ctx,
      isSubagent: true,
    });
    expect(sub.metadata?.shared_files).toBeUndefined();
    const big: CallToolResult = {
      content: [stl(Buffer.alloc(1024 * 1024 + 1).toString('base64'), 'x://big.stl')],
    };
    const kept = await keepResultFiles(
      convertCallResult(big, { ...options, maxChars: 100 }),
      big,
      't',
      writer,
      ctx,
    );
    expect(kept.success).toBe(true);
    expect(kept.metadata?.shared_files).toBeUndefined();
    expect(kept.output).toContain(
      '"big.stl" could not be saved as a session file: The file is 1048577 bytes, over the session file limit of 1 MB',
    );
  });
});
