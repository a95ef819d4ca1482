import { describe, expect, it } from 'vitest';
import {
  cap,
  cleanResult,
  collapseWhitespace,
  fieldText,
  firstDistinct,
  SNIPPET_CHARS,
  TITLE_CHARS,
  webUrl,
} from './clean-text.js';

describe('collapseWhitespace', () => {
  it('turns runs of spaces, tabs, newlines and non-breaking spaces into one space and drops zero-width ones', () => {
    expect(collapseWhitespace('  a \t\n b\u00a0\u00a0c\u200bd  ')).toBe('a b cd');
  });
});

describe('cap', () => {
  it('leaves short text alone and cuts long text to the limit with an ellipsis', () => {
    expect(cap('short', 10)).toBe('short');
    const cut = cap('x'.repeat(50), 10);
    expect(cut).toHaveLength(10);
    expect(cut.endsWith('…')).toBe(true);
  });

  it('never leaves half of a surrogate pair at the cut', () => {
    const cut = cap(`${'a'.repeat(8)}😀😀😀`, 10);
    expect(cut).not.toMatch(/[\ud800-\udbff]…$/);
    expect(cut.length).toBeLessThanOrEqual(10);
  });
});

describe('fieldText', () => {
  it('decodes entities and drops tags, scripts and styles in html fields', () => {
    const raw =
      'Tom &amp; Jerry&#x27;s <strong>best</strong>&nbsp;day<script>alert(1)</script><style>p{}</style> &mdash; ok';
    expect(fieldText(raw, 100, 'html')).toBe("Tom & Jerry's best day — ok");
  });

  it('decodes entities but keeps a literal < in text fields', () => {
    expect(fieldText('if a<b &amp;&amp; b&gt;c then <b>x</b>', 100, 'text')).toBe(
      'if a<b && b>c then <b>x</b>',
    );
  });

  it('takes plain fields as they are, without decoding twice', () => {
    expect(fieldText('&amp;lt; stays', 100, 'plain')).toBe('&amp;lt; stays');
  });

  it('gives an empty string for anything that is not a string', () => {
    for (const raw of [undefined, null, 42, {}, ['a']]) expect(fieldText(raw, 10, 'html')).toBe('');
  });

  it('caps a multi-megabyte field to the limit', () => {
    const raw = `<p>${'word &amp; '.repeat(500_000)}</p>`;
    const text = fieldText(raw, SNIPPET_CHARS, 'html');
    expect(text.length).toBeLessThanOrEqual(SNIPPET_CHARS);
    expect(text.startsWith('word & word &')).toBe(true);
  });
});

describe('webUrl', () => {
  it('keeps absolute http and https URLs', () => {
    expect(webUrl(' https://example.com/a?b=1 ')).toBe('https://example.com/a?b=1');
    expect(webUrl('http://example.com')).toBe('http://example.com/');
  });

  it('refuses other schemes, relative links, non-strings and absurdly long URLs', () => {
    for (const raw of [
      'javascript:alert(1)',
      'data:text/html,x',
      'file:///etc/passwd',
      '/relative',
      '',
      7,
      null,
    ])
      expect(webUrl(raw)).toBeUndefined();
    expect(webUrl(`https://example.com/${'a'.repeat(3000)}`)).toBeUndefined();
  });
});

describe('cleanResult', () => {
  it('uses the URL as the title when the title is missing and drops results without a usable URL', () => {
    expect(cleanResult({ title: '', url: 'https://example.com/', snippet: undefined }, 'html')).toEqual({
      title: 'https://example.com/',
      url: 'https://example.com/',
      snippet: '',
    });
    expect(cleanResult({ title: 'x', url: 'javascript:void(0)', snippet: '' }, 'html')).toBeUndefined();
  });

  it('caps the title', () => {
    const result = cleanResult({ title: 'T'.repeat(5000), url: 'https://example.com/', snippet: '' }, 'text');
    expect(result?.title.length).toBe(TITLE_CHARS);
  });
});

describe('firstDistinct', () => {
  it('skips missing and repeated results and stops at the limit', () => {
    const r = (n: number) => ({ title: `t${n}`, url: `https://e.com/${n}`, snippet: '' });
    expect(firstDistinct([r(1), undefined, r(1), r(2), r(3)], 2)).toEqual([r(1), r(2)]);
  });
});
