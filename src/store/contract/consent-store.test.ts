/** Pairing codes and paired clients: the person's consent credential. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OpenedStores, openStores } from '../open-stores.js';
import { normalisePairingCode } from '../pairing.js';
import { storeEngines, type TestStores } from '../test-engines.js';
import { scalar } from './raw-sql.js';

describe.each(storeEngines())('consent on $name', ({ open }) => {
  let t: TestStores;
  let stores: OpenedStores;
  const opened: OpenedStores[] = [];

  beforeEach(async () => {
    t = await open();
    stores = t.stores;
  });

  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    await t.dispose();
  });

  describe('ConsentStore', () => {
    it('reads a typed code the way people type it', () => {
      expect(normalisePairingCode(' abcd-efgh-jkmn ')).toBe('ABCDEFGHJKMN');
      // Letters that look like digits are read as the digits.
      expect(normalisePairingCode('O0IL-0000-0000')).toBe('001100000000');
      expect(normalisePairingCode('ABCD-EFGH-JKM')).toBeUndefined();
      expect(normalisePairingCode('ABCD-EFGH-JKMU')).toBeUndefined();
      expect(normalisePairingCode('')).toBeUndefined();
    });

    it('makes distinct codes, each pairing one client once, across connections', async () => {
      const codes = new Set<string>();
      for (let i = 0; i < 50; i++) codes.add(await stores.consent.createPairingCode(60_000));
      expect(codes.size).toBe(50);

      // A second process (say, `navi pair` while the server runs) sees the same codes.
      const other = await openStores(t.settings);
      opened.push(other);
      const code = await other.consent.createPairingCode(60_000);
      const first = await stores.consent.redeemPairingCode(code, 'browser A');
      const second = await other.consent.redeemPairingCode(code, 'browser B');
      expect(first.ok).toBe(true);
      expect(second).toEqual({ ok: false, reason: 'used' });
      if (!first.ok) return;
      expect(first.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(await other.consent.isPaired(first.secret)).toBe(true);
      expect(await other.consent.isPaired(`${first.secret}x`)).toBe(false);
      expect(await other.consent.isPaired('')).toBe(false);
    });

    it('refuses expired and unknown codes and forgets expired ones', async () => {
      const start = new Date('2026-01-01T00:00:00Z');
      const code = await stores.consent.createPairingCode(10 * 60_000, start);
      const later = new Date(start.getTime() + 10 * 60_000);
      expect(await stores.consent.redeemPairingCode(code, '', later)).toEqual({
        ok: false,
        reason: 'expired',
      });
      expect(await stores.consent.redeemPairingCode('0000-0000-0000', '', later)).toEqual({
        ok: false,
        reason: 'unknown',
      });
      await stores.consent.createPairingCode(60_000, later);
      expect(await scalar(stores, 'SELECT count(*) FROM pairing_codes')).toBe(1);
    });

    it('unpairs one client, or all of them', async () => {
      const secrets: string[] = [];
      for (let i = 0; i < 3; i++) {
        const result = await stores.consent.redeemPairingCode(
          await stores.consent.createPairingCode(60_000),
          '',
        );
        if (result.ok) secrets.push(result.secret);
      }
      expect(secrets).toHaveLength(3);
      expect(await stores.consent.unpair(secrets[0] ?? '')).toBe(true);
      expect(await stores.consent.unpair(secrets[0] ?? '')).toBe(false);
      expect(await stores.consent.isPaired(secrets[0] ?? '')).toBe(false);
      expect(await stores.consent.isPaired(secrets[1] ?? '')).toBe(true);
      expect(await stores.consent.unpairAll()).toBe(2);
      expect(await stores.consent.isPaired(secrets[1] ?? '')).toBe(false);
    });
  });
});
