/**
 * OpenSCAD source as tokens, the way OpenSCAD's own lexer cuts it: comments dropped, strings
 * kept whole (so a bracket or `//` inside one means nothing), and `include <…>` / `use <…>`
 * as one token each, since their file name is not an expression. Every token carries its line,
 * so each problem found later can name it. Pure: no files, no processes.
 */

export type TokenKind = 'ident' | 'number' | 'string' | 'punct' | 'include' | 'use';

export interface Token {
  kind: TokenKind;
  /** The source text; for a string its decoded value, for include/use the file name. */
  text: string;
  line: number;
  /** For a string: whether it had a backslash escape (a file name with one is refused). */
  escaped?: boolean;
}

export interface LexProblem {
  line: number;
  message: string;
}

export interface Lexed {
  tokens: Token[];
  problems: LexProblem[];
}

/** Two-character operators, tried before single characters. */
const PAIRS = new Set(['<=', '>=', '==', '!=', '&&', '||']);
const SINGLES = new Set([...'()[]{};,=<>+-*/%^!?:.#']);

function isIdentStart(c: string): boolean {
  return /[A-Za-z_$]/.test(c);
}

function isIdentPart(c: string): boolean {
  return /[A-Za-z0-9_$]/.test(c);
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"' };

/** Cuts `source` into tokens. Never throws: what cannot be read becomes a problem. */
export function lex(source: string): Lexed {
  const tokens: Token[] = [];
  const problems: LexProblem[] = [];
  let line = 1;
  let i = 0;
  const n = source.length;
  while (i < n) {
    const c = source[i]!;
    if (c === '\n') {
      line++;
      i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') {
      i++;
      continue;
    }
    if (c === '/' && source[i + 1] === '/') {
      while (i < n && source[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && source[i + 1] === '*') {
      const start = line;
      const end = source.indexOf('*/', i + 2);
      const stop = end === -1 ? n : end + 2;
      for (let k = i; k < stop; k++) if (source[k] === '\n') line++;
      if (end === -1)
        problems.push({
          line: start,
          message: 'this /* comment is never closed: end it with */',
        });
      i = stop;
      continue;
    }
    if (c === '"') {
      const start = line;
      let value = '';
      let escaped = false;
      let closed = false;
      i++;
      while (i < n) {
        const d = source[i]!;
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === '\n') line++;
        if (d === '\\' && i + 1 < n) {
          escaped = true;
          const e = source[i + 1]!;
          value += ESCAPES[e] ?? e;
          if (e === '\n') line++;
          i += 2;
          continue;
        }
        value += d;
        i++;
      }
      if (!closed)
        problems.push({
          line: start,
          message: 'this string is never closed: end it with a double quote (")',
        });
      tokens.push({ kind: 'string', text: value, line: start, ...(escaped ? { escaped } : {}) });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(source[i + 1] ?? ''))) {
      const match = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(source.slice(i, i + 400));
      const text = match?.[0] ?? c;
      tokens.push({ kind: 'number', text, line });
      i += text.length;
      continue;
    }
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < n && isIdentPart(source[j]!)) j++;
      const word = source.slice(i, j);
      if (word === 'include' || word === 'use') {
        // Cut exactly as OpenSCAD cuts it, or OpenSCAD would open a file this check never saw:
        // spaces, tabs and line breaks may stand before the `<`, and the name runs to the next
        // `>` however far, across lines (a name with a line break in it is refused later).
        let k = j;
        while (k < n && ' \t\r\n'.includes(source[k]!)) k++;
        if (source[k] === '<') {
          const close = source.indexOf('>', k + 1);
          const start = line;
          const end = close === -1 ? n : close + 1;
          for (let m = j; m < end; m++) if (source[m] === '\n') line++;
          i = end;
          // Unclosed, OpenSCAD stops with an error and includes nothing.
          if (close === -1)
            problems.push({
              line: start,
              message: `this ${word} <… is never closed: end the file name with >, as in ${word} <parts.scad>`,
            });
          else tokens.push({ kind: word, text: source.slice(k + 1, close).trim(), line: start });
          continue;
        }
      }
      tokens.push({ kind: 'ident', text: word, line });
      i = j;
      continue;
    }
    const pair = source.slice(i, i + 2);
    if (PAIRS.has(pair)) {
      tokens.push({ kind: 'punct', text: pair, line });
      i += 2;
      continue;
    }
    if (SINGLES.has(c)) {
      tokens.push({ kind: 'punct', text: c, line });
      i++;
      continue;
    }
    problems.push({
      line,
      message: `the character ${JSON.stringify(c)} has no meaning in OpenSCAD here; remove it`,
    });
    i++;
  }
  return { tokens, problems };
}

/** Bracket problems: closers without an opener, mismatched pairs, and openers never closed. */
export function checkBrackets(tokens: readonly Token[]): LexProblem[] {
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  const closers: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
  const open: Token[] = [];
  const problems: LexProblem[] = [];
  for (const t of tokens) {
    if (t.kind !== 'punct') continue;
    if (t.text === '(' || t.text === '[' || t.text === '{') {
      open.push(t);
      continue;
    }
    const wanted = pairs[t.text];
    if (!wanted) continue;
    const top = open.at(-1);
    if (top?.text === wanted) {
      open.pop();
      continue;
    }
    if (top)
      problems.push({
        line: t.line,
        message: `'${t.text}' closes the '${top.text}' opened on line ${top.line}, which needs '${closers[top.text]}'`,
      });
    else problems.push({ line: t.line, message: `'${t.text}' has no matching '${wanted}' before it` });
    // Recover: drop openers up to the matching one if there is one, else ignore the closer.
    const at = open.map((o) => o.text).lastIndexOf(wanted);
    if (at !== -1) open.length = at;
  }
  for (const t of open)
    problems.push({ line: t.line, message: `'${t.text}' is never closed: add '${closers[t.text]}'` });
  return problems;
}
