import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NoticeSeal, ReplayWindow } from './notice-seal.js';
import { encodeNotice, MAX_NOTICE_BYTES, parseNotice, presenceNotices } from './notices.js';

describe('cluster notices', () => {
  it('name runs and seqs only: no event text travels in a notice', () => {
    const text = encodeNotice({ k: 'ev', p: 'p', s: 's', r: 'r', f: 3, l: 4, end: 1 });
    expect(parseNotice(text)).toEqual({ k: 'ev', p: 'p', s: 's', r: 'r', f: 3, l: 4, end: 1 });
    // An older sender's inline events are not taken as the run's events.
    const inline = '{"k":"ev","p":"p","s":"s","r":"r","f":1,"l":1,"e":[{"type":"stream_end","seq":1}]}';
    expect(parseNotice(inline)).toEqual({ k: 'ev', p: 'p', s: 's', r: 'r', f: 1, l: 1 });
    expect(() => encodeNotice({ k: 'hello', p: 'p'.repeat(MAX_NOTICE_BYTES) })).toThrow(/does not fit/);
  });

  it('splits a long presence list into notices that each fit', () => {
    const entries: [string, number][] = Array.from({ length: 500 }, (_, i) => [
      `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      1,
    ]);
    const notices = presenceNotices('p', entries);
    expect(notices.length).toBeGreaterThan(1);
    for (const n of notices) expect(Buffer.byteLength(n)).toBeLessThanOrEqual(MAX_NOTICE_BYTES);
    const back = notices.flatMap((n) => {
      const parsed = parseNotice(n);
      return parsed?.k === 'presence' ? parsed.w : [];
    });
    expect(back).toEqual(entries);
  });

  it('ignores whatever is not a well-formed notice (anyone on the database may NOTIFY)', () => {
    const hostile = [
      '',
      'not json',
      'null',
      '[]',
      '{"k":"ev"}',
      '{"k":"ev","p":"p","s":"s","r":"r","f":0,"l":1}',
      '{"k":"ev","p":"p","s":"s","r":"r","f":3,"l":2}',
      '{"k":"ctl","p":"p","to":"q","id":"i","s":"s","r":"r","op":"drop table"}',
      '{"k":"ctl","p":"p","to":"q","id":"i","s":"s","r":"r","op":"answer","c":"c","a":"yes"}',
      '{"k":"reply","p":"p","to":"q","id":"i","ok":1}',
      '{"k":"presence","p":"p","w":[["s",-1]]}',
      '{"k":"presence","p":"p","w":"all"}',
      `{"k":"hello","p":"${'p'.repeat(500)}"}`,
      '{"k":"unknown","p":"p"}',
      '{"k":"after","p":"p","s":"s","r":"r"}',
      '{"k":"note","p":"p","s":"s","e":{"type":"profile_switched"}}',
    ];
    for (const payload of hostile) expect(parseNotice(payload), payload).toBeUndefined();
    expect(parseNotice('{"k":"ctl","p":"p","to":"q","id":"i","s":"s","r":"r","op":"stop"}')).toMatchObject({
      op: 'stop',
    });
  });
});

describe('sealed notices', () => {
  const key = randomBytes(32);
  const body = '{"k":"ctl","p":"p","to":"q","id":"i","s":"s","r":"r","op":"stop"}';

  it('open only with the key they were sealed with, unchanged', () => {
    const seal = new NoticeSeal(key);
    const sealed = seal.seal(body);
    expect(Buffer.byteLength(sealed) - Buffer.byteLength(body)).toBeLessThan(8000 - MAX_NOTICE_BYTES);
    expect(seal.open(sealed)).toEqual({ count: 1, body });
    expect(seal.open(seal.seal(body))).toEqual({ count: 2, body });
    expect(new NoticeSeal(randomBytes(32)).open(sealed)).toBeUndefined();
    const [mac, count] = sealed.split('.');
    const forged = [
      body,
      '',
      `.${body}`,
      `${mac}`,
      `${mac}.${count}.${body.replace('stop', 'answer')}`,
      `${mac}.${Number(count) + 1}.${body}`,
      `${mac}.${count}.${body.replace('"r":"r"', '"r":"another-run"')}`,
      `${'A'.repeat(43)}.${count}.${body}`,
      `${mac}x.${count}.${body}`,
    ];
    for (const payload of forged) expect(seal.open(payload), payload).toBeUndefined();
    expect(() => new NoticeSeal(randomBytes(16))).toThrow(/shorter than 32 bytes/);
  });

  it('are taken once per sender count, in any order within the window, never again', () => {
    const window = new ReplayWindow();
    expect(window.take('a', 5)).toBe(true);
    expect(window.take('a', 3)).toBe(true);
    expect(window.take('a', 5)).toBe(false);
    expect(window.take('a', 3)).toBe(false);
    expect(window.take('b', 3)).toBe(true);
    expect(window.take('a', 40_000)).toBe(true);
    // Far older than the newest count: refused, whether it was heard or not.
    expect(window.take('a', 4)).toBe(false);
    let taken = 0;
    for (let n = 40_001; n < 70_000; n++) if (window.take('a', n)) taken++;
    expect(taken).toBe(29_999);
    expect(window.take('a', 40_000)).toBe(false);
    expect(window.take('a', 69_999)).toBe(false);
  });
});
