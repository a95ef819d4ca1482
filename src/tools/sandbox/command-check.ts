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
 */

export type CommandCheck = { ok: true; executables: string[] } | { ok: false; reason: string };

interface Word {
  text: string;
  /** Contains an unquoted glob/brace/tilde or a `$` outside single quotes. */
  expands: boolean;
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

/** Wrappers: options that take a value, and how many plain arguments precede the command. */
const WRAPPERS: Record<string, { valueOptions: string[]; leadingArgs?: number; assignments?: boolean }> = {
  sudo: { valueOptions: ['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '--user', '--group'] },
  doas: { valueOptions: ['-u', '-C'] },
  env: { valueOptions: ['-u', '--unset', '-C', '--chdir', '-S', '--split-string'], assignments: true },
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

export function tokenize(line: string): Token[] | { error: string } {
  const tokens: Token[] = [];
  let i = 0;
  let current: Word | undefined;
  const flush = () => {
    if (current) tokens.push({ kind: 'word', word: current });
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
    if (rest.startsWith('$(')) return { error: 'command substitution $(…)' };
    if (rest.startsWith('<(') || rest.startsWith('>(')) return { error: 'process substitution' };
    if (c === '\\') {
      if (line[i + 1] === '\n') i += 2;
      else {
        word().text += line[i + 1] ?? '';
        i += 2;
      }
      continue;
    }
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return { error: 'an unterminated single quote' };
      word().text += line.slice(i + 1, end);
      i = end + 1;
      continue;
    }
    if (c === '"') {
      const w = word();
      i++;
      while (i < line.length && line[i] !== '"') {
        const d = line[i] as string;
        if (d === '`') return { error: 'backtick command substitution' };
        if (line.startsWith('$(', i)) return { error: 'command substitution $(…)' };
        if (d === '$') w.expands = true;
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
      continue;
    }
    const w = word();
    if ('$*?[]{}~'.includes(c)) w.expands = true;
    w.text += c;
    i++;
  }
  flush();
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
        if (token.op === '<<') {
          return {
            ok: false,
            reason:
              'Refused: here-documents (<<) are not supported when commands are restricted; write the text to a file first.',
          };
        }
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
      if (DANGEROUS_ASSIGNMENT.test(word.text)) {
        return {
          ok: false,
          reason: `Refused: assigning ${word.text.split('=')[0]} can change which program runs.`,
        };
      }
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
  if (first.word.expands) {
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
  if (HARMLESS_BUILTINS.has(name)) return undefined;
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
        i += wrapper.valueOptions.includes(opt) && !a.text.includes('=') ? 2 : 1;
        continue;
      }
      if (wrapper.assignments && ASSIGNMENT.test(a.text)) {
        if (DANGEROUS_ASSIGNMENT.test(a.text))
          return {
            ok: false,
            reason: `Refused: assigning ${a.text.split('=')[0]} can change which program runs.`,
          };
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
