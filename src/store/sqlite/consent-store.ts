/** ConsentStore on SQLite: pairing codes and paired clients, both kept only as SHA-256 hashes. */
import type { Database, Statement } from 'better-sqlite3';
import {
  newClientSecret,
  newPairingCode,
  normalisePairingCode,
  sha256,
  TOUCH_INTERVAL_MS,
  USER_AGENT_MAX,
} from '../pairing.js';
import type { ConsentStore, PairingResult } from '../types.js';

export { normalisePairingCode } from '../pairing.js';

interface CodeRow {
  expires_at: string;
  used_at: string | null;
}

export class SqliteConsentStore implements ConsentStore {
  private readonly insertCode: Statement<[string, string, string]>;
  private readonly deleteExpired: Statement<[string]>;
  private readonly selectCode: Statement<[string], CodeRow>;
  private readonly markUsed: Statement<[string, string]>;
  private readonly insertClient: Statement<[string, string, string, string]>;
  private readonly selectClient: Statement<[string], { last_used_at: string }>;
  private readonly touchClient: Statement<[string, string]>;
  private readonly deleteClient: Statement<[string]>;
  private readonly deleteClients: Statement<[]>;
  private readonly redeem: (hash: string, userAgent: string, now: Date) => PairingResult;

  constructor(private readonly db: Database) {
    this.insertCode = db.prepare(
      'INSERT INTO pairing_codes (code_hash, created_at, expires_at) VALUES (?, ?, ?)',
    );
    this.deleteExpired = db.prepare('DELETE FROM pairing_codes WHERE expires_at <= ?');
    this.selectCode = db.prepare('SELECT expires_at, used_at FROM pairing_codes WHERE code_hash = ?');
    this.markUsed = db.prepare('UPDATE pairing_codes SET used_at = ? WHERE code_hash = ?');
    this.insertClient = db.prepare(
      'INSERT INTO paired_clients (secret_hash, user_agent, created_at, last_used_at) VALUES (?, ?, ?, ?)',
    );
    this.selectClient = db.prepare('SELECT last_used_at FROM paired_clients WHERE secret_hash = ?');
    this.touchClient = db.prepare('UPDATE paired_clients SET last_used_at = ? WHERE secret_hash = ?');
    this.deleteClient = db.prepare('DELETE FROM paired_clients WHERE secret_hash = ?');
    this.deleteClients = db.prepare('DELETE FROM paired_clients');
    // IMMEDIATE takes the write lock first, so two processes redeeming one code cannot both
    // read it unused.
    const redeem = db.transaction((hash: string, userAgent: string, now: Date): PairingResult => {
      const row = this.selectCode.get(hash);
      if (!row) return { ok: false, reason: 'unknown' };
      if (row.used_at !== null) return { ok: false, reason: 'used' };
      const at = now.toISOString();
      if (row.expires_at <= at) return { ok: false, reason: 'expired' };
      this.markUsed.run(at, hash);
      const secret = newClientSecret();
      this.insertClient.run(sha256(secret), userAgent.slice(0, USER_AGENT_MAX), at, at);
      return { ok: true, secret };
    });
    this.redeem = (hash, userAgent, now) => redeem.immediate(hash, userAgent, now);
  }

  async createPairingCode(ttlMs: number, now = new Date()): Promise<string> {
    const code = newPairingCode();
    const at = now.toISOString();
    this.deleteExpired.run(at);
    // Checked against the canonical form, which is what redeeming hashes.
    this.insertCode.run(
      sha256(normalisePairingCode(code) ?? code),
      at,
      new Date(now.getTime() + ttlMs).toISOString(),
    );
    return code;
  }

  async redeemPairingCode(code: string, userAgent: string, now = new Date()): Promise<PairingResult> {
    const canonical = normalisePairingCode(code);
    if (canonical === undefined) return { ok: false, reason: 'unknown' };
    return this.redeem(sha256(canonical), userAgent, now);
  }

  async isPaired(secret: string, now = new Date()): Promise<boolean> {
    if (secret === '' || !this.db.open) return false;
    const hash = sha256(secret);
    const row = this.selectClient.get(hash);
    if (!row) return false;
    if (now.getTime() - Date.parse(row.last_used_at) >= TOUCH_INTERVAL_MS)
      this.touchClient.run(now.toISOString(), hash);
    return true;
  }

  async unpair(secret: string): Promise<boolean> {
    return this.deleteClient.run(sha256(secret)).changes > 0;
  }

  async unpairAll(): Promise<number> {
    return this.deleteClients.run().changes;
  }
}
