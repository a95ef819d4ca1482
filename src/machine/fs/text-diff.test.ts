import { describe, expect, it } from 'vitest';
import { DiffTooLargeError, unifiedDiff } from './text-diff.js';

const names = { fromName: 'a.txt', toName: 'b.txt' };

describe('unifiedDiff', () => {
  it('writes hunks with both counts and three lines of context', () => {
    expect(unifiedDiff('a\nb\nc\n', 'a\nB\nc\n', names)).toBe(
      '--- a.txt\n+++ b.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n',
    );
    const before = `${Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n')}\n`;
    const after = before.replace('l2\n', 'two\n').replace('l17\n', '');
    expect(unifiedDiff(before, after, names)).toBe(
      '--- a.txt\n+++ b.txt\n@@ -1,6 +1,6 @@\n l0\n l1\n-l2\n+two\n l3\n l4\n l5\n' +
        '@@ -15,6 +15,5 @@\n l14\n l15\n l16\n-l17\n l18\n l19\n',
    );
  });

  it('numbers an empty side by the line before it', () => {
    expect(unifiedDiff('', 'a\n', names)).toBe('--- a.txt\n+++ b.txt\n@@ -0,0 +1,1 @@\n+a\n');
    expect(unifiedDiff('a\n', '', names)).toBe('--- a.txt\n+++ b.txt\n@@ -1,1 +0,0 @@\n-a\n');
  });

  it('ignores line endings and a missing final newline', () => {
    expect(unifiedDiff('a\r\nb\r\n', 'a\nb', names)).toBe('');
  });

  it('stops past maxEdits', () => {
    const a = Array.from({ length: 50 }, (_, i) => `a${i}`).join('\n');
    const b = Array.from({ length: 50 }, (_, i) => `b${i}`).join('\n');
    expect(() => unifiedDiff(a, b, { ...names, maxEdits: 10 })).toThrow(DiffTooLargeError);
    expect(() => unifiedDiff(a, b, { ...names, maxEdits: 10 })).toThrow('more than 10 lines differ');
  });
});
