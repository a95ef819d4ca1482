import { describe, expect, it } from 'vitest';
import { encodeNotice, eventsNotice, MAX_NOTICE_BYTES, parseNotice, presenceNotices } from './notices.js';

const delta = (seq: number, text: string) =>
  JSON.stringify({ type: 'stream_delta', delta: text, run_id: 'r', seq });

describe('cluster notices', () => {
  it('carries small events inline and only ids for big ones, always under the NOTIFY limit', () => {
    const small = eventsNotice({
      sender: 'p',
      sessionId: 's',
      runId: 'r',
      first: 3,
      events: [delta(3, 'a'), delta(4, 'b')],
      ended: false,
    });
    expect(parseNotice(small)).toMatchObject({ k: 'ev', f: 3, l: 4, e: [{ seq: 3 }, { seq: 4 }] });
    const bigText = 'é'.repeat(5000); // 10 000 bytes: the limit counts bytes, not characters
    const big = eventsNotice({
      sender: 'p',
      sessionId: 's',
      runId: 'r',
      first: 1,
      events: [delta(1, bigText)],
      ended: true,
    });
    expect(Buffer.byteLength(big)).toBeLessThan(MAX_NOTICE_BYTES);
    const parsed = parseNotice(big);
    expect(parsed).toMatchObject({ k: 'ev', f: 1, l: 1, end: 1 });
    expect(parsed && 'e' in parsed ? parsed.e : undefined).toBeUndefined();
  });

  it('drops an after-run event that does not fit, and refuses to build any other oversized notice', () => {
    const event = { type: 'context_compressed', context_tokens: 1, note: 'x'.repeat(9000) } as never;
    const text = encodeNotice({ k: 'after', p: 'p', s: 's', r: 'r', q: 9, e: event });
    expect(parseNotice(text)).toEqual({ k: 'after', p: 'p', s: 's', r: 'r', q: 9 });
    expect(() => encodeNotice({ k: 'note', p: 'p', s: 's', e: event })).toThrow(/does not fit/);
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
      '{"k":"ev","p":"p","s":"s","r":"r","f":1,"l":2,"e":[{"type":"x"}]}',
      '{"k":"ev","p":"p","s":"s","r":"r","f":1,"l":1,"e":["text"]}',
      '{"k":"ctl","p":"p","to":"q","id":"i","s":"s","r":"r","op":"drop table"}',
      '{"k":"ctl","p":"p","to":"q","id":"i","s":"s","r":"r","op":"answer","c":"c","a":"yes"}',
      '{"k":"reply","p":"p","to":"q","id":"i","ok":1}',
      '{"k":"presence","p":"p","w":[["s",-1]]}',
      '{"k":"presence","p":"p","w":"all"}',
      `{"k":"hello","p":"${'p'.repeat(500)}"}`,
      '{"k":"unknown","p":"p"}',
    ];
    for (const payload of hostile) expect(parseNotice(payload), payload).toBeUndefined();
    expect(parseNotice('{"k":"ctl","p":"p","to":"q","id":"i","s":"s","r":"r","op":"stop"}')).toMatchObject({
      op: 'stop',
    });
  });
});
