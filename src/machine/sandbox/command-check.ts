/**
 * Checks a bash command line against TERMINAL_ALLOWED_COMMANDS before it runs.
 *
 * The line is tokenised the way bash would split it (quotes, escapes, operators), and every
 * word in command position — after `|`, `;`, `&&`, `||`, `&`, newlines, `(`, `{`, keywords
 * like `if`/`then`/`do`, environment assignments and redirections — must name an allowed
 * executable. Wrappers that run another program (`sudo`, `env`, `xargs`, `nohup`, `timeout`,
 * `find -exec`…) must be allowed themselves and so must what they run. Constructs whose command
 * would only be known after expansion are refused outright: `$(…)`, backticks, `<(…)`/`>(…)`,
 * and variables, globs, braces or `~` in command position.
 *
 * Bash also runs code hidden in a value wherever it evaluates arithmetic: `a[$(cmd)]` held in a
 * variable runs `cmd` when it is read as a number. So arithmetic expansions, parameter
 * expansions with subscripts, offsets, indirection or transformations, computed array indexes,
 * and non-literal numbers given to `test`, `[`, `[[` and `printf` are refused as well.
 * Here-documents are read to their end; their text is checked like a double-quoted word
 * unless the delimiter is quoted.
 */

export type CommandCheck = { ok: true; executables: string[] } | { ok: false; reason: string };

interface Word {
  text: string;
  /** Contains an unquoted glob/brace/tilde or a `$` outside single quotes. */
  expands: boolean;
  /** Contains a quote or a backslash (a quoted here-document delimiter keeps its text literal). */
  quoted?: boolean;
}
type Token = { kind: 'word'; word: Word } | { kind: 'op'; op: string };

const OPERATORS = [
  '&&',
  '||',
  ';;',
  '|&',
  '>>',
  '<<<',
  '<<',
  '&>>',
  '&>',
  '>&',
  '<&',
  '<>',
  '>|',
  '|',
  '&',
  ';',
  '(',
  ')',
  '<',
  '>',
  '\n',
];
const REDIRECTS = new Set(['>>', '<<<', '<<', '&>>', '&>', '>&', '<&', '<>', '>|', '<', '>']);
const SEPARATORS = new Set(['&&', '||', '|&', '|', '&', ';', '(', ')', '\n']);
const PREFIX_KEYWORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'while',
  'until',
  'do',
  'done',
  '!',
  '{',
  '}',
  'time',
]);
const REFUSED_KEYWORDS = new Set([
  'case',
  'esac',
  'select',
  'function',
  'coproc',
  'eval',
  'exec',
  'source',
  '.',
  'alias',
  'trap',
  'enable',
  'builtin',
  'command',
]);
/** Builtins that run nothing else and are always allowed. */
const HARMLESS_BUILTINS = new Set([
  'cd',
  'pwd',
  'true',
  'false',
  'echo',
  'printf',
  'test',
  '[',
  '[[',
  ']]',
  'exit',
  ':',
]);
/** Variables whose assignment changes which program a later word runs. */
const DANGEROUS_ASSIGNMENT =
  /^(PATH|IFS|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|LD_\w+|BASH_FUNC\w*|GLOBIGNORE|CDPATH)\+?=/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
/** An array element assignment whose index is a literal number (any other index is arithmetic). */
const LITERAL_INDEX_ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[\d+\])?\+?=/;
/**
 * The start of a `${…}` bash only substitutes: a name, a positional or special parameter, its
 * length, or a default/alternative/pattern operator. Subscripts, `:offset`, `!indirection` and
 * `@transformations` are missing on purpose: bash evaluates them as arithmetic or prompt code.
 */
const PLAIN_PARAMETER = /^\$\{#?([A-Za-z_][A-Za-z0-9_]*|\d+|[#?$!@*-])(\}|:?[-=+?]|[#%/^,])/;
/** Operators whose operands `[[` evaluates as arithmetic (`[` and `test` parse plain numbers). */
const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
/** A number read without evaluating anything: a literal integer or `$#`, `$?`, `$$`, `$!`. */
const SAFE_NUMBER = /^(-?\d+|\$[#?$!])$/;
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Wrappers: options that take a value, and how many plain arguments precede the command. */
interface Wrapper {
  valueOptions: string[];
  leadingArgs?: number;
  assignments?: boolean;
  /** Options that make the wrapper run a shell, an editor or a command line it splits itself. */
  refusedOptions?: string[];
}
const WRAPPERS: Record<string, Wrapper> = {
  sudo: {
    valueOptions: ['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '--user', '--group'],
    refusedOptions: ['-s', '-i', '-e', '--shell', '--login', '--edit'],
  },
  doas: { valueOptions: ['-u', '-C'], refusedOptions: ['-s'] },
  env: {
    valueOptions: ['-u', '--unset', '-C', '--chdir'],
    assignments: true,
    refusedOptions: ['-S', '--split-string'],
  },
  nohup: { valueOptions: [] },
  timeout: { valueOptions: ['-s', '--signal', '-k', '--kill-after'], leadingArgs: 1 },
  nice: { valueOptions: ['-n', '--adjustment'] },
  ionice: { valueOptions: ['-c', '-n', '-p', '-t', '--class', '--classdata'] },
  stdbuf: { valueOptions: ['-i', '-o', '-e'] },
  setsid: { valueOptions: [] },
  chrt: { valueOptions: [], leadingArgs: 1 },
  taskset: { valueOptions: [], leadingArgs: 1 },
  flock: { valueOptions: ['-w', '--timeout', '-E', '--conflict-exit-code'], leadingArgs: 1 },
  xargs: {
    valueOptions: [
      '-a',
      '-d',
      '-E',
      '-e',
      '-I',
      '-i',
      '-L',
      '-l',
      '-n',
      '-P',
      '-s',
      '--arg-file',
      '--delimiter',
      '--max-args',
      '--max-procs',
      '--replace',
    ],
  },
  strace: { valueOptions: ['-e', '-o', '-p', '-s', '-u'] },
  watch: { valueOptions: ['-n', '--interval', '-d'] },
  unbuffer: { valueOptions: [] },
  chroot: { valueOptions: [], leadingArgs: 1 },
};

/** Why bash could run code at the `$` at `line[i]` (outside single quotes), or undefined. */
function expansionError(line: string, i: number): string | undefined {
  if (line.startsWith('$((', i)) return 'arithmetic expansion $((…))';
  if (line.startsWith('$(', i)) return 'command substitution $(…)';
  if (line.startsWith('$[', i)) return 'arithmetic expansion $[…]';
  if (line.startsWith('${', i) && !PLAIN_PARAMETER.test(line.slice(i, i + 100)))
    return 'a parameter expansion with a subscript, offset, indirection or transformation';
  return undefined;
}

/** Why the unquoted text (a here-document body) would run code when bash expands it. */
function expandedTextError(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '`') return 'backtick command substitution';
    else if (text[i] === '$') {
      const error = expansionError(text, i);
      if (error) return error;
    }
  }
  return undefined;
}

interface PendingHeredoc {
  delimiter: string;
  quoted: boolean;
  /** `<<-`: leading tabs are removed from each line, the delimiter line included. */
  strip: boolean;
}

/** Skips the bodies of here-documents that start at `from`; returns where the line continues. */
function skipHeredocs(line: string, from: number, docs: PendingHeredoc[]): number | { error: string } {
  let pos = from;
  for (const doc of docs) {
    for (;;) {
      if (pos >= line.length)
        return { error: `an unterminated here-document (no line "${doc.delimiter}" ends it)` };
      const newline = line.indexOf('\n', pos);
      const end = newline < 0 ? line.length : newline;
      const text = line.slice(pos, end);
      pos = end + 1;
      if ((doc.strip ? text.replace(/^\t+/, '') : text) === doc.delimiter) break;
      const error = doc.quoted ? undefined : expandedTextError(text);
      if (error) return { error: `${error} in a here-document` };
    }
  }
  return Math.min(pos, line.length);
}

export function tokenize(line: string): Token[] | { error: string } {
  const tokens: Token[] = [];
  let i = 0;
  let current: Word | undefined;
  let heredocStrip: boolean | undefined;
  const heredocs: PendingHeredoc[] = [];
  const flush = () => {
    if (current) {
      tokens.push({ kind: 'word', word: current });
      // The first word after `<<` is the here-document's delimiter.
      if (heredocStrip !== undefined) {
        heredocs.push({ delimiter: current.text, quoted: current.quoted === true, strip: heredocStrip });
        heredocStrip = undefined;
      }
    }
    current = undefined;
  };
  const word = () => {
    current ??= { text: '', expands: false };
    return current;
  };
  while (i < line.length) {
    const c = line[i] as string;
    const rest = line.slice(i);
    if (c === '`') return { error: 'backtick command substitution' };
    if (c === '$') {
      const error = expansionError(line, i);
      if (error) return { error };
    }
    if (rest.startsWith('<(') || rest.startsWith('>(')) return { error: 'process substitution' };
    if (c === '\\') {
      if (line[i + 1] === '\n') i += 2;
      else {
        const w = word();
        w.text += line[i + 1] ?? '';
        w.quoted = true;
        i += 2;
      }
      continue;
    }
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return { error: 'an unterminated single quote' };
      const w = word();
      w.text += line.slice(i + 1, end);
      w.quoted = true;
      i = end + 1;
      continue;
    }
    if (c === '"') {
      const w = word();
      w.quoted = true;
      i++;
      while (i < line.length && line[i] !== '"') {
        const d = line[i] as string;
        if (d === '`') return { error: 'backtick command substitution' };
        if (d === '$') {
          const error = expansionError(line, i);
          if (error) return { error };
          w.expands = true;
        }
        if (d === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1] as string)) {
          w.text += line[i + 1];
          i += 2;
          continue;
        }
        w.text += d;
        i++;
      }
      if (i >= line.length) return { error: 'an unterminated double quote' };
      i++;
      continue;
    }
    if (c === '#' && current === undefined) {
      while (i < line.length && line[i] !== '\n') i++;
      continue;
    }
    if (c === ' ' || c === '\t') {
      flush();
      i++;
      continue;
    }
    const op = OPERATORS.find((o) => rest.startsWith(o));
    if (op) {
      // `2>` / `2>&1`: a file-descriptor number glued to a redirection belongs to it.
      if (current && /^\d+$/.test(current.text) && !current.expands && REDIRECTS.has(op)) current = undefined;
      flush();
      tokens.push({ kind: 'op', op });
      i += op.length;
      if (op === '<<') {
        heredocStrip = line[i] === '-';
        if (heredocStrip) i++;
      } else if (op === '\n' && heredocs.length > 0) {
        const next = skipHeredocs(line, i, heredocs.splice(0));
        if (typeof next !== 'number') return next;
        i = next;
      }
      continue;
    }
    const w = word();
    if ('$*?[]{}~'.includes(c)) w.expands = true;
    w.text += c;
    i++;
  }
  flush();
  if (heredocStrip !== undefined) return { error: 'a here-document without a delimiter' };
  if (heredocs.length > 0) return skipHeredocs(line, line.length, heredocs) as { error: string };
  return tokens;
}

/** Checks `line` against `allowed` (bare names, or exact absolute paths). `*` allows anything. */
export function checkCommandLine(line: string, allowed: readonly string[]): CommandCheck {
  if (allowed.includes('*')) return { ok: true, executables: [] };
  const tokens = tokenize(line);
  if (!Array.isArray(tokens))
    return {
      ok: false,
      reason: `Refused: the command uses ${tokens.error}, which is not allowed when commands are restricted.`,
    };
  const allowedSet = new Set(allowed);
  const used: string[] = [];
  let expectCommand = true;
  let skipNext = false;
  let inFor = false;

  for (let t = 0; t < tokens.length; t++) {
    const token = tokens[t] as Token;
    if (token.kind === 'op') {
      if (REDIRECTS.has(token.op)) {
        skipNext = true;
        continue;
      }
      if (SEPARATORS.has(token.op) || token.op === ';;') {
        expectCommand = true;
        inFor = false;
      }
      continue;
    }
    const word = token.word;
    if (skipNext) {
      skipNext = false;
      continue;
    }
    if (inFor || !expectCommand) continue;
    // From here `word` is in command position.
    if (ASSIGNMENT.test(word.text)) {
      const refusal = assignmentRefusal(word.text);
      if (refusal) return refusal;
      continue;
    }
    if (word.text === 'for') {
      inFor = true;
      continue;
    }
    if (PREFIX_KEYWORDS.has(word.text) && (!word.expands || word.text === '{' || word.text === '}')) continue;
    const rest = tokens.slice(t);
    const verdict = checkExecutable(rest, allowedSet, used);
    if (verdict) return verdict;
    expectCommand = false;
  }
  return { ok: true, executables: [...new Set(used)] };
}

/** Checks the command starting at `tokens[0]` (and what it wraps); returns a refusal or undefined. */
function checkExecutable(
  tokens: Token[],
  allowed: ReadonlySet<string>,
  used: string[],
): CommandCheck | undefined {
  const first = tokens[0];
  if (first?.kind !== 'word') return undefined;
  const name = first.word.text;
  if (first.word.expands && name !== '[' && name !== '[[') {
    return {
      ok: false,
      reason: `Refused: "${name}" in command position would be expanded by the shell (variable, glob, brace or ~); name the program literally.`,
    };
  }
  if (REFUSED_KEYWORDS.has(name)) {
    return {
      ok: false,
      reason: `Refused: "${name}" can run arbitrary code and is not allowed when commands are restricted.`,
    };
  }
  if (/^[A-Za-z_][\w-]*\(\)$/.test(name) || (tokens[1]?.kind === 'op' && tokens[1].op === '(')) {
    return {
      ok: false,
      reason: 'Refused: defining shell functions is not allowed when commands are restricted.',
    };
  }
  if (HARMLESS_BUILTINS.has(name)) return builtinRefusal(name, argumentWords(tokens.slice(1)));
  if (!allowed.has(name)) {
    const hint = name.includes('/') ? ' (a program given by path must be listed with that exact path)' : '';
    return {
      ok: false,
      reason: `Refused: "${name}" is not an allowed command${hint}. Allowed: ${[...allowed].join(', ')}.`,
    };
  }
  used.push(name);
  // What a wrapper runs is checked as a command of its own.
  const args = argumentWords(tokens.slice(1));
  const wrapper = WRAPPERS[name.split('/').pop() as string];
  if (wrapper) {
    let i = 0;
    let leading = wrapper.leadingArgs ?? 0;
    while (i < args.length) {
      const a = args[i] as Word;
      if (a.text === '--') {
        i++;
        break;
      }
      if (a.text.startsWith('-') && a.text.length > 1) {
        const opt = a.text.split('=')[0] as string;
        const refused = wrapper.refusedOptions?.find(
          (r) => r === opt || (/^-[A-Za-z]+$/.test(opt) && r.length === 2 && opt.includes(r[1] as string)),
        );
        if (refused) {
          return {
            ok: false,
            reason: `Refused: "${name} ${refused}" runs a shell or a command line that cannot be checked.`,
          };
        }
        i += wrapper.valueOptions.includes(opt) && !a.text.includes('=') ? 2 : 1;
        continue;
      }
      if (wrapper.assignments && ASSIGNMENT.test(a.text)) {
        const refusal = assignmentRefusal(a.text);
        if (refusal) return refusal;
        i++;
        continue;
      }
      if (leading > 0) {
        leading--;
        i++;
        continue;
      }
      break;
    }
    const inner = args[i];
    return inner ? checkExecutable(wordTokens(args.slice(i)), allowed, used) : undefined;
  }
  if (name === 'find') {
    for (let i = 0; i < args.length; i++) {
      if (['-exec', '-execdir', '-ok', '-okdir'].includes((args[i] as Word).text) && args[i + 1]) {
        const v = checkExecutable(wordTokens(args.slice(i + 1)), allowed, used);
        if (v) return v;
      }
    }
  }
  return undefined;
}

function assignmentRefusal(text: string): CommandCheck | undefined {
  const name = text.split(/\[|\+?=/)[0] as string;
  if (DANGEROUS_ASSIGNMENT.test(text))
    return { ok: false, reason: `Refused: assigning ${name} can change which program runs.` };
  if (!LITERAL_INDEX_ASSIGNMENT.test(text))
    return {
      ok: false,
      reason: `Refused: the index of ${name}[…] is evaluated as arithmetic, which can run code; use a literal number.`,
    };
  return undefined;
}

/** Arguments of always-allowed builtins that bash would evaluate as code (through arithmetic). */
function builtinRefusal(name: string, args: Word[]): CommandCheck | undefined {
  const arithmetic = (what: string): CommandCheck => ({
    ok: false,
    reason: `Refused: ${what} is evaluated as arithmetic by bash, which can run code hidden in it; use literal values.`,
  });
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as Word;
    const next = args[i + 1];
    // `test -v a[$(cmd)]` and `printf -v a[$(cmd)]` evaluate the subscript of the name.
    if (a.text === '-v' && ['test', '[', '[[', 'printf'].includes(name) && next) {
      if (next.expands || !PLAIN_NAME.test(next.text)) return arithmetic(`the name after "${name} -v"`);
    }
    if (name === '[[' && ARITHMETIC_TESTS.has(a.text) && !a.expands) {
      for (const operand of [args[i - 1], next]) {
        if (operand && !SAFE_NUMBER.test(operand.text))
          return arithmetic(`"${operand.text}" next to ${a.text} in [[ ]]`);
      }
    }
  }
  return undefined;
}

/** The plain words of one simple command (stops at the first operator, skips redirection targets). */
function argumentWords(tokens: Token[]): Word[] {
  const out: Word[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.kind === 'op') {
      if (REDIRECTS.has(t.op)) {
        i++;
        continue;
      }
      break;
    }
    out.push(t.word);
  }
  return out;
}

function wordTokens(words: Word[]): Token[] {
  return words.map((word) => ({ kind: 'word', word }));
}
