/**
 * ConsentStore on PostgreSQL: pairing codes and paired clients, both kept only as SHA-256
 * hashes. Redeeming is one statement that marks the code used only while it is unused and
 * unexpired, and inserts the client from that same statement: when two processes redeem one code
 * at once, the second waits for the first's row lock, finds the code used, and pairs nobody.
 */
import {
  newClientSecret,
  newPairingCode,
  normalisePairingCode,
  sha256,
  TOUCH_INTERVAL_MS,
  USER_AGENT_MAX,
} from '../pairing.js';
import type { ConsentStore, PairingResult } from '../types.js';
import type { PgDatabase } from './database.js';
import { pgText } from './pg-values.js';

const REDEEM = `
  WITH used AS (
    UPDATE pairing_codes SET used_at = $2
    WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2
    RETURNING code_hash
  )
  INSERT INTO paired_clients (secret_hash, user_agent, created_at, last_used_at)
  SELECT $3, $4, $2, $2 FROM used`;

export class PgConsentStore implements ConsentStore {
  constructor(readonly db: PgDatabase) {}

  async createPairingCode(ttlMs: number, now = new Date()): Promise<string> {
    const code = newPairingCode();
    const at = now.toISOString();
    // Checked against the canonical form, which is what redeeming hashes.
    await this.db.query(
      `WITH expired AS (DELETE FROM pairing_codes WHERE expires_at <= $2)
       INSERT INTO pairing_codes (code_hash, created_at, expires_at) VALUES ($1, $2, $3)`,
      [sha256(normalisePairingCode(code) ?? code), at, new Date(now.getTime() + ttlMs).toISOString()],
    );
    return code;
  }

  async redeemPairingCode(code: string, userAgent: string, now = new Date()): Promise<PairingResult> {
    const canonical = normalisePairingCode(code);
    if (canonical === undefined) return { ok: false, reason: 'unknown' };
    const hash = sha256(canonical);
    const at = now.toISOString();
    const secret = newClientSecret();
    const paired = await this.db.query(REDEEM, [
      hash,
      at,
      sha256(secret),
      pgText(userAgent.slice(0, USER_AGENT_MAX)),
    ]);
    if ((paired.rowCount ?? 0) > 0) return { ok: true, secret };
    // Nothing paired: say why, as it is now.
    const [row] = await this.db.rows<{ expires_at: string; used_at: string | null }>(
      'SELECT expires_at, used_at FROM pairing_codes WHERE code_hash = $1',
      [hash],
    );
    if (!row) return { ok: false, reason: 'unknown' };
    if (row.used_at !== null) return { ok: false, reason: 'used' };
    return { ok: false, reason: 'expired' };
  }

  async isPaired(secret: string, now = new Date()): Promise<boolean> {
    // A request that arrives while the server shuts down is not paired (as with a closed SQLite file).
    if (secret === '' || this.db.pool.ending) return false;
    const hash = sha256(secret);
    const [row] = await this.db.rows<{ last_used_at: string }>(
      'SELECT last_used_at FROM paired_clients WHERE secret_hash = $1',
      [hash],
    );
    if (!row) return false;
    if (now.getTime() - Date.parse(row.last_used_at) >= TOUCH_INTERVAL_MS) {
      await this.db.query('UPDATE paired_clients SET last_used_at = $1 WHERE secret_hash = $2', [
        now.toISOString(),
        hash,
      ]);
    }
    return true;
  }

  async unpair(secret: string): Promise<boolean> {
    const result = await this.db.query('DELETE FROM paired_clients WHERE secret_hash = $1', [sha256(secret)]);
    return (result.rowCount ?? 0) > 0;
  }

  async unpairAll(): Promise<number> {
    const result = await this.db.query('DELETE FROM paired_clients');
    return result.rowCount ?? 0;
  }
}
