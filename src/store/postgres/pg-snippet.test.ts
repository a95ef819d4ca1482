import { describe, expect, it } from 'vitest';
import { parseSnippet } from '../sqlite/search-store.js';
import { markSnippet, SNIPPET_WORDS } from './pg-snippet.js';

const terms = (...words: string[]) => words.map((word) => ({ word, prefix: false }));
const marked = (text: string, t: { word: string; prefix: boolean }[]) => {
  const { snippet, highlights } = parseSnippet(markSnippet(text, t));
  return { snippet, parts: highlights.map(([a, b]) => snippet.slice(a, b)) };
};

describe('markSnippet', () => {
  it('marks whole words only, the prefix term as the start of a word, whatever the case and accents', () => {
    expect(marked('Café au lait, cafeteria', terms('cafe'))).toEqual({
      snippet: 'Café au lait, cafeteria',
      parts: ['Café'],
    });
    expect(marked('Deployment deployed', [{ word: 'deploy', prefix: true }]).parts).toEqual([
      'Deployment',
      'deployed',
    ]);
    // A word whose accent is a combining mark stays one word.
    expect(marked('Cafe\u0301 open', terms('cafe')).parts).toEqual(['Cafe\u0301']);
  });

  it('shows the window with the most different words, with … where text is left out', () => {
    const filler = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}`).join(' ');
    const text = `${filler(50, 'a')} alpha ${filler(50, 'b')} alpha beta ${filler(50, 'c')}`;
    const { snippet, parts } = marked(text, terms('alpha', 'beta'));
    expect(parts).toEqual(['alpha', 'beta']);
    expect(snippet.startsWith('…') && snippet.endsWith('…')).toBe(true);
    expect(snippet.replace(/…/g, '').trim().split(' ')).toHaveLength(SNIPPET_WORDS);
  });

  it('cuts a very long text in one pass around its best window', () => {
    const filler = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i % 97}`).join(' ');
    // The only window with both words sits near the end of 60 000 words.
    const text = `${filler(30_000, 'a')} alpha ${filler(30_000, 'b')} alpha beta ${filler(5, 'c')}`;
    const { snippet, parts } = marked(text, terms('alpha', 'beta'));
    expect(parts).toEqual(['alpha', 'beta']);
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('c4')).toBe(true);
  });

  it('keeps a short text whole, drops the marker characters it holds, and survives text with no word', () => {
    expect(marked('odd \uE000text\uE001 here', terms('here'))).toEqual({
      snippet: 'odd text here',
      parts: ['here'],
    });
    expect(markSnippet('…?!', terms('x'))).toBe('…?!');
    expect(markSnippet('', terms('x'))).toBe('');
  });
});
