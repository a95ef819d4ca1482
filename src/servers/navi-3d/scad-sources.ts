/**
 * The OpenSCAD sources of one compile or lint: the code itself and every session file it
 * names, followed through includes, each read below the session folder and checked. What
 * lint reports about files and what compile_scad refuses before it runs OpenSCAD are the
 * same list, `fileProblems`: a path outside the session's files, a `..`, a link, a missing
 * file, or a file name computed at run time.
 */
import { extname, posix } from 'node:path';
import { type FileReference, includesOf, scanFileCalls } from './scad-file-calls.js';
import { checkBrackets, type LexProblem, lex } from './scad-lexer.js';
import { type ParsedScad, parseScad } from './scad-parser.js';
import { FileRefused, type SessionLookup, splitRelative } from './session-folder.js';

/** One problem, located: `file` is the code's own name (code.scad) or a session path. */
export interface SourceProblem {
  file: string;
  line: number;
  message: string;
}

export interface AnalysedSource {
  file: string;
  /** Lexer and bracket problems: when there are any, the code was not parsed. */
  readProblems: LexProblem[];
  parsed?: ParsedScad;
  references: FileReference[];
  /** Calls reading a file whose name is computed: compile_scad refuses to run them. */
  computedFiles: LexProblem[];
}

export interface GatheredSources {
  /** The code first, then each .scad file it includes or uses, in the order found. */
  sources: AnalysedSource[];
  /** Every session file the code needs, by its path relative to the session folder. */
  files: Map<string, Buffer>;
  /** Problems with the files it names; compile_scad runs nothing while there are any. */
  fileProblems: SourceProblem[];
}

const NO_SESSION_FOR_FILES =
  "this call came without a session id (Navi sends one), so navi-3d cannot read the session's files";

/** Largest .scad file read from the session, and largest other file (an STL to import). */
export const MAX_SOURCE_BYTES = 2 * 1024 * 1024;
const MAX_DATA_BYTES = 64 * 1024 * 1024;
const MAX_FILES = 50;
const MAX_TOTAL_BYTES = 128 * 1024 * 1024;

/**
 * Reads one source: tokens, brackets, and (when the brackets match) its statements. The files
 * it names come from the tokens alone, never from the parse: a statement the forgiving parser
 * gives up on must not hide an import() from the check.
 */
export function analyse(file: string, source: string): AnalysedSource {
  const { tokens, problems } = lex(source);
  // An unclosed string or comment swallows the brackets after it: those would only be noise.
  const readProblems = problems.length > 0 ? problems : checkBrackets(tokens);
  const calls = scanFileCalls(tokens);
  return {
    file,
    readProblems,
    ...(readProblems.length === 0 ? { parsed: parseScad(tokens) } : {}),
    references: [...includesOf(tokens), ...calls.references],
    computedFiles: calls.computedFiles,
  };
}

/** Whether a file read from the session is text OpenSCAD can read as source. */
function sourceText(data: Buffer): string | undefined {
  if (data.includes(0)) return undefined;
  return data.toString('utf8');
}

/**
 * Reads the code and, through the session folder, every file it names, recursively.
 * Never throws for a bad file: each becomes a problem naming the file and line that named it.
 */
export async function gatherSources(
  entry: { file: string; source: string; inline?: boolean },
  session: SessionLookup,
  signal?: AbortSignal,
): Promise<GatheredSources> {
  const sources: AnalysedSource[] = [];
  const files = new Map<string, Buffer>();
  const fileProblems: SourceProblem[] = [];
  let total = 0;
  const queue: AnalysedSource[] = [analyse(entry.file, entry.source)];
  const seen = new Set<string>([entry.file]);

  for (let current = queue.shift(); current; current = queue.shift()) {
    sources.push(current);
    const dir = posix.dirname(current.file);
    for (const p of current.computedFiles) fileProblems.push({ file: current.file, ...p });
    for (const ref of current.references) {
      signal?.throwIfAborted();
      const at = (message: string) => fileProblems.push({ file: current.file, line: ref.line, message });
      const shown = JSON.stringify(ref.path.length > 80 ? `${ref.path.slice(0, 80)}…` : ref.path);
      const named = ref.kind === 'import' ? `${ref.via} of ${shown}` : `${ref.via} <${shown.slice(1, -1)}>`;
      if (ref.escaped) {
        at(`${named}: write the file name without backslash escapes`);
        continue;
      }
      let names: string[];
      try {
        names = splitRelative(ref.path, named);
      } catch (err) {
        if (!(err instanceof FileRefused)) throw err;
        at(err.message);
        continue;
      }
      if (session.kind === 'none') {
        at(`${named}: ${NO_SESSION_FOR_FILES}`);
        continue;
      }
      if (session.kind === 'refused') {
        at(`${named}: ${session.reason}`);
        continue;
      }
      // include and use look beside the including file first, then in the library path (the
      // session folder); import() only beside the file.
      const relative = names.join('/');
      const candidates = [posix.normalize(posix.join(dir, relative))];
      if (ref.kind !== 'import' && dir !== '.') candidates.push(relative);
      let found: string | undefined;
      let data: Buffer | undefined;
      try {
        for (const candidate of candidates) {
          if (entry.inline && candidate === entry.file)
            throw new FileRefused(
              `${entry.file} is the name navi-3d gives the code passed as code, so a session file of that name cannot be read; rename the session file`,
            );
          if (files.has(candidate) || seen.has(candidate)) {
            found = candidate;
            break;
          }
          const limit = ref.kind === 'import' ? MAX_DATA_BYTES : MAX_SOURCE_BYTES;
          data = await session.folder.read(candidate, limit, signal);
          if (data) {
            found = candidate;
            break;
          }
        }
      } catch (err) {
        if (!(err instanceof FileRefused)) throw err;
        at(`${named}: ${err.message}`);
        continue;
      }
      if (!found) {
        at(
          `${named}: there is no such file among the session's files. Write it there first, or put its code into this file.`,
        );
        continue;
      }
      if (data) {
        if (files.size >= MAX_FILES || total + data.length > MAX_TOTAL_BYTES) {
          at(
            `${named}: the code names more files than navi-3d reads for one call (${MAX_FILES} files, ${MAX_TOTAL_BYTES} bytes)`,
          );
          continue;
        }
        total += data.length;
        files.set(found, data);
      }
      if (ref.kind === 'import' || seen.has(found)) continue;
      // Read before for an import() perhaps, but included now: OpenSCAD runs it, so it is checked.
      const bytes = files.get(found)!;
      if (bytes.length > MAX_SOURCE_BYTES) {
        at(
          `${named}: ${found} is ${bytes.length} bytes, more than the ${MAX_SOURCE_BYTES} bytes navi-3d reads of a .scad file`,
        );
        continue;
      }
      const text = sourceText(bytes);
      if (text === undefined || extname(found).toLowerCase() !== '.scad') {
        at(`${named}: ${found} is not an OpenSCAD source file (.scad text); include and use read only those`);
        continue;
      }
      seen.add(found);
      queue.push(analyse(found, text));
    }
  }
  return { sources, files, fileProblems };
}

/** `file line N: message`, sorted by file (the code first) and line. */
export function formatProblems(problems: readonly SourceProblem[], order: readonly string[]): string[] {
  const rank = (file: string) => {
    const i = order.indexOf(file);
    return i === -1 ? order.length : i;
  };
  return [...problems]
    .sort((a, b) => rank(a.file) - rank(b.file) || a.line - b.line)
    .map((p) => `${p.file} line ${p.line}: ${p.message}`);
}
