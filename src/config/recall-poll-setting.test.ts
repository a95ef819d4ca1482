/** RECALL_POLL_SECONDS: 0 turns polling off; any other value is at least a tenth of a second. */
import { describe, expect, it } from 'vitest';
import { parseSetting } from './settings.js';

describe('RECALL_POLL_SECONDS', () => {
  it('takes 15 by default, 0 for never, and fractions from a tenth of a second', () => {
    expect(parseSetting('RECALL_POLL_SECONDS', undefined)).toEqual({ ok: true, value: 15 });
    expect(parseSetting('RECALL_POLL_SECONDS', '0')).toEqual({ ok: true, value: 0 });
    expect(parseSetting('RECALL_POLL_SECONDS', '0.5')).toEqual({ ok: true, value: 0.5 });
    expect(parseSetting('RECALL_POLL_SECONDS', '0.1')).toEqual({ ok: true, value: 0.1 });
  });

  it('refuses a poll so short it would be a loop on the database, and one out of range', () => {
    for (const raw of ['0.001', '0.05', '-1', '86401', 'soon']) {
      const parsed = parseSetting('RECALL_POLL_SECONDS', raw);
      expect(parsed.ok, raw).toBe(false);
    }
    expect(parseSetting('RECALL_POLL_SECONDS', '0.01')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('0 (never) or at least 0.1'),
    });
  });
});
