/**
 * Navi's own files under the shared guard, through the real filesystem and share_file tools,
 * with FS_ALLOWED_PATHS=* (the default): private data stays unreadable, and the folders that
 * decide what Navi runs are readable but never written behind the user's back.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testSettings } from '../../config/settings.js';
import { naviPathGuard, naviProgramFolder } from '../../machine/fs/navi-paths.js';
import type { ToolDefinition } from '../types.js';
import { createFilesystemTool } from './filesystem.js';
import { makeCtx } from './test-support.js';

let dir: string;
let tool: ToolDefinition;
const ctx = makeCtx();
const run = (args: Record<string, unknown>) => tool.execute(args, ctx);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-paths-'));
  for (const d of ['tools', 'profiles', 'mcp_servers.d', 'context_providers', 'work'])
    mkdirSync(join(dir, d));
  writeFileSync(join(dir, 'navi.db'), 'SQLite format 3');
  writeFileSync(join(dir, '.env'), 'OPENAI_API_KEY=sk-secret\n');
  writeFileSync(join(dir, 'ssh_hosts.json'), '{}');
  writeFileSync(join(dir, 'profiles', 'secretary.json'), '{"autonomy":"standard"}');
  writeFileSync(join(dir, 'tools', 'mine.ts'), 'export const name = "mine";\n');
  const settings = testSettings({ FS_ALLOWED_PATHS: '*', DB_PATH: 'navi.db' });
  tool = createFilesystemTool({ settings, guard: naviPathGuard({ ...settings, DB_PATH: 'navi.db' }, dir) });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("Navi's own files", () => {
  it('refuses to read or change the database, .env and the SSH hosts file, even with FS_ALLOWED_PATHS=*', async () => {
    for (const name of ['navi.db', 'navi.db-wal', '.env', 'ssh_hosts.json']) {
      const read = await run({ action: 'read', path: join(dir, name) });
      expect(read.success, name).toBe(false);
      expect(read.output).toContain("is Navi's own private data");
      const write = await run({ action: 'write', path: join(dir, name), content: 'x' });
      expect(write.output).toContain("is Navi's own private data");
    }
    expect(readFileSync(join(dir, '.env'), 'utf8')).toContain('sk-secret');
  });

  it("refuses the vault's key file, database and audit log, wherever the settings put them", async () => {
    for (const name of ['vault.key', 'vault.key.new', 'vault.db', 'vault.db-wal', 'vault-audit.jsonl'])
      writeFileSync(join(dir, name), 'private');
    for (const name of ['vault.key', 'vault.key.new', 'vault.db', 'vault.db-wal', 'vault-audit.jsonl']) {
      const read = await run({ action: 'read', path: join(dir, name) });
      expect(read.success, name).toBe(false);
      expect(read.output).toContain("is Navi's own private data");
    }
    mkdirSync(join(dir, 'keys'));
    writeFileSync(join(dir, 'keys', 'mine.key'), 'private');
    const settings = testSettings({ FS_ALLOWED_PATHS: '*', GNEXUS_KEY_FILE: 'keys/mine.key' });
    const moved = createFilesystemTool({ settings, guard: naviPathGuard(settings, dir) });
    const read = await moved.execute({ action: 'read', path: join(dir, 'keys', 'mine.key') }, ctx);
    expect(read.output).toContain("is Navi's own private data");
  });

  it('refuses the settings file Navi owns, which may hold an API key', async () => {
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'data', 'settings.json'), '{"OPENAI_API_KEY": "sk-saved"}');
    const settings = testSettings({ FS_ALLOWED_PATHS: '*', NAVI_DATA_DIR: 'data' });
    const guarded = createFilesystemTool({ settings, guard: naviPathGuard(settings, dir) });
    const path = join(dir, 'data', 'settings.json');
    const read = await guarded.execute({ action: 'read', path }, ctx);
    expect(read.output).toContain("is Navi's own private data");
    const write = await guarded.execute({ action: 'write', path, content: '{}' }, ctx);
    expect(write.output).toContain("is Navi's own private data");
    expect(readFileSync(path, 'utf8')).toContain('sk-saved');
  });

  it('hides the extra private files it is given, such as SSH keys', async () => {
    const key = join(dir, 'work', 'id_ed25519');
    writeFileSync(key, '-----BEGIN OPENSSH PRIVATE KEY-----\n');
    const settings = testSettings({ FS_ALLOWED_PATHS: '*', DB_PATH: 'navi.db' });
    const guarded = createFilesystemTool({ settings, guard: naviPathGuard(settings, dir, [key]) });
    const read = await guarded.execute({ action: 'read', path: key }, ctx);
    expect(read.output).toContain("is Navi's own private data");
  });

  it('refuses them behind a symbolic link and keeps them out of grep results', async () => {
    symlinkSync(join(dir, '.env'), join(dir, 'work', 'innocent.txt'));
    const read = await run({ action: 'read', path: join(dir, 'work', 'innocent.txt') });
    expect(read.output).toContain("is Navi's own private data");
    const grep = await run({ action: 'grep', path: dir, pattern: 'sk-secret' });
    expect(grep.output).not.toContain('OPENAI_API_KEY');
  });

  it('lets the agent read its profiles and tools but not rewrite them', async () => {
    const profile = join(dir, 'profiles', 'secretary.json');
    expect((await run({ action: 'read', path: profile })).output).toContain('standard');
    const write = await run({ action: 'write', path: profile, content: '{"autonomy":"autonomous"}' });
    expect(write.success).toBe(false);
    expect(write.output).toContain('the profiles, which decide what the agent may do');
    expect(readFileSync(profile, 'utf8')).toContain('standard');

    const tool = await run({ action: 'write', path: join(dir, 'tools', 'evil.ts'), content: 'x' });
    expect(tool.output).toContain('write_tool, which asks the user first');
    const mcp = await run({ action: 'write', path: join(dir, 'mcp_servers.d', 'x.json'), content: '{}' });
    expect(mcp.output).toContain('create_mcp_server, which shows the user its command first');
    const del = await run({ action: 'delete', path: join(dir, 'tools', 'mine.ts') });
    expect(del.output).toContain('Refused:');
  });

  it("keeps approved MCP server code and Navi's own program folder read-only", async () => {
    mkdirSync(join(dir, 'mcp-servers', 'weather'), { recursive: true });
    const code = join(dir, 'mcp-servers', 'weather', 'index.ts');
    writeFileSync(code, 'approved();\n');
    const mcp = await run({ action: 'write', path: code, content: 'evil();' });
    expect(mcp.success).toBe(false);
    expect(mcp.output).toContain('a change there would run unapproved code');
    expect(readFileSync(code, 'utf8')).toBe('approved();\n');

    const own = await run({ action: 'write', path: join(naviProgramFolder, 'src', 'evil.ts'), content: 'x' });
    expect(own.success).toBe(false);
    expect(own.output).toContain("Navi's own program folder");
    const read = await run({ action: 'read', path: join(naviProgramFolder, 'package.json') });
    expect(read.output).toContain('"name": "navi"');
  });

  it('refuses to copy or move a file into a protected folder, or move one out of it', async () => {
    writeFileSync(join(dir, 'work', 'p.json'), '{}');
    const copy = await run({
      action: 'copy',
      path: join(dir, 'work', 'p.json'),
      destination: join(dir, 'profiles'),
    });
    expect(copy.output).toContain('Refused:');
    const move = await run({
      action: 'move',
      path: join(dir, 'tools', 'mine.ts'),
      destination: join(dir, 'work', 'mine.ts'),
    });
    expect(move.output).toContain('Refused:');
    const ok = await run({
      action: 'copy',
      path: join(dir, 'tools', 'mine.ts'),
      destination: join(dir, 'work'),
    });
    expect(ok.success).toBe(true);
  });
});
