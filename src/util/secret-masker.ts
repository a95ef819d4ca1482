/**
 * Hides the values of secrets Navi knows (API keys, tokens, values the vault reveals) in text
 * that leaves a tool: the result the LLM reads, the events clients see, the stored transcript
 * and the log. It is the last line of defence behind scrubbed child environments, so it looks
 * for the forms a secret most often takes on the way out, not only the plain value:
 * - the plain value and its JSON-escaped form (log lines and serialised metadata);
 * - percent-encoded (`encodeURIComponent`, and form style with `+` for spaces; hex digits of
 *   either case);
 * - base64 and base64url of its UTF-8 bytes, at each of the three byte alignments it can have
 *   inside a longer base64 text (only the characters that depend on the secret alone are
 *   matched, so a secret embedded in a base64-encoded file or header is found too).
 * Every match becomes `[secret hidden: NAME]`. Values shorter than `SECRET_MIN_LENGTH` are
 * ignored: masking them would hide ordinary words and numbers, and they are too short to be
 * credentials worth the name. Other transformations (hex, reversed, split across lines, base64
 * with line breaks, partial prints) are NOT caught.
 */

/** Values shorter than this (after trimming) are not registered. */
export const SECRET_MIN_LENGTH = 8;

interface Compiled {
  pattern: RegExp;
  /** Matched text → name of the secret it belongs to. */
  nameOf: Map<string, string>;
  longest: number;
}

/**
 * The set of secret values and the one pattern that finds all of their forms. The pattern is
 * rebuilt lazily after the set changes, never per call. Not a singleton: the services own one
 * and pass it to whoever writes tool output or log lines.
 */
export class SecretMasker {
  /** Value → name. Keyed by value so a rotated secret keeps its old value masked too. */
  private readonly values = new Map<string, string>();
  private compiled: Compiled | null | undefined = null;

  constructor(initial: Iterable<{ name: string; value: string }> = []) {
    for (const { name, value } of initial) this.add(name, value);
  }

  /**
   * Registers `value` (trimmed) as the secret called `name` (a name, never a value: it is shown
   * in the marker). Returns false, and registers nothing, for values shorter than `minLength`
   * (`SECRET_MIN_LENGTH` unless the caller knows the value is a secret: a vault value).
   */
  add(name: string, value: string, minLength = SECRET_MIN_LENGTH): boolean {
    const v = value.trim();
    if (v.length < minLength || v.length === 0) return false;
    if (this.values.get(v) === name) return true;
    this.values.set(v, name);
    this.compiled = undefined;
    return true;
  }

  /** Number of registered values. */
  get size(): number {
    return this.values.size;
  }

  /** The names of the registered secrets (for diagnostics; never the values). */
  names(): string[] {
    return [...new Set(this.values.values())].sort();
  }

  /**
   * How many characters one masked form can span. A caller that cuts a long text should mask
   * the first `limit + longestForm` characters before cutting at `limit`, so no secret is cut in
   * two and left half visible.
   */
  get longestForm(): number {
    return this.pattern()?.longest ?? 0;
  }

  /** `text` with every known form of every secret replaced by a marker. */
  mask(text: string): string {
    const compiled = this.pattern();
    if (!compiled) return text;
    const re = compiled.pattern;
    re.lastIndex = 0;
    let m = re.exec(text);
    if (!m) return text;
    const parts: string[] = [];
    let cursor = 0;
    while (m) {
      const start = m.index;
      let end = start + m[0].length;
      const names = new Set([nameFor(compiled.nameOf, m[0])]);
      // Search again from the next character, not from `end`: a second secret may start inside
      // this match and run past it (overlapping values); the hidden range grows to cover both.
      for (;;) {
        re.lastIndex = m.index + 1;
        m = re.exec(text);
        if (!m || m.index > end) break;
        end = Math.max(end, m.index + m[0].length);
        names.add(nameFor(compiled.nameOf, m[0]));
      }
      parts.push(text.slice(cursor, start), `[secret hidden: ${[...names].join(', ')}]`);
      cursor = end;
    }
    parts.push(text.slice(cursor));
    return parts.join('');
  }

  /**
   * `value` as JSON would carry it, masked: the same reference when no secret appears in its
   * JSON text, otherwise a masked copy parsed back from that text (so object keys, nested
   * arrays and anything a `toJSON` produces are covered). Throws what `JSON.stringify` throws
   * (cycles, BigInt, throwing getters); `undefined` stays `undefined`.
   */
  maskJson<T>(value: T): T {
    if (value === undefined || !this.pattern()) return value;
    const json = JSON.stringify(value);
    if (json === undefined) return value;
    const masked = this.mask(json);
    return masked === json ? value : (JSON.parse(masked) as T);
  }

  private pattern(): Compiled | null {
    if (this.compiled === undefined) this.compiled = compile(this.values);
    return this.compiled;
  }
}

function nameFor(nameOf: Map<string, string>, match: string): string {
  return nameOf.get(match) ?? nameOf.get(upperPercent(match)) ?? 'secret';
}

function upperPercent(text: string): string {
  return text.replace(/%[0-9a-f]{2}/gi, (s) => s.toUpperCase());
}

function compile(values: Map<string, string>): Compiled | null {
  if (values.size === 0) return null;
  const nameOf = new Map<string, string>();
  const sources = new Map<string, number>();
  for (const [value, name] of values) {
    for (const form of plainForms(value)) {
      if (!nameOf.has(form)) nameOf.set(form, name);
      sources.set(escapeRegExp(form), form.length);
    }
    for (const form of percentForms(value)) {
      if (!nameOf.has(form)) nameOf.set(form, name);
      sources.set(percentSource(form), form.length);
    }
  }
  // Longest first: at a given position the alternation then takes the longest form, so a
  // secret that contains another is hidden whole.
  const ordered = [...sources].sort((a, b) => b[1] - a[1]);
  return {
    pattern: new RegExp(ordered.map(([source]) => source).join('|'), 'g'),
    nameOf,
    longest: ordered[0]?.[1] ?? 0,
  };
}

/** Forms matched literally: plain, JSON-escaped, base64 and base64url fragments. */
function plainForms(value: string): Set<string> {
  const forms = new Set([value, JSON.stringify(value).slice(1, -1)]);
  for (const fragment of base64Fragments(Buffer.from(value, 'utf8'))) {
    forms.add(fragment);
    forms.add(fragment.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return forms;
}

/**
 * The base64 characters that depend only on `bytes`, for each alignment: `bytes` preceded by
 * 0, 1 or 2 other bytes (mod 3). Character i of an encoding covers bits [6i, 6i + 6); it is
 * fixed by the secret when that range lies inside the secret's bits.
 */
function base64Fragments(bytes: Buffer): string[] {
  const out: string[] = [];
  for (const before of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(before), bytes]).toString('base64');
    const first = Math.ceil((8 * before) / 6);
    const end = Math.floor((8 * (before + bytes.length)) / 6);
    out.push(encoded.slice(first, end));
  }
  return out;
}

/** Percent-encoded forms that differ from the plain value. */
function percentForms(value: string): Set<string> {
  const component = encodeURIComponent(value);
  const forms = new Set([
    component,
    component.replaceAll('%20', '+'),
    new URLSearchParams({ v: value }).toString().slice(2),
  ]);
  forms.delete(value);
  return forms;
}

/** A percent-encoded form whose escapes match in either case (`%2f` and `%2F`). */
function percentSource(form: string): string {
  return form
    .split(/(%[0-9A-F]{2})/)
    .map((part, i) =>
      i % 2 === 1
        ? `%${[...part.slice(1)].map((c) => (/[A-F]/.test(c) ? `[${c}${c.toLowerCase()}]` : c)).join('')}`
        : escapeRegExp(part),
    )
    .join('');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
