/**
 * The text of a PDF, page by page, read with pdf.js (its legacy build, the one meant for Node).
 * pdf.js loads on the first PDF only. It runs without eval and without fonts: only text is wanted.
 */

export interface PdfText {
  /** Pages separated by "--- page N ---" lines. */
  text: string;
  title?: string;
  pages: number;
  /** Pages whose text was read (fewer than `pages` when a limit stopped the reading). */
  pagesRead: number;
}

export interface PdfLimits {
  /** Stop after this many characters of text. */
  maxChars: number;
  maxPages: number;
  /** Stops between pages: a long PDF cannot outlive the call. */
  signal?: AbortSignal;
}

/** Why a PDF could not be read, in words for the model; pdf.js's own message otherwise. */
function failure(err: unknown): Error {
  const name = (err as Error)?.name;
  if (name === 'PasswordException')
    return new Error('The PDF is protected by a password, so its text cannot be read.');
  if (name === 'InvalidPDFException')
    return new Error('The file is not a readable PDF (its structure is broken or it was cut short).');
  return new Error(`The PDF could not be read: ${(err as Error)?.message ?? String(err)}`);
}

/** Reads the text of `data`. Throws an Error with a plain message when the PDF cannot be read. */
export async function pdfToText(data: Uint8Array, limits: PdfLimits): Promise<PdfText> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  // pdf.js takes ownership of the buffer it is given; hand it a copy.
  const task = pdfjs.getDocument({
    data: new Uint8Array(data),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  let doc: Awaited<typeof task.promise>;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy();
    throw failure(err);
  }
  try {
    const info = (await doc.getMetadata().catch(() => undefined))?.info as { Title?: unknown } | undefined;
    const title = typeof info?.Title === 'string' && info.Title.trim() ? info.Title.trim() : undefined;
    const parts: string[] = [];
    let size = 0;
    let pagesRead = 0;
    const last = Math.min(doc.numPages, limits.maxPages);
    for (let n = 1; n <= last && size < limits.maxChars; n++) {
      limits.signal?.throwIfAborted();
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      const lines = content.items
        .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : ''))
        .join('')
        .replace(/[ \t]+\n/g, '\n')
        .trim();
      page.cleanup();
      const part = `--- page ${n} ---\n${lines}`;
      parts.push(part);
      size += part.length;
      pagesRead = n;
    }
    let text = parts.join('\n\n');
    if (text.length > limits.maxChars) text = text.slice(0, limits.maxChars);
    return { text, ...(title ? { title } : {}), pages: doc.numPages, pagesRead };
  } catch (err) {
    if (limits.signal?.aborted) throw err;
    throw failure(err);
  } finally {
    await doc.destroy();
  }
}
