/**
 * The audit log on real files: an entry for every reveal, use and change, without values, and
 * nothing revealed or changed when the entry cannot be written.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditLog, auditEntry } from './audit-log.js';
import { agent, user, useTempVault, vaultErrorOf } from './test-support.js';

const t = useTempVault();
const value = 'hunter2-very-secret';

const isRoot = process.getuid?.() === 0;

function create(name = 'Mail'): string {
  return t.vault.create(
    {
      name,
      type: 'password',
      tags: ['mail'],
      fields: [
        { name: 'user', value: 'me@example.com', secret: false },
        { name: 'password', value, secret: true },
      ],
    },
    user,
  ).id;
}

describe('audit log', () => {
  it('records each reveal and use with session, tool, field, reason and time, and never a value', () => {
    const id = create();
    t.vault.reveal(id, 'password', agent);
    t.vault.resolve(id, 'password', { actor: 'agent', session_id: 's-2', tool: 'http_request' });
    const entries = t.vault.auditLog();
    expect(entries.map((e) => e.action)).toEqual(['use', 'reveal', 'create']);
    expect(entries[1]).toMatchObject({
      action: 'reveal',
      secret_id: id,
      secret_name: 'Mail',
      field: 'password',
      actor: 'agent',
      session_id: 's-1',
      tool: 'reveal_secret',
      reason: 'log in',
    });
    expect(entries[0]).toMatchObject({
      action: 'use',
      session_id: 's-2',
      tool: 'http_request',
      field: 'password',
    });
    expect(Date.parse(entries[0]?.at ?? '')).not.toBeNaN();
    const text = readFileSync(t.options().auditLog, 'utf8');
    expect(text).not.toContain(value);
    expect(text.trim().split('\n')).toHaveLength(3);
    expect(statSync(t.options().auditLog).mode & 0o777).toBe(0o600);
  });

  it('audits changes too, filters by secret and caps the limit', () => {
    const a = create('A');
    const b = create('B');
    t.vault.update(a, { fields: [{ name: 'password', value: 'new-value-xyz', secret: true }] }, user);
    t.vault.setStatus(a, 'outdated', user);
    t.vault.archive(b, user);
    expect(t.vault.auditLog({ secret_id: a }).map((e) => e.action)).toEqual(['status', 'update', 'create']);
    expect(t.vault.auditLog({ limit: 2 }).map((e) => e.action)).toEqual(['archive', 'status']);
    expect(t.vault.auditLog({ secret_id: a })[0]?.detail).toBe('outdated');
    expect(readFileSync(t.options().auditLog, 'utf8')).not.toContain('new-value-xyz');
    expect(vaultErrorOf(() => t.vault.auditLog({ limit: 1001 })).code).toBe('invalid');
    expect(vaultErrorOf(() => t.vault.auditLog({ limit: 0 })).code).toBe('invalid');
    expect(vaultErrorOf(() => t.vault.auditLog({ secret_id: "x' OR 1=1 --" })).code).toBe('not_found');
  });

  // Root writes through a mode of 0400: as root, the read-only case runs in a child process
  // without the capability to (the next test). A log linked to /dev/full fails whoever writes (ENOSPC).
  const broken: [string, boolean, (file: string) => void, (file: string) => void][] = [
    ['read-only (mode 0400)', isRoot, (f) => chmodSync(f, 0o400), (f) => chmodSync(f, 0o600)],
    [
      'on a full disk',
      !existsSync('/dev/full'),
      (f) => {
        renameSync(f, `${f}.kept`);
        symlinkSync('/dev/full', f);
      },
      (f) => {
        rmSync(f);
        renameSync(`${f}.kept`, f);
      },
    ],
  ];
  for (const [what, skip, breakIt, mendIt] of broken) {
    if (what.startsWith('read-only') && skip) continue;
    it.skipIf(skip)(`reveals nothing and changes nothing when the audit log is ${what}`, () => {
      const id = create();
      breakIt(t.options().auditLog);
      const refused = vaultErrorOf(() => t.vault.reveal(id, 'password', agent));
      expect(refused.code).toBe('audit_failed');
      expect(refused.message).toContain(t.options().auditLog);
      expect(refused.message).toContain('GNEXUS_AUDIT_LOG');
      expect(vaultErrorOf(() => t.vault.resolve(id, 'password', agent)).code).toBe('audit_failed');
      const note = { name: 'X', type: 'note' as const, fields: [{ name: 'n', value: 'v', secret: true }] };
      expect(vaultErrorOf(() => t.vault.create(note, user)).code).toBe('audit_failed');
      expect(vaultErrorOf(() => t.vault.update(id, { name: 'Renamed' }, user)).code).toBe('audit_failed');
      expect(vaultErrorOf(() => t.vault.setStatus(id, 'outdated', user)).code).toBe('audit_failed');
      expect(vaultErrorOf(() => t.vault.archive(id, user)).code).toBe('audit_failed');
      mendIt(t.options().auditLog);
      expect(t.vault.search().map((r) => r.name)).toEqual(['Mail']);
      expect(t.vault.get(id).status).toBe('actual');
      expect(t.vault.auditLog().map((e) => e.action)).toEqual(['create']);
    });
  }

  // One of the two read-only tests always runs: this one as root, the one above otherwise.
  if (isRoot)
    it('reveals nothing when the audit log is read-only (mode 0400), for a process that is not root', () => {
      const id = create();
      t.vault.close();
      const options = t.options();
      chmodSync(options.auditLog, 0o400);
      // Root without the capability to override file modes: the mode binds it as it binds any
      // user, while the program's own files (wherever the checkout is) stay readable.
      const child = spawnSync(
        'setpriv',
        [
          '--bounding-set',
          '-dac_override,-dac_read_search',
          '--',
          process.execPath,
          '--import',
          'tsx',
          join(import.meta.dirname, 'fixtures/audit-child.ts'),
          id,
        ],
        {
          cwd: join(import.meta.dirname, '../..'),
          env: { PATH: process.env.PATH, VAULT_OPTIONS: JSON.stringify(options) },
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(child.stderr).toBe('');
      const result = JSON.parse(child.stdout) as { reveal: string; create: string; status: string };
      expect(result.status).toBe('unlocked');
      expect(result.reveal).toMatch(/^audit_failed: .*GNEXUS_AUDIT_LOG/);
      expect(result.create).toMatch(/^audit_failed: /);
      chmodSync(options.auditLog, 0o600);
      t.reopen();
      expect(t.vault.auditLog().map((e) => e.action)).toEqual(['create']);
      expect(t.vault.search().map((r) => r.name)).toEqual(['Mail']);
    });

  it('reveals nothing when the audit log folder cannot be created', () => {
    t.vault.close();
    const blocker = join(t.dir, 'not-a-folder');
    writeFileSync(blocker, 'x');
    t.reopen({ auditLog: join(blocker, 'audit.jsonl') });
    expect(
      vaultErrorOf(() =>
        t.vault.create({ name: 'X', type: 'note', fields: [{ name: 'n', value: 'v', secret: true }] }, user),
      ).code,
    ).toBe('audit_failed');
    expect(t.vault.search()).toEqual([]);
  });

  it('reads the newest entries from the end of a big log and skips a torn line', () => {
    const log = new AuditLog(join(t.dir, 'big.jsonl'));
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++)
      lines.push(
        JSON.stringify(
          auditEntry({ action: 'use', field: `f${i}` }, { actor: 'agent', reason: 'x'.repeat(100) }),
        ),
      );
    writeFileSync(log.path, `${lines.join('\n')}\n{"torn`);
    expect(statSync(log.path).size).toBeGreaterThan(2_000_000);
    const newest = log.read(3);
    expect(newest.map((e) => e.field)).toEqual(['f19999', 'f19998', 'f19997']);
    expect(log.read(1000)).toHaveLength(1000);
    expect(log.read(1000).at(-1)?.field).toBe('f19000');
    rmSync(log.path);
    expect(log.read(10)).toEqual([]);
  });
});
