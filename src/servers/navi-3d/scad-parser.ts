/**
 * A forgiving reader of OpenSCAD 2021.01's grammar, for lint: it finds the statements, what
 * they define (modules, functions, names), what they call, and where a statement does not end
 * as it should. It stops at nothing: after a problem it skips to the next `;` or `}` and goes
 * on. It expects balanced brackets; check them first (`checkBrackets`). The files the code
 * names are not its business: what it skips must not hide one (scad-file-calls.ts).
 */
import { CHILDLESS_MODULES } from './scad-builtins.js';
import type { LexProblem, Token } from './scad-lexer.js';

export interface Call {
  name: string;
  line: number;
}

/** What the code defines and calls. */
export interface ParsedScad {
  modules: Set<string>;
  functions: Set<string>;
  /** Every name assigned or bound (parameters, for, let): a call through one is no unknown function. */
  variables: Set<string>;
  moduleCalls: Call[];
  functionCalls: Call[];
  problems: LexProblem[];
}

/** Problems reported per file; past this the code is too broken for more to help. */
const MAX_PROBLEMS = 50;
/**
 * Statements, calls, expressions and list elements nested in one another, at most: far more
 * than code a person writes, and far fewer than would end JavaScript's stack (the parser
 * recurses), so hostile code gets a problem instead of a crash.
 */
const MAX_DEPTH = 200;
const MODIFIERS = new Set(['!', '#', '%', '*']);
const BINARY_LEVELS: ReadonlyArray<ReadonlySet<string>> = [
  new Set(['||']),
  new Set(['&&']),
  new Set(['==', '!=']),
  new Set(['<', '>', '<=', '>=']),
  new Set(['+', '-']),
  new Set(['*', '/', '%']),
];

/** Thrown to abandon one statement after its problem was recorded. */
class Skip extends Error {}

export function parseScad(tokens: readonly Token[]): ParsedScad {
  return new Parser(tokens).run();
}

class Parser {
  private i = 0;
  private depth = 0;
  private readonly out: ParsedScad = {
    modules: new Set(),
    functions: new Set(),
    variables: new Set(),
    moduleCalls: [],
    functionCalls: [],
    problems: [],
  };

  constructor(private readonly tokens: readonly Token[]) {}

  run(): ParsedScad {
    while (this.i < this.tokens.length && this.out.problems.length < MAX_PROBLEMS) this.statementOrSkip();
    return this.out;
  }

  // --- tokens ---

  private peek(ahead = 0): Token | undefined {
    return this.tokens[this.i + ahead];
  }

  private is(text: string, ahead = 0): boolean {
    const t = this.peek(ahead);
    return t !== undefined && (t.kind === 'punct' || t.kind === 'ident') && t.text === text;
  }

  private next(): Token {
    const t = this.tokens[this.i];
    if (!t) this.fail(this.lastLine(), 'the code ends in the middle of a statement');
    this.i++;
    return t;
  }

  private lastLine(): number {
    return this.tokens.at(-1)?.line ?? 1;
  }

  private prevLine(): number {
    return this.tokens[this.i - 1]?.line ?? 1;
  }

  private expect(text: string, after: string): Token {
    const t = this.peek();
    if (t && t.text === text && t.kind === 'punct') return this.next();
    this.unexpected(`'${text}' ${after}`);
  }

  private ident(what: string): Token {
    const t = this.peek();
    if (t?.kind === 'ident') return this.next();
    this.unexpected(what);
  }

  private problem(line: number, message: string): void {
    if (this.out.problems.length < MAX_PROBLEMS) this.out.problems.push({ line, message });
  }

  private fail(line: number, message: string): never {
    this.problem(line, message);
    throw new Skip();
  }

  /** Reads one nested thing, or fails when the nesting is too deep to read safely. */
  private nested(read: () => void): void {
    if (this.depth >= MAX_DEPTH)
      this.fail(
        this.peek()?.line ?? this.lastLine(),
        `the code is nested more than ${MAX_DEPTH} levels deep here; lint reads no deeper`,
      );
    this.depth++;
    try {
      read();
    } finally {
      this.depth--;
    }
  }

  private unexpected(wanted: string): never {
    const t = this.peek();
    if (!t) this.fail(this.lastLine(), `the code ends where ${wanted} was expected`);
    this.fail(t.line, `expected ${wanted}, found ${describe(t)}`);
  }

  // --- statements ---

  private statementOrSkip(): void {
    const start = this.i;
    try {
      this.nested(() => this.statement());
    } catch (err) {
      if (!(err instanceof Skip)) throw err;
      this.skipStatement(start);
    }
  }

  /**
   * Skips the broken statement that began at `start`: to just after its `;` or its closing `}`,
   * or to the `}` closing the block around it. Counted from the statement's start, so brackets
   * it opened before the problem are closed again first.
   */
  private skipStatement(start: number): void {
    this.i = start;
    let depth = 0;
    while (this.i < this.tokens.length) {
      const t = this.tokens[this.i]!;
      if (t.kind === 'punct') {
        if (t.text === '(' || t.text === '[' || t.text === '{') depth++;
        else if (t.text === ')' || t.text === ']' || t.text === '}') {
          if (depth === 0) {
            if (t.text === '}') return;
          } else depth--;
          if (depth === 0 && t.text === '}') {
            this.i++;
            return;
          }
        } else if (t.text === ';' && depth === 0) {
          this.i++;
          return;
        }
      }
      this.i++;
    }
  }

  private statement(): void {
    const t = this.peek()!;
    // Their files are taken from the tokens (`fileReferences`), which needs no parse.
    if (t.kind === 'include' || t.kind === 'use') {
      this.next();
      return;
    }
    if (this.is(';')) {
      this.next();
      return;
    }
    if (this.is('{')) {
      this.block();
      return;
    }
    if (t.kind === 'ident' && t.text === 'module' && this.peek(1)?.kind === 'ident') {
      this.next();
      const name = this.next();
      this.out.modules.add(name.text);
      this.params();
      this.statementOrSkip();
      return;
    }
    if (t.kind === 'ident' && t.text === 'function' && this.peek(1)?.kind === 'ident') {
      this.next();
      const name = this.next();
      this.out.functions.add(name.text);
      this.params();
      this.expect('=', `after the parameters of function ${name.text}`);
      this.expr();
      this.semicolon(`function ${name.text}(…) = …`);
      return;
    }
    if (t.kind === 'ident' && this.is('=', 1)) {
      this.next();
      this.next();
      this.out.variables.add(t.text);
      this.expr();
      this.semicolon(`${t.text} = …`);
      return;
    }
    this.instantiation();
  }

  private block(): void {
    this.expect('{', '');
    while (this.peek() && !this.is('}')) this.statementOrSkip();
    this.expect('}', 'to close the block');
  }

  /** The `;` ending an assignment or function; its absence is the mistake lint looks for most. */
  private semicolon(what: string): void {
    if (this.is(';')) {
      this.next();
      return;
    }
    const end = this.prevLine();
    const t = this.peek();
    // A new line or the block's end: read on as if the ';' were there.
    if (!t || t.line > end || this.is('}')) {
      this.problem(end, `missing ';' at the end of \`${what}\``);
      return;
    }
    this.fail(t.line, `expected ';' after \`${what}\`, found ${describe(t)}`);
  }

  private instantiation(): void {
    this.nested(() => this.call());
  }

  /** A module call (or an if) with its children. */
  private call(): void {
    while (this.peek()?.kind === 'punct' && MODIFIERS.has(this.peek()!.text)) this.next();
    const t = this.ident('a module call such as cube(10);');
    if (t.text === 'if') {
      this.expect('(', 'after if');
      this.expr();
      this.expect(')', 'to close the condition of if');
      this.child('if (…)', false);
      if (this.is('else')) {
        this.next();
        this.child('else', false);
      }
      return;
    }
    if (t.text === 'module' || t.text === 'function' || t.text === 'else')
      this.fail(t.line, `'${t.text}' cannot start a statement here`);
    this.expect('(', `after ${t.text}: a module call is written ${t.text}(…)`);
    const binds = t.text === 'for' || t.text === 'intersection_for' || t.text === 'let';
    this.args(t.text, binds);
    this.out.moduleCalls.push({ name: t.text, line: t.line });
    this.child(`${t.text}(…)`, CHILDLESS_MODULES.has(t.text));
  }

  /** What follows a module call: `;`, a block, or one more call (its child). */
  private child(parent: string, childless: boolean): void {
    const end = this.prevLine();
    if (this.is(';')) {
      this.next();
      return;
    }
    if (this.is('{')) {
      if (childless) this.problem(end, `\`${parent}\` takes no children, but a { … } block follows it`);
      this.block();
      return;
    }
    const t = this.peek();
    const startsCall =
      t !== undefined &&
      ((t.kind === 'punct' && MODIFIERS.has(t.text)) ||
        (t.kind === 'ident' && !['module', 'function', 'else'].includes(t.text) && !this.is('=', 1)));
    if (!startsCall || !t) {
      if (!t || t.line > end || this.is('}')) {
        this.problem(end, `missing ';' after \`${parent}\``);
        return;
      }
      this.fail(t.line, `expected ';' after \`${parent}\`, found ${describe(t)}`);
    }
    if (childless)
      this.problem(
        end,
        t.line > end
          ? `missing ';' after \`${parent}\`: without it the call on line ${t.line} becomes its child, which it ignores`
          : `\`${parent}\` takes no children; end it with ';' before the next call`,
      );
    this.instantiation();
  }

  /** `(a, b = 1, …)` of a module or function definition; every name is bound. */
  private params(): void {
    this.expect('(', 'before the parameters');
    while (!this.is(')')) {
      const name = this.ident('a parameter name');
      this.out.variables.add(name.text);
      if (this.is('=')) {
        this.next();
        this.expr();
      }
      if (!this.is(',')) break;
      this.next();
    }
    this.expect(')', 'to close the parameters');
  }

  /** Arguments of a call, after its `(` up to and including `)`. */
  private args(callee: string, binds: boolean): void {
    while (!this.is(')')) {
      if (this.peek()?.kind === 'ident' && this.is('=', 1)) {
        const named = this.next().text;
        this.next();
        if (binds) this.out.variables.add(named);
      }
      this.expr();
      if (!this.is(',')) break;
      this.next();
    }
    this.expect(')', `to close the arguments of ${callee}`);
  }

  // --- expressions ---

  private expr(): void {
    this.nested(() => this.expression());
  }

  private expression(): void {
    const t = this.peek();
    if (t?.kind === 'ident' && this.is('(', 1)) {
      if (t.text === 'let') {
        this.next();
        this.next();
        this.args('let', true);
        this.expr();
        return;
      }
      if (t.text === 'assert' || t.text === 'echo') {
        this.next();
        this.next();
        this.args(t.text, false);
        if (this.startsExpr()) this.expr();
        return;
      }
      if (t.text === 'function') {
        this.next();
        this.params();
        this.expr();
        return;
      }
    }
    this.binary(0);
    if (this.is('?')) {
      this.next();
      this.expr();
      this.expect(':', 'in a condition ? a : b, after a');
      this.expr();
    }
  }

  private startsExpr(): boolean {
    const t = this.peek();
    if (!t) return false;
    if (t.kind !== 'punct') return t.kind !== 'include' && t.kind !== 'use';
    return ['(', '[', '-', '+', '!'].includes(t.text);
  }

  private binary(level: number): void {
    if (level === BINARY_LEVELS.length) {
      this.power();
      return;
    }
    this.binary(level + 1);
    while (this.peek()?.kind === 'punct' && BINARY_LEVELS[level]!.has(this.peek()!.text)) {
      this.next();
      this.binary(level + 1);
    }
  }

  /** `a ^ b ^ c`, read as a chain: lint needs no grouping, and a loop needs no stack. */
  private power(): void {
    this.unary();
    while (this.is('^')) {
      this.next();
      this.unary();
    }
  }

  private unary(): void {
    while (this.is('-') || this.is('+') || this.is('!')) this.next();
    this.postfix();
  }

  private postfix(): void {
    const first = this.peek();
    this.primary();
    let callee = first?.kind === 'ident' ? first : undefined;
    for (;;) {
      if (this.is('(')) {
        this.next();
        if (callee) this.out.functionCalls.push({ name: callee.text, line: callee.line });
        this.args(callee?.text ?? '', false);
      } else if (this.is('[')) {
        this.next();
        this.expr();
        this.expect(']', 'to close the index');
      } else if (this.is('.')) {
        this.next();
        this.ident('a member name after "."');
      } else return;
      callee = undefined;
    }
  }

  private primary(): void {
    const t = this.peek();
    if (!t) this.unexpected('a value');
    if (t.kind === 'number' || t.kind === 'string' || t.kind === 'ident') {
      if (t.kind === 'ident' && ['module', 'function', 'for', 'if', 'else', 'each'].includes(t.text))
        this.unexpected('a value');
      this.next();
      return;
    }
    if (this.is('(')) {
      this.next();
      this.expr();
      this.expect(')', 'to close the parenthesis');
      return;
    }
    if (this.is('[')) {
      this.list();
      return;
    }
    this.unexpected('a value');
  }

  /** `[]`, a range `[a : b : c]`, or a list whose elements may be comprehensions. */
  private list(): void {
    this.expect('[', '');
    if (this.is(']')) {
      this.next();
      return;
    }
    if (!this.startsComprehension()) {
      this.expr();
      if (this.is(':')) {
        this.next();
        this.expr();
        if (this.is(':')) {
          this.next();
          this.expr();
        }
        this.expect(']', 'to close the range');
        return;
      }
      if (!this.is(',')) {
        this.expect(']', 'to close the list, or a comma before the next element');
        return;
      }
      this.next();
    }
    while (!this.is(']')) {
      this.element();
      if (!this.is(',')) break;
      this.next();
    }
    this.expect(']', 'to close the list, or a comma before the next element');
  }

  private startsComprehension(): boolean {
    const t = this.peek();
    return (
      t?.kind === 'ident' &&
      ['for', 'each', 'if', 'let'].includes(t.text) &&
      (t.text === 'each' || this.is('(', 1))
    );
  }

  /** One element of a list: a value, or `for`, `each`, `if` and `let` generating values. */
  private element(): void {
    this.nested(() => this.generator());
  }

  private generator(): void {
    const t = this.peek();
    if (t?.kind !== 'ident' || !this.startsComprehension()) {
      this.expr();
      return;
    }
    this.next();
    if (t.text === 'each') {
      this.element();
      return;
    }
    this.expect('(', `after ${t.text}`);
    if (t.text === 'if') {
      this.expr();
      this.expect(')', 'to close the condition of if');
      this.element();
      if (this.is('else')) {
        this.next();
        this.element();
      }
      return;
    }
    this.bindings(t.text);
    if (t.text === 'for' && this.is(';')) {
      // for (init; condition; update): the C-like form
      this.next();
      this.expr();
      this.expect(';', 'after the condition of for (…; …; …)');
      this.bindings('for');
    }
    this.expect(')', `to close the ${t.text}`);
    this.element();
  }

  /** `a = 1, b = 2` inside for (…) or let (…) of a list. */
  private bindings(context: string): void {
    while (!this.is(')') && !this.is(';')) {
      const name = this.ident(`a name to bind in ${context} (…)`);
      this.out.variables.add(name.text);
      this.expect('=', `after ${name.text} in ${context} (…)`);
      this.expr();
      if (!this.is(',')) break;
      this.next();
    }
  }
}

function describe(t: Token): string {
  if (t.kind === 'string') return `the string ${JSON.stringify(t.text.slice(0, 40))}`;
  if (t.kind === 'include' || t.kind === 'use') return `${t.kind} <${t.text}>`;
  return `'${t.text}'`;
}
