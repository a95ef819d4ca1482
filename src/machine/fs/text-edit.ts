/**
 * Search and replace of one exact piece of text, the way an agent edits a file: the text to
 * replace must occur exactly once (or the caller asks for every occurrence), so an edit never
 * lands on a different place than the one the agent had in mind.
 */

export interface TextEditRequest {
  oldText: string;
  newText: string;
  /** Replace every occurrence instead of requiring exactly one. */
  replaceAll: boolean;
}

export type TextEditOutcome =
  | { ok: true; text: string; replaced: number }
  | { ok: false; reason: string; matches: number; lines: number[] };

/** Line numbers (1-based) listed in a refusal before it says "and N more". */
const LINES_SHOWN = 20;

/**
 * Applies `request` to `text`. Occurrences are counted without overlap, left to right. Refuses
 * (with the number of matches and, for several, the lines they start on) an empty `oldText`,
 * no occurrence, or more than one without `replaceAll`; never throws.
 */
export function editText(text: string, request: TextEditRequest): TextEditOutcome {
  const { oldText, newText } = request;
  if (oldText === '')
    return {
      ok: false,
      reason: '"old_text" is empty; give the exact text to replace.',
      matches: 0,
      lines: [],
    };
  if (oldText === newText)
    return {
      ok: false,
      reason: '"old_text" and "new_text" are the same; there is nothing to change.',
      matches: 0,
      lines: [],
    };
  const starts = occurrences(text, oldText);
  if (starts.length === 0) {
    const crlf = text.includes('\r\n') && oldText.includes('\n') && !oldText.includes('\r\n');
    return {
      ok: false,
      reason:
        '"old_text" was not found (0 matches). It must match the file exactly, including spaces, ' +
        'indentation and line breaks; read the file and copy the text from it.' +
        (crlf ? ' The file has Windows line endings (\\r\\n); "old_text" has plain \\n.' : ''),
      matches: 0,
      lines: [],
    };
  }
  const lines = lineNumbers(text, starts);
  if (starts.length > 1 && !request.replaceAll) {
    const shown = lines.slice(0, LINES_SHOWN).join(', ');
    const more = lines.length > LINES_SHOWN ? ` and ${lines.length - LINES_SHOWN} more` : '';
    return {
      ok: false,
      reason:
        `"old_text" occurs ${starts.length} times (starting on lines ${shown}${more}); it must occur ` +
        'exactly once. Add surrounding lines to "old_text" to pick one, or pass "replace_all": true ' +
        'to replace every occurrence.',
      matches: starts.length,
      lines,
    };
  }
  // split/join replaces every occurrence literally: no `$&` patterns as String.replace has.
  const edited = request.replaceAll
    ? text.split(oldText).join(newText)
    : text.slice(0, starts[0]) + newText + text.slice((starts[0] as number) + oldText.length);
  return { ok: true, text: edited, replaced: starts.length };
}

/** Start offsets of `needle` in `text`, without overlap. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
    found.push(at);
  return found;
}

/** The 1-based line on which each offset (ascending) lies. */
function lineNumbers(text: string, offsets: readonly number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let scanned = 0;
  for (const offset of offsets) {
    for (let nl = text.indexOf('\n', scanned); nl !== -1 && nl < offset; nl = text.indexOf('\n', nl + 1)) {
      line++;
      scanned = nl + 1;
    }
    lines.push(line);
  }
  return lines;
}
