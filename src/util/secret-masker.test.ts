import { describe, expect, it } from 'vitest';
import { SECRET_MIN_LENGTH, SecretMasker } from './secret-masker.js';

const KEY = 'sk-test-4f9a8b7c6d5e/x+y=z';
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url');

function masker(): SecretMasker {
  return new SecretMasker([{ name: 'OPENAI_API_KEY', value: KEY }]);
}

describe('SecretMasker', () => {
  it('hides the plain value and names the secret, never showing the value', () => {
    const out = masker().mask(`key is ${KEY}, again:${KEY}.`);
    expect(out).toBe('key is [secret hidden: OPENAI_API_KEY], again:[secret hidden: OPENAI_API_KEY].');
  });

  it('hides the base64 form at all three byte alignments inside a longer base64 text', () => {
    const m = masker();
    for (const before of ['', 'a', 'ab', 'abc', 'abcd']) {
      const encoded = b64(`${before}${KEY} trailing bytes`);
      const out = m.mask(`data: ${encoded}`);
      expect(out, `after ${before.length} bytes`).toContain('[secret hidden: OPENAI_API_KEY]');
      // Nothing long enough to rebuild the key survives: decoding what is left shows no part of it.
      expect(
        Buffer.from(out.replace(/\[secret hidden: [A-Z_]+\]/, ''), 'base64').toString('latin1'),
      ).not.toContain(KEY.slice(0, 8));
    }
  });

  it('hides the base64url form at all three alignments', () => {
    // Bytes chosen so the standard and url alphabets differ ("+" and "/" appear).
    const value = '\u00fb\u00ff\u00fe>?>?secretvalue';
    const m = new SecretMasker([{ name: 'VAULT_ITEM', value }]);
    for (const before of ['', 'a', 'ab']) {
      const std = b64(`${before}${value}!`);
      const url = b64url(`${before}${value}!`);
      expect(std).not.toBe(url.replace(/=+$/, ''));
      expect(m.mask(url)).toContain('[secret hidden: VAULT_ITEM]');
      expect(m.mask(std)).toContain('[secret hidden: VAULT_ITEM]');
    }
  });

  it('hides percent-encoded forms: encodeURIComponent, form style with +, either hex case', () => {
    const value = 'pa ss/word&more=1';
    const m = new SecretMasker([{ name: 'DB_PASSWORD', value }]);
    const component = encodeURIComponent(value);
    const form = new URLSearchParams({ p: value }).toString();
    expect(m.mask(`?p=${component}&x=1`)).toBe('?p=[secret hidden: DB_PASSWORD]&x=1');
    expect(m.mask(form)).toBe('p=[secret hidden: DB_PASSWORD]');
    expect(m.mask(component.toLowerCase())).toBe('[secret hidden: DB_PASSWORD]');
    expect(m.mask(component.replaceAll('%20', '+'))).toBe('[secret hidden: DB_PASSWORD]');
  });

  it('hides the JSON-escaped form (a value with quotes or backslashes inside a JSON line)', () => {
    const value = 'ab"cd\\ef"gh';
    const m = new SecretMasker([{ name: 'T_SECRET', value }]);
    const line = JSON.stringify({ msg: `x ${value} y` });
    expect(m.mask(line)).toBe('{"msg":"x [secret hidden: T_SECRET] y"}');
  });

  it('hides overlapping and nested secrets whole', () => {
    const m = new SecretMasker([
      { name: 'A_TOKEN', value: 'AAAAbbbbCCCC' },
      { name: 'B_TOKEN', value: 'CCCCddddEEEE' },
      { name: 'C_TOKEN', value: 'xxAAAAbbbbCCCCyy' },
    ]);
    expect(m.mask('1 AAAAbbbbCCCCddddEEEE 2')).toBe('1 [secret hidden: A_TOKEN, B_TOKEN] 2');
    // The contained secret is there too, so it is named as well; the range hidden is the outer one.
    expect(m.mask('1 xxAAAAbbbbCCCCyy 2')).toBe('1 [secret hidden: C_TOKEN, A_TOKEN] 2');
    expect(m.mask('AAAAbbbbCCCC')).toBe('[secret hidden: A_TOKEN]');
  });

  it('masks a secret added at run time from the next call on, keeping earlier ones', () => {
    const m = masker();
    const revealed = 'vault-revealed-0123456789';
    expect(m.mask(revealed)).toBe(revealed);
    expect(m.add('mail_password', revealed)).toBe(true);
    expect(m.mask(`${revealed} ${KEY}`)).toBe(
      '[secret hidden: mail_password] [secret hidden: OPENAI_API_KEY]',
    );
    expect(m.names()).toEqual(['OPENAI_API_KEY', 'mail_password']);
  });

  it(`ignores values shorter than ${SECRET_MIN_LENGTH} characters (after trimming)`, () => {
    const m = new SecretMasker();
    expect(m.add('SHORT_TOKEN', 'abc1234')).toBe(false);
    expect(m.add('PADDED_TOKEN', '   abc1234   ')).toBe(false);
    expect(m.add('EMPTY_TOKEN', '')).toBe(false);
    expect(m.size).toBe(0);
    expect(m.mask('abc1234 stays')).toBe('abc1234 stays');
    expect(m.add('LONG_TOKEN', ' abcd1234\n')).toBe(true);
    expect(m.mask('x abcd1234 y')).toBe('x [secret hidden: LONG_TOKEN] y');
  });

  it('leaves ordinary text alone, including text that shares a prefix with a secret', () => {
    const m = masker();
    const text = `sk-test-4f9a8b7 is not the key; ${b64('sk-test-4f9a')} neither; plain words, numbers 12345678.`;
    expect(m.mask(text)).toBe(text);
    expect(new SecretMasker().mask(text)).toBe(text);
  });

  it('treats regular-expression characters in a value literally', () => {
    const m = new SecretMasker([{ name: 'X_SECRET', value: 'a.b*c+d?e(f)[g]' }]);
    expect(m.mask('aXbbbcdde(f)[g]')).toBe('aXbbbcdde(f)[g]');
    expect(m.mask('-a.b*c+d?e(f)[g]-')).toBe('-[secret hidden: X_SECRET]-');
  });

  it('maskJson returns the same object when clean and a masked copy otherwise', () => {
    const m = masker();
    const clean = { exit_code: 0, files: ['a.txt'] };
    expect(m.maskJson(clean)).toBe(clean);
    const dirty = { nested: { list: [`x${KEY}`], [KEY]: 1 }, image: b64(`pre${KEY}`) };
    const out = m.maskJson(dirty);
    expect(JSON.stringify(out)).not.toContain(KEY);
    expect(JSON.stringify(out)).not.toContain(b64(KEY).slice(4, 14));
    expect(out.nested.list[0]).toBe('x[secret hidden: OPENAI_API_KEY]');
    expect(dirty.nested.list[0]).toBe(`x${KEY}`);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => m.maskJson(cyclic)).toThrow();
  });

  it('reports the span of its longest form, so callers can mask before cutting', () => {
    expect(new SecretMasker().longestForm).toBe(0);
    expect(masker().longestForm).toBeGreaterThanOrEqual(encodeURIComponent(KEY).length);
  });
});
