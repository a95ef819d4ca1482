/**
 * Spots text in the chat composer that looks like a password, token or key, so the client can
 * offer to store it in the vault and send a `{{secret:<id>.<field>}}` reference instead. It is a
 * hint, not a guard: a miss only means no offer, so the rules lean towards silence on ordinary
 * text (sentences, URLs, UUIDs, git hashes, paths, code identifiers).
 */

/** How the value was recognised; decides the suggested vault type and field name. */
export type SecretKind = 'private_key' | 'token' | 'jwt' | 'password' | 'high_entropy';

export interface SecretCandidate {
  kind: SecretKind;
  /** The exact text to store (and to replace with the reference). */
  value: string;
  /** Where `value` starts and ends in the scanned text. */
  start: number;
  end: number;
  /** What it looks like, for the offer ("a GitHub token"). */
  label: string;
  /** Suggested vault fields for the create dialog. */
  suggestion: { name: string; type: 'password' | 'api_token' | 'ssh_key'; field: string };
}

interface PrefixRule {
  pattern: RegExp;
  label: string;
  name: string;
}

// Well-known token formats. Each needs enough characters after its prefix that a word such as
// "sk-learn" or "AKIA" alone never matches.
const prefixRules: PrefixRule[] = [
  { pattern: /sk-ant-[A-Za-z0-9_-]{20,}/, label: 'an Anthropic API key', name: 'Anthropic API key' },
  { pattern: /sk-[A-Za-z0-9_-]{20,}/, label: 'an OpenAI-style API key', name: 'API key' },
  { pattern: /[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/, label: 'a Stripe key', name: 'Stripe key' },
  { pattern: /github_pat_[A-Za-z0-9_]{22,}/, label: 'a GitHub token', name: 'GitHub token' },
  { pattern: /gh[pousr]_[A-Za-z0-9]{30,}/, label: 'a GitHub token', name: 'GitHub token' },
  { pattern: /glpat-[A-Za-z0-9_-]{20,}/, label: 'a GitLab token', name: 'GitLab token' },
  { pattern: /xox[abeoprs]-[A-Za-z0-9-]{10,}/, label: 'a Slack token', name: 'Slack token' },
  { pattern: /(?:AKIA|ASIA)[0-9A-Z]{16}/, label: 'an AWS access key', name: 'AWS access key' },
  { pattern: /AIza[0-9A-Za-z_-]{35}/, label: 'a Google API key', name: 'Google API key' },
  { pattern: /hf_[A-Za-z0-9]{30,}/, label: 'a Hugging Face token', name: 'Hugging Face token' },
  { pattern: /npm_[A-Za-z0-9]{36}/, label: 'an npm token', name: 'npm token' },
].map((rule) => ({
  ...rule,
  // A token never starts inside a longer word. Compiled once: the composer scans on every keystroke.
  pattern: new RegExp(`(?<![A-Za-z0-9_-])${rule.pattern.source}`),
}));

const privateKeyBlock =
  /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|$)/;

const jwtPattern = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/;

// "password: x", "pwd=x", "пароль от почты: x" (strict separators, up to three words after the
// keyword), and "my password is x2", "пароль — x2" (loose ones, for the full words only): after a loose separator the value must not
// read as a word (see passwordValue), because "the password is too short" is ordinary speech.
const passwordStrict =
  /(?<![\p{L}\p{N}_])(?:password|passwd|passphrase|pwd|пароль|пароля|passwort|contraseña|mot de passe)(?:\s+[\p{L}\p{N}-]+){0,3}?(?:\s*[:=]\s*|\s+(?=["'«]))/giu;
const passwordLoose =
  /(?<![\p{L}\p{N}_])(?:password|passphrase|пароль|passwort|contraseña|mot de passe)(?:\s+[\p{L}\p{N}-]+){0,3}?\s+(?:is|was|это|—|–|-)\s+/giu;

/** Values that follow "password:" in prose or forms without being one. */
const notPasswords = new Set([
  'none',
  'null',
  'empty',
  'required',
  'optional',
  'unknown',
  'same',
  'нет',
  'пусто',
]);

const CLOSING = /["'»)\].,;!?]+$/;

function trimValue(raw: string): string {
  return raw.replace(/^["'«(]+/, '').replace(CLOSING, '');
}

function isReference(text: string): boolean {
  return /^\{\{secret:[^}]*\}\}$/.test(text);
}

function hasLetterAndOther(value: string): boolean {
  return /\p{L}/u.test(value) && /[^\p{L}]/u.test(value);
}

const closingQuote: Record<string, string> = { '"': '"', "'": "'", '«': '»' };

/**
 * The password that follows a "password" keyword at `from`, or null: a quoted text up to its
 * closing quote (spaces allowed), else the next word without trailing punctuation.
 */
function passwordValue(text: string, from: number, loose: boolean): { value: string; start: number } | null {
  const open = text[from] ?? '';
  let value: string;
  let start: number;
  const close = closingQuote[open];
  if (close) {
    const end = text.indexOf(close, from + 1);
    const line = text.indexOf('\n', from + 1);
    if (end < 0 || (line >= 0 && line < end)) return null;
    start = from + 1;
    value = text.slice(start, end);
  } else {
    const word = /^\S+/.exec(text.slice(from))?.[0] ?? '';
    value = trimValue(word);
    start = from + word.indexOf(value);
  }
  if (value.length < 4 || value.length > 256 || isReference(value)) return null;
  if (/^[*•·x.]+$/i.test(value) || notPasswords.has(value.toLowerCase())) return null;
  // A URL or a path ("pwd: /home/me" is the shell's answer, not a password).
  if (/^(https?:\/\/|www\.)/i.test(value) || /^~?\//.test(value)) return null;
  // After a loose separator ("is", a dash) a plain word is speech, not a password.
  if (loose && !close && !hasLetterAndOther(value)) return null;
  return { value, start };
}

function shannonBits(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/**
 * Whether a word of at least 24 characters reads as a random token: letters of both cases and
 * digits, mixed throughout (a camelCase identifier switches case once per word; a random token
 * switches far more often), with high character entropy. Hex hashes and UUIDs have one letter
 * case only, so they never pass.
 */
export function looksRandom(word: string): boolean {
  if (word.length < 24 || word.length > 512) return false;
  if (!/[a-z]/.test(word) || !/[A-Z]/.test(word) || !/[0-9]/.test(word)) return false;
  const digits = word.replace(/[^0-9]/g, '').length;
  if (digits < 2) return false;
  const letters = word.replace(/[^A-Za-z0-9]/g, '');
  let switches = 0;
  const classOf = (c: string): number => (/[a-z]/.test(c) ? 0 : /[A-Z]/.test(c) ? 1 : 2);
  for (let i = 1; i < letters.length; i++) {
    if (classOf(letters[i] as string) !== classOf(letters[i - 1] as string)) switches += 1;
  }
  if (switches / Math.max(1, letters.length - 1) < 0.35) return false;
  // Identifiers are made of words ("Localization", "Key", "For"); a random token has few runs of
  // three or more lower-case letters.
  const wordy = (word.match(/[A-Z]?[a-z]{3,}/g) ?? []).join('').length;
  if (wordy / letters.length >= 0.5) return false;
  return shannonBits(word) >= Math.min(4.0, Math.log2(word.length) - 0.6);
}

/** The earliest value after a "password" keyword, or null. */
function passwordAfterKeyword(text: string): { value: string; start: number } | null {
  let best: { value: string; start: number } | null = null;
  for (const [pattern, loose] of [
    [passwordStrict, false],
    [passwordLoose, true],
  ] as const) {
    for (const match of text.matchAll(pattern)) {
      const found = passwordValue(text, match.index + match[0].length, loose);
      if (found && (!best || found.start < best.start)) best = found;
      if (found) break;
    }
  }
  return best;
}

function highEntropyToken(text: string): { value: string; start: number } | null {
  for (const match of text.matchAll(/\S{24,}/g)) {
    const raw = match[0];
    if (/:\/\/|^www\.|@/.test(raw) || raw.includes('{{secret:')) continue;
    // A path or a dotted name: its parts are words, not one token.
    if ((raw.match(/[/\\.]/g)?.length ?? 0) >= 3) continue;
    // `KEY=value` and `key: value` written without a space: the token is the value.
    const assigned = /^[A-Za-z_][A-Za-z0-9_]{0,40}[:=]["']?/.exec(raw);
    const tail = assigned ? raw.slice(assigned[0].length) : '';
    const value = trimValue(tail.length >= 16 ? tail : raw);
    if (!/^[A-Za-z0-9+/=_\-.~!#$%^&*]+$/.test(value)) continue;
    if (looksRandom(value)) return { value, start: match.index + raw.indexOf(value) };
  }
  return null;
}

function candidate(
  kind: SecretKind,
  value: string,
  start: number,
  label: string,
  suggestion: SecretCandidate['suggestion'],
): SecretCandidate {
  return { kind, value, start, end: start + value.length, label, suggestion };
}

/**
 * The first thing in `text` that looks like a secret, by confidence: a private key block, a
 * well-known token, a JWT, a value after "password:", then a long random-looking token.
 * References (`{{secret:…}}`) never count, so text that already uses the vault stays quiet.
 */
export function detectSecret(text: string): SecretCandidate | null {
  if (text.length === 0) return null;

  const key = privateKeyBlock.exec(text);
  if (key) {
    const value = key[0].trimEnd();
    return candidate('private_key', value, key.index, 'a private key', {
      name: 'Private key',
      type: 'ssh_key',
      field: 'private_key',
    });
  }

  let best: SecretCandidate | null = null;
  for (const rule of prefixRules) {
    const match = rule.pattern.exec(text);
    if (match && (!best || match.index < best.start))
      best = candidate('token', match[0], match.index, rule.label, {
        name: rule.name,
        type: 'api_token',
        field: 'token',
      });
  }
  if (best) return best;

  const jwt = jwtPattern.exec(text);
  if (jwt) {
    return candidate('jwt', jwt[0], jwt.index, 'a JSON Web Token', {
      name: 'Token',
      type: 'api_token',
      field: 'token',
    });
  }

  const password = passwordAfterKeyword(text);
  if (password) {
    return candidate('password', password.value, password.start, 'a password', {
      name: 'Password',
      type: 'password',
      field: 'password',
    });
  }

  const token = highEntropyToken(text);
  if (token) {
    return candidate('high_entropy', token.value, token.start, 'a key or token', {
      name: 'Token',
      type: 'api_token',
      field: 'token',
    });
  }
  return null;
}

/**
 * `text` with every occurrence of `value` replaced by `reference`; `replaced` is false when the
 * value is no longer there (the person edited it away while the dialog was open).
 */
export function replaceSecret(
  text: string,
  value: string,
  reference: string,
): { text: string; replaced: boolean } {
  if (value === '' || !text.includes(value)) return { text, replaced: false };
  return { text: text.split(value).join(reference), replaced: true };
}
