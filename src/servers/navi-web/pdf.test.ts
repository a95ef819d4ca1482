import { describe, expect, it } from 'vitest';
import { minimalPdf } from '../../../test/support/fake-pages.js';
import { pdfToText } from './pdf.js';

const limits = { maxChars: 100_000, maxPages: 100 };

describe('pdfToText', () => {
  it('reads the text of every page, with its title', async () => {
    const pdf = minimalPdf([['Hello PDF world', 'second line'], ['Page two text']], 'Test Title');
    const out = await pdfToText(pdf, limits);
    expect(out).toMatchObject({ pages: 2, pagesRead: 2, title: 'Test Title' });
    expect(out.text).toBe('--- page 1 ---\nHello PDF world\nsecond line\n\n--- page 2 ---\nPage two text');
  });

  it('stops at the page limit and at the character limit', async () => {
    const pdf = minimalPdf(Array.from({ length: 6 }, (_, i) => [`page number ${i + 1}`]));
    const byPages = await pdfToText(pdf, { maxChars: 100_000, maxPages: 2 });
    expect(byPages).toMatchObject({ pages: 6, pagesRead: 2 });
    expect(byPages.text).not.toContain('page number 3');
    const byChars = await pdfToText(pdf, { maxChars: 40, maxPages: 100 });
    expect(byChars.text.length).toBeLessThanOrEqual(40);
    expect(byChars.pagesRead).toBeLessThan(6);
  });

  it('says plainly when the bytes are not a readable PDF', async () => {
    await expect(pdfToText(Buffer.from('%PDF-1.4\nnot really'), limits)).rejects.toThrow(
      /not a readable PDF/,
    );
    await expect(pdfToText(Buffer.alloc(0), limits)).rejects.toThrow(/PDF/);
  });

  it('stops when its signal aborts', async () => {
    const pdf = minimalPdf([['a'], ['b']]);
    await expect(pdfToText(pdf, { ...limits, signal: AbortSignal.abort() })).rejects.toThrow();
  });
});
