import { describe, expect, it } from 'vitest';
import { editText } from './text-edit.js';

describe('editText', () => {
  it('replaces the one occurrence and nothing else', () => {
    expect(editText('a-b-c', { oldText: '-b-', newText: '+', replaceAll: false })).toEqual({
      ok: true,
      text: 'a+c',
      replaced: 1,
    });
  });

  it('counts occurrences without overlap and names the line each starts on', () => {
    const outcome = editText('aaaa\nx\naa', { oldText: 'aa', newText: 'b', replaceAll: false });
    expect(outcome).toMatchObject({ ok: false, matches: 3, lines: [1, 1, 3] });
    expect(editText('aaaa\nx\naa', { oldText: 'aa', newText: 'b', replaceAll: true })).toMatchObject({
      ok: true,
      text: 'bb\nx\nb',
      replaced: 3,
    });
  });

  it('lists at most twenty lines in the refusal and counts the rest', () => {
    const text = Array.from({ length: 25 }, () => 'hit').join('\n');
    const outcome = editText(text, { oldText: 'hit', newText: 'x', replaceAll: false });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.lines).toHaveLength(25);
    expect(outcome.reason).toContain('occurs 25 times (starting on lines 1, 2, 3');
    expect(outcome.reason).toContain('20 and 5 more)');
  });

  it('counts a match spanning lines on the line where it starts', () => {
    const outcome = editText('a\nb\nc\nb\nc', { oldText: 'b\nc', newText: 'x', replaceAll: false });
    expect(outcome).toMatchObject({ ok: false, matches: 2, lines: [2, 4] });
  });

  it('refuses an empty or unchanged text and reports 0 matches', () => {
    expect(editText('abc', { oldText: '', newText: 'x', replaceAll: true })).toMatchObject({ ok: false });
    expect(editText('abc', { oldText: 'b', newText: 'b', replaceAll: false })).toMatchObject({ ok: false });
    const none = editText('abc', { oldText: 'z', newText: 'y', replaceAll: true });
    expect(none).toMatchObject({ ok: false, matches: 0, lines: [] });
  });
});
