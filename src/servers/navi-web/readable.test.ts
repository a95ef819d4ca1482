import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeText, documentKind, pageMarkdown, readablePage } from './readable.js';

const article = readFileSync(join(import.meta.dirname, '../../../test/fixtures/pages/article.html'), 'utf8');

describe('readablePage', () => {
  it('keeps the article and leaves menus, ads and the cookie banner behind', async () => {
    const page = await readablePage(article, 'https://news.example/2024/lighthouses');
    expect(page.article).toBe(true);
    expect(page.title).toBe('How Lighthouses Kept Their Lamps Burning');
    expect(page.markdown).toContain('trim the wicks, polish the great lenses');
    expect(page.markdown).toContain('Automation arrived in the twentieth century');
    for (const boilerplate of [
      'We use cookies',
      'Accept all cookies',
      'ADVERT',
      'Subscribe now',
      'Copyright',
    ])
      expect(page.markdown).not.toContain(boilerplate);
  });

  it('numbers the links with absolute URLs and points into the list from the text', async () => {
    const page = await readablePage(article, 'https://news.example/2024/lighthouses');
    const urls = page.links.map((l) => l.url);
    expect(urls).toContain('https://news.example/history/fresnel');
    expect(urls).toContain('https://archive.example/logbooks');
    const n = urls.indexOf('https://news.example/history/fresnel') + 1;
    expect(page.markdown).toContain(`Fresnel lens [${n}]`);
    const text = pageMarkdown(page);
    expect(text).toMatch(/^# How Lighthouses Kept Their Lamps Burning\n/);
    expect(text).toContain(`${n}. Fresnel lens: https://news.example/history/fresnel`);
  });

  it('resolves links against <base href>, drops non-http links and anchors, and caps the list', async () => {
    const links = Array.from({ length: 30 }, (_, i) => `<a href="p${i}.html">page ${i}</a>`).join(' ');
    const html = `<html><head><title>T</title><base href="https://cdn.example/docs/"></head><body>
      <a href="javascript:alert(1)">js</a> <a href="mailto:a@b.c">mail</a> <a href="#top">top</a>
      <a href="p0.html">again</a> ${links}</body></html>`;
    const page = await readablePage(html, 'https://site.example/index.html', 10);
    expect(page.links).toHaveLength(10);
    expect(page.links[0]).toEqual({ url: 'https://cdn.example/docs/p0.html', text: 'again' });
    expect(page.links.every((l) => l.url.startsWith('https://cdn.example/docs/p'))).toBe(true);
  });

  it('converts a page without an article whole, and turns images into their alt text', async () => {
    const html =
      '<html><head><title>Short</title></head><body><p>Just a note.</p><img src="a.png" alt="a cat"><img src="data:image/png;base64,AAAA"></body></html>';
    const page = await readablePage(html, 'https://site.example/');
    expect(page.article).toBe(false);
    expect(page.markdown).toContain('Just a note.');
    expect(page.markdown).toContain('[image: a cat]');
    expect(page.markdown).not.toContain('data:image');
  });

  it('reads broken and empty HTML without throwing', async () => {
    expect(pageMarkdown(await readablePage('', 'https://site.example/'))).toContain('(untitled page)');
    const cut = `<html><body><div><p>${'word '.repeat(50)}<a href="/x">unfinished`;
    expect((await readablePage(cut, 'https://site.example/')).markdown).toContain('word word');
  });
});

describe('documentKind', () => {
  const bytes = (s: string) => Buffer.from(s, 'latin1');
  it('follows the content type', () => {
    expect(documentKind('text/html; charset=utf-8', bytes('<p>x'))).toBe('html');
    expect(documentKind('application/xhtml+xml', bytes('<html/>'))).toBe('html');
    expect(documentKind('application/pdf', bytes('anything'))).toBe('pdf');
    expect(documentKind('text/plain', bytes('x'))).toBe('text');
    expect(documentKind('application/json', bytes('{}'))).toBe('text');
    expect(documentKind('application/vnd.api+json', bytes('{}'))).toBe('text');
    expect(documentKind('image/png', bytes('\x89PNG'))).toBe('binary');
  });
  it('trusts the PDF magic number over a wrong type, but not a mention of it', () => {
    expect(documentKind('text/html', bytes('%PDF-1.7\n...'))).toBe('pdf');
    expect(documentKind('text/html', bytes('<p>A file starts with %PDF-1.7</p>'))).toBe('html');
    expect(documentKind('application/octet-stream', bytes('\n%PDF-1.4'))).toBe('pdf');
  });
  it('sniffs a missing or vague type', () => {
    expect(documentKind(undefined, bytes('  <!DOCTYPE html><html>'))).toBe('html');
    expect(documentKind('', bytes('just words'))).toBe('text');
    expect(documentKind('application/octet-stream', bytes('\x00\x01\x02binary'))).toBe('binary');
  });
});

describe('decodeText', () => {
  it('uses the declared charset, then the page <meta>, then UTF-8', () => {
    expect(decodeText(Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'text/plain; charset=iso-8859-1')).toBe('café');
    const meta = Buffer.concat([Buffer.from('<meta charset="iso-8859-15"><p>'), Buffer.from([0xa4])]);
    expect(decodeText(meta, 'text/html')).toContain('€');
    expect(decodeText(Buffer.from('café'), 'text/plain')).toBe('café');
    expect(decodeText(Buffer.from('x'), 'text/plain; charset=no-such-charset')).toBe('x');
  });
});

describe('readablePage on HTML that leaves out <html>, <head> and <body>', () => {
  it('still finds the title and the body', async () => {
    for (const html of [
      '<!doctype html><title>Plain page</title><p>Hello there.</p>',
      '<head><title>Plain page</title></head><body class="x"><p>Hello there.</p></body>',
      '<html><title>Plain page</title><meta charset="utf-8"><p>Hello there.</p></html>',
      '<title>Plain page</title><script>var a = "<p>";</script><p>Hello there.</p>',
    ]) {
      const page = await readablePage(html, 'https://site.example/');
      expect(page.title, html).toBe('Plain page');
      expect(page.markdown, html).toContain('Hello there.');
      expect(page.markdown, html).not.toContain('var a');
    }
  });
});
