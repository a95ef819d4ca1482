import { describe, expect, it } from 'vitest';
import { mimeTypeOf } from '../machine/fs/mime.js';
import { contentTypeFor, downloadHeaders, numberedName, sanitiseFileName } from './file-names.js';

describe('file names', () => {
  it('keeps the last segment, hides nothing, refuses dots', () => {
    expect(sanitiseFileName('../../etc/passwd')).toBe('passwd');
    expect(sanitiseFileName('C:\\Users\\me\\a.txt')).toBe('a.txt');
    expect(sanitiseFileName('.bashrc')).toBe('_bashrc');
    expect(sanitiseFileName('a\u0000b')).toBe('a_b');
    expect(sanitiseFileName('..')).toBeUndefined();
    expect(sanitiseFileName('dir/')).toBeUndefined();
    expect(sanitiseFileName(`${'x'.repeat(300)}.pdf`)).toMatch(/^x{196}\.pdf$/);
  });

  it('numbers collisions before the extension', () => {
    expect(numberedName('a.txt', 0)).toBe('a.txt');
    expect(numberedName('a.txt', 2)).toBe('a (2).txt');
    expect(numberedName('README', 1)).toBe('README (1)');
  });

  it('never lets an upload run script', () => {
    expect(contentTypeFor('x.html', 'image/png')).toBe('text/html');
    expect(contentTypeFor('x.bin', 'text/html; charset=x')).toBe('application/octet-stream');
    const html = downloadHeaders('x.html', 'text/html');
    expect(html['content-disposition']).toMatch(/^attachment/);
    expect(html['content-security-policy']).toContain('sandbox');
    expect(downloadHeaders('é "q".png', 'image/png')['content-disposition']).toBe(
      `inline; filename="_ _q_.png"; filename*=UTF-8''%C3%A9%20%22q%22.png`,
    );
  });

  it('types uploads from the same table as shared files, source code as text', () => {
    for (const name of ['a.py', 'a.ts', 'a.yaml', 'a.svg', 'a.html', 'a.ogg', 'a.docx', 'a.sh', 'a.scad']) {
      expect(contentTypeFor(name, 'image/png'), name).toBe(mimeTypeOf(name));
    }
    expect(mimeTypeOf('main.ts')).toBe('text/plain');
    expect(mimeTypeOf('lib.rs')).toBe('text/plain');
    expect(mimeTypeOf('ci.YML')).toBe('text/yaml');
    expect(mimeTypeOf('Makefile')).toBe('application/octet-stream');
    expect(contentTypeFor('Makefile', 'text/x-makefile')).toBe('text/x-makefile');
    expect(downloadHeaders('ci.yml', 'text/yaml')['content-disposition']).toMatch(/^inline/);
    expect(downloadHeaders('x.svg', mimeTypeOf('x.svg'))['content-disposition']).toMatch(/^attachment/);
    expect(downloadHeaders('x.sh', mimeTypeOf('x.sh'))['content-disposition']).toMatch(/^attachment/);
  });
});
