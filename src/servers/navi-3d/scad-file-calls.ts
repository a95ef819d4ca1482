/**
 * The files OpenSCAD code names: `include <…>` and `use <…>` from the tokens, and the file
 * argument of each call that reads one (import, surface…). A name given as a quoted string is a
 * reference to check; a name computed at run time cannot be checked, and is listed apart.
 */
import { FILE_READERS, type FileArgument } from './scad-builtins.js';
import type { LexProblem, Token } from './scad-lexer.js';

/** A file the code names: by `include`/`use`, or as the file argument of a call that reads one. */
export interface FileReference {
  kind: 'include' | 'use' | 'import';
  path: string;
  line: number;
  /** How it was named, for messages: `include`, `use`, `import()`, `surface()`… */
  via: string;
  /** A name with a backslash escape in it (Navi refuses those rather than decode them). */
  escaped?: boolean;
}

export interface FileCalls {
  /** Files read by calls (import, surface…); `include` and `use` come from `includesOf`. */
  references: FileReference[];
  /** Calls that read a file whose name is computed, which Navi cannot check before the run. */
  computedFiles: LexProblem[];
}

/** The files named by `include <…>` and `use <…>`, straight from the tokens. */
export function includesOf(tokens: readonly Token[]): FileReference[] {
  return tokens
    .filter((t) => t.kind === 'include' || t.kind === 'use')
    .map((t) => ({ kind: t.kind as 'include' | 'use', path: t.text, line: t.line, via: t.kind }));
}

/** A number as written, possibly signed: never a string, so never a file name. */
function plainNumber(value: readonly Token[]): boolean {
  const [first, second] = value;
  if (value.length === 1) return first?.kind === 'number';
  return (
    value.length === 2 && first?.kind === 'punct' && '+-'.includes(first.text) && second?.kind === 'number'
  );
}

/** Sorts the value given as a call's file argument into a reference or a computed name. */
function fileArgument(
  out: FileCalls,
  callee: string,
  value: readonly Token[],
  reader: FileArgument,
  positional: boolean,
): void {
  const first = value[0];
  if (!first) return;
  if (value.length === 1 && first.kind === 'string') {
    out.references.push({
      kind: 'import',
      path: first.text,
      line: first.line,
      via: `${callee}()`,
      ...(first.escaped ? { escaped: true } : {}),
    });
    return;
  }
  if (positional && reader.numberIsHeight && plainNumber(value)) return;
  out.computedFiles.push({
    line: first.line,
    message:
      positional && reader.positionalHint
        ? `${callee}(): ${reader.positionalHint}`
        : `${callee}() must be given its file as a quoted name, like ${callee}("part.stl"): Navi checks the file before OpenSCAD runs, and cannot check a name that is computed`,
  });
}

/**
 * The files that calls read, found from the tokens alone: every `reader(` anywhere, whatever
 * the statement around it, so code that cannot be parsed (or that the parser reads otherwise
 * than OpenSCAD) still reads no file unchecked.
 */
export function scanFileCalls(tokens: readonly Token[]): FileCalls {
  const out: FileCalls = { references: [], computedFiles: [] };
  for (let i = 0; i < tokens.length; i++) {
    const reader = tokens[i]!.kind === 'ident' ? FILE_READERS.get(tokens[i]!.text) : undefined;
    if (!reader || tokens[i + 1]?.text !== '(') continue;
    const callee = tokens[i]!.text;
    let depth = 0;
    let arg: Token[] = [];
    let position = 0;
    const endArgument = () => {
      const named =
        arg[0]?.kind === 'ident' && arg[1]?.kind === 'punct' && arg[1].text === '=' ? arg[0].text : undefined;
      const value = named ? arg.slice(2) : arg;
      if (named === undefined ? position === reader.position : reader.names.includes(named))
        fileArgument(out, callee, value, reader, named === undefined);
      if (named === undefined) position++;
      arg = [];
    };
    for (let j = i + 2; j < tokens.length; j++) {
      const t = tokens[j]!;
      const punct = t.kind === 'punct' ? t.text : '';
      if (depth === 0 && (punct === ')' || punct === ',')) {
        endArgument();
        if (punct === ')') break;
        continue;
      }
      if (punct === '(' || punct === '[' || punct === '{') depth++;
      if (punct === ')' || punct === ']' || punct === '}') depth--;
      arg.push(t);
    }
  }
  return out;
}
