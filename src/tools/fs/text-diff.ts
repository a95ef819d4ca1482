/**
 * Line-based unified diff (Myers' O(ND) algorithm), dependency-free. The common head and tail
 * are trimmed first so small edits to large files stay cheap; `maxEdits` bounds the work when
 * the inputs share almost nothing.
 */

type Op = { kind: ' ' | '-' | '+'; line: string };

export class DiffTooLargeError extends Error {}

/** Splits text into lines; a final newline does not create an empty last line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function myers(a: readonly string[], b: readonly string[], maxEdits: number): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max; d++) {
    if (d > maxEdits) throw new DiffTooLargeError(`more than ${maxEdits} lines differ`);
    trace.push(v.slice());
    const next = v;
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0))
          ? (v[offset + k + 1] ?? 0)
          : (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    v = next;
    if (found >= 0) break;
  }
  // Walk the trace backwards to recover the edit script.
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d] as Int32Array;
    const k = x - y;
    const down = k === -d || (k !== d && (prev[offset + k - 1] ?? 0) < (prev[offset + k + 1] ?? 0));
    const prevK = down ? k + 1 : k - 1;
    const prevX = prev[offset + prevK] ?? 0;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: ' ', line: a[--x] as string });
      y--;
    }
    if (down) ops.push({ kind: '+', line: b[--y] as string });
    else ops.push({ kind: '-', line: a[--x] as string });
  }
  while (x > 0 && y > 0) {
    ops.push({ kind: ' ', line: a[--x] as string });
    y--;
  }
  return ops.reverse();
}

export interface UnifiedDiffOptions {
  fromName: string;
  toName: string;
  context?: number;
  maxEdits?: number;
}

/** Unified diff of two texts; an empty string when they are equal line for line. */
export function unifiedDiff(before: string, after: string, options: UnifiedDiffOptions): string {
  const a = splitLines(before);
  const b = splitLines(after);
  const context = options.context ?? 3;
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  if (head === a.length && head === b.length) return '';
  const middle = myers(
    a.slice(head, a.length - tail),
    b.slice(head, b.length - tail),
    options.maxEdits ?? 4000,
  );
  const ops: Op[] = [
    ...a.slice(0, head).map((line): Op => ({ kind: ' ', line })),
    ...middle,
    ...a.slice(a.length - tail).map((line): Op => ({ kind: ' ', line })),
  ];
  return `--- ${options.fromName}\n+++ ${options.toName}\n${hunks(ops, context).join('')}`;
}

function hunks(ops: Op[], context: number): string[] {
  const out: string[] = [];
  // Positions (1-based line numbers) of every op in both files.
  const posA: number[] = [];
  const posB: number[] = [];
  let la = 1;
  let lb = 1;
  for (const op of ops) {
    posA.push(la);
    posB.push(lb);
    if (op.kind !== '+') la++;
    if (op.kind !== '-') lb++;
  }
  let i = 0;
  while (i < ops.length) {
    while (i < ops.length && ops[i]?.kind === ' ') i++;
    if (i >= ops.length) break;
    const start = Math.max(0, i - context);
    let end = i;
    // Extend while the next change is within 2*context unchanged lines.
    for (;;) {
      while (end < ops.length && ops[end]?.kind !== ' ') end++;
      let gap = end;
      while (gap < ops.length && ops[gap]?.kind === ' ') gap++;
      if (gap < ops.length && gap - end <= 2 * context) end = gap;
      else {
        end = Math.min(ops.length, end + context);
        break;
      }
    }
    const slice = ops.slice(start, end);
    const countA = slice.filter((o) => o.kind !== '+').length;
    const countB = slice.filter((o) => o.kind !== '-').length;
    const startA = countA === 0 ? (posA[start] ?? 1) - 1 : (posA[start] ?? 1);
    const startB = countB === 0 ? (posB[start] ?? 1) - 1 : (posB[start] ?? 1);
    out.push(`@@ -${startA},${countA} +${startB},${countB} @@\n`);
    for (const op of slice) out.push(`${op.kind}${op.line}\n`);
    i = end;
  }
  return out;
}
