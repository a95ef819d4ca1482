/**
 * Line-based unified diff of two texts, computed by jsdiff (`diff`). Line endings are
 * normalised first, so a CRLF file compared with its LF copy, or a text with and without its
 * final newline, shows no difference; `maxEdits` bounds the work when the inputs share almost
 * nothing.
 */
import { structuredPatch } from 'diff';

export class DiffTooLargeError extends Error {}

/** Splits text into lines; a final newline does not create an empty last line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export interface UnifiedDiffOptions {
  fromName: string;
  toName: string;
  /** Unchanged lines shown around each change (default 3). */
  context?: number;
  /** More differing lines than this throws DiffTooLargeError (default 4000). */
  maxEdits?: number;
}

/** Every line ends in `\n`: the diff then never needs "no newline at end of file" markers. */
function normalised(text: string): string {
  return splitLines(text)
    .map((line) => `${line}\n`)
    .join('');
}

/**
 * Unified diff of two texts; an empty string when they are equal line for line. Hunk headers
 * always carry both counts (`@@ -1,3 +1,4 @@`). Throws DiffTooLargeError past `maxEdits`.
 */
export function unifiedDiff(before: string, after: string, options: UnifiedDiffOptions): string {
  const maxEdits = options.maxEdits ?? 4000;
  const patch = structuredPatch(
    options.fromName,
    options.toName,
    normalised(before),
    normalised(after),
    undefined,
    undefined,
    { context: options.context ?? 3, maxEditLength: maxEdits },
  );
  if (patch === undefined) throw new DiffTooLargeError(`more than ${maxEdits} lines differ`);
  if (patch.hunks.length === 0) return '';
  const out = [`--- ${options.fromName}\n+++ ${options.toName}\n`];
  for (const h of patch.hunks) {
    // An empty side is numbered by the line before it, as GNU diff does.
    const oldStart = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
    const newStart = h.newLines === 0 ? h.newStart - 1 : h.newStart;
    out.push(`@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@\n`);
    for (const line of h.lines) out.push(`${line}\n`);
  }
  return out.join('');
}
