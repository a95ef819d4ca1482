/**
 * What lint_scad reports from the gathered sources: unreadable text and unmatched brackets,
 * statements that do not end as they should (the missing `;` above all), calls of modules and
 * functions that neither OpenSCAD 2021.01 nor the code or its included files define, and the
 * files it names that navi-3d will not read. Pure: the files were read before.
 */
import { BUILTIN_FUNCTIONS, BUILTIN_MODULES } from './scad-builtins.js';
import type { GatheredSources, SourceProblem } from './scad-sources.js';

/** Every problem, the file checks included; an empty list means lint found nothing. */
export function lintProblems(gathered: GatheredSources): SourceProblem[] {
  const problems: SourceProblem[] = [];
  for (const source of gathered.sources) {
    for (const p of source.readProblems) problems.push({ file: source.file, ...p });
    for (const p of source.parsed?.problems ?? []) problems.push({ file: source.file, ...p });
  }
  problems.push(...gathered.fileProblems);
  problems.push(...unknownCalls(gathered));
  return problems;
}

/** Calls in the code itself (not its included files) that nothing defines. */
function unknownCalls(gathered: GatheredSources): SourceProblem[] {
  const code = gathered.sources[0];
  if (!code?.parsed) return [];
  const modules = new Set(BUILTIN_MODULES);
  const functions = new Set(BUILTIN_FUNCTIONS);
  const variables = new Set<string>();
  for (const source of gathered.sources) {
    for (const m of source.parsed?.modules ?? []) modules.add(m);
    for (const f of source.parsed?.functions ?? []) functions.add(f);
    for (const v of source.parsed?.variables ?? []) variables.add(v);
  }
  const problems: SourceProblem[] = [];
  const seen = new Set<string>();
  const report = (line: number, message: string) => {
    if (seen.has(`${line}:${message}`)) return;
    seen.add(`${line}:${message}`);
    problems.push({ file: code.file, line, message });
  };
  for (const call of code.parsed.moduleCalls) {
    if (modules.has(call.name)) continue;
    const hint = functions.has(call.name)
      ? ` ${call.name} is a function: use its value, as in x = ${call.name}(…);`
      : suggestion(call.name, modules);
    report(
      call.line,
      `unknown module ${call.name}(): not an OpenSCAD 2021.01 module, and not defined by the code or a file it includes.${hint}`,
    );
  }
  for (const call of code.parsed.functionCalls) {
    if (functions.has(call.name) || variables.has(call.name)) continue;
    const hint = modules.has(call.name)
      ? ` ${call.name} is a module, not a function: call it as a statement, ${call.name}(…);`
      : suggestion(call.name, functions);
    report(
      call.line,
      `unknown function ${call.name}(): not an OpenSCAD 2021.01 function, and not defined by the code or a file it includes.${hint}`,
    );
  }
  return problems;
}

/** ` Did you mean cube?` for a name a letter or two away from a known one, else ''. */
function suggestion(name: string, known: ReadonlySet<string>): string {
  const most = name.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = most + 1;
  for (const candidate of known) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best ? ` Did you mean ${best}?` : '';
}

/** Levenshtein distance, or `cap` as soon as it is known to be at least that. */
function distance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let smallest = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      row.push(value);
      smallest = Math.min(smallest, value);
    }
    if (smallest >= cap) return cap;
    previous = row;
  }
  return Math.min(previous[b.length]!, cap);
}
