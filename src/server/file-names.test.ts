import { describe, expect, it } from 'vitest';
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
});
