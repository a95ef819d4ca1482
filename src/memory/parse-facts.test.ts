import { describe, expect, it } from 'vitest';
import { parseFacts } from './parse-facts.js';

describe('parseFacts', () => {
  it('reads {facts:[...]} inside a code fence surrounded by prose', () => {
    const answer = [
      'Sure! Here is what I found:',
      '```json',
      '{"facts": [{"category": "Preference", "key": "Favourite Editor", "value": "Uses Neovim"}]}',
      '```',
      'Let me know if you need anything "else.',
    ].join('\n');
    const r = parseFacts(answer);
    expect(r.found).toBe(true);
    expect(r.facts).toEqual([{ category: 'preference', key: 'favourite_editor', value: 'Uses Neovim' }]);
  });

  it('reads a bare array with trailing commas', () => {
    const r = parseFacts(
      '[{"category":"work","key":"employer","value":"Acme",},{"category":"work","key":"role","value":"SRE",},]',
    );
    expect(r.facts.map((f) => f.key)).toEqual(['employer', 'role']);
  });

  it('keeps the complete objects of an answer cut off mid-object', () => {
    const r = parseFacts(
      '{"facts":[{"category":"home","key":"city","value":"Lyon"},{"category":"home","key":"pets","value":"two ca',
    );
    expect(r.facts).toEqual([{ category: 'home', key: 'city', value: 'Lyon' }]);
  });

  it('merges duplicates (the later value wins) and normalises keys', () => {
    const r = parseFacts(
      '[{"category":"env","key":"OS","value":"Debian 11"},{"category":"ENV ","key":"os","value":"Debian 12"},{"category":"env","key":"shell-name","value":"zsh"}]',
    );
    expect(r.facts).toEqual([
      { category: 'env', key: 'os', value: 'Debian 12' },
      { category: 'env', key: 'shell_name', value: 'zsh' },
    ]);
  });

  it('drops invalid items and keeps the valid ones', () => {
    const r = parseFacts(
      '[{"category":"a","key":"","value":"x"},{"category":"a","key":"k"},{"category":"a","key":"n","value":{"x":1}},' +
        '{"category":["a"],"key":"k2","value":"v"},{"key":"age","value":42},{"category":"a","key":"ok","value":"  spaced   out  "}]',
    );
    expect(r.facts).toEqual([
      { category: 'general', key: 'age', value: '42' },
      { category: 'a', key: 'ok', value: 'spaced out' },
    ]);
    expect(r.dropped).toBe(4);
  });

  it('handles braces and quotes inside JSON strings', () => {
    const r = parseFacts(
      '[{"category":"project","key":"snippet","value":"uses {braces} and \\"quotes\\" in text"}]',
    );
    expect(r.facts[0]?.value).toBe('uses {braces} and "quotes" in text');
  });

  it('tells an empty answer apart from no answer', () => {
    expect(parseFacts('{"facts": []}')).toMatchObject({ facts: [], found: true });
    expect(parseFacts('[]')).toMatchObject({ facts: [], found: true });
    expect(parseFacts('I could not find anything worth remembering.')).toMatchObject({
      facts: [],
      found: false,
    });
  });
});
