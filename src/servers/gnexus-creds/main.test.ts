/**
 * gnexus-creds as a process, started the way Navi starts it: in the program folder, with
 * NAVI_CWD naming the folder Navi runs in, so relative vault paths mean the same files to both.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MASTER_KEY, textOf } from '../../../test/support/gnexus-vault.js';
import { testSettings } from '../../config/settings.js';
import { openVault, vaultOptions } from '../../vault/index.js';
import { vaultFolder } from './server.js';

const repoRoot = resolve(import.meta.dirname, '../../..');
const MAIN = ['--import', 'tsx', join('src', 'servers', 'gnexus-creds', 'main.ts')];

const folders: string[] = [];
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gnexus-main-'));
  folders.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function connect(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: MAIN,
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stderr: 'pipe',
    }),
  );
  return client;
}

function exited(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  return new Promise((done) => child.once('exit', (code) => done({ code, stderr })));
}

describe('gnexus-creds as a process', () => {
  it("opens the vault of Navi's working folder (NAVI_CWD), not of the program folder", async () => {
    const naviCwd = folder();
    // Navi's side: the same settings, relative paths against its working folder.
    const settings = testSettings({ GNEXUS_MASTER_KEY: MASTER_KEY });
    const navi = openVault(vaultOptions(settings, naviCwd));
    const mine = navi.create(
      { name: 'Made by Navi', type: 'note', fields: [{ name: 'text', value: 'hello', secret: true }] },
      { actor: 'user' },
    );
    const strayVault = existsSync(join(repoRoot, 'vault.db'));

    const client = await connect({ NAVI_CWD: naviCwd, GNEXUS_MASTER_KEY: MASTER_KEY });
    try {
      expect(client.getServerVersion()?.name).toBe('gnexus-creds');
      const found = (await client.callTool({ name: 'search_secrets', arguments: {} })) as CallToolResult;
      expect(textOf(found)).toContain('Made by Navi');
      expect(textOf(found)).toContain(`id: ${mine.id}`);
      const made = (await client.callTool({
        name: 'create_secret',
        arguments: { name: 'Made by the server', type: 'note', fields: [{ name: 'text', value: 'hi' }] },
        _meta: { 'navi/session_id': 'session-1' },
      })) as CallToolResult;
      expect(made.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(navi.search({ query: 'server' }).map((s) => s.name)).toEqual(['Made by the server']);
    expect(navi.auditLog({ limit: 1 })[0]).toMatchObject({ action: 'create', session_id: 'session-1' });
    navi.close();
    expect(existsSync(join(naviCwd, 'vault-audit.jsonl'))).toBe(true);
    expect(existsSync(join(repoRoot, 'vault.db'))).toBe(strayVault);
  });

  it('serves a locked vault, every tool saying how to unlock it', async () => {
    const naviCwd = folder();
    openVault(vaultOptions(testSettings({ GNEXUS_MASTER_KEY: MASTER_KEY }), naviCwd)).close();
    const client = await connect({ NAVI_CWD: naviCwd, GNEXUS_MASTER_KEY: 'some other key' });
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(7);
      const result = (await client.callTool({ name: 'search_secrets', arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^The secrets vault is locked, so search_secrets cannot run: GNEXUS_MASTER_KEY/,
      );
      expect(textOf(result)).toContain('then restart Navi');
    } finally {
      await client.close();
    }
  });

  it('refuses a bad setting before serving, naming it', async () => {
    const child = spawn(process.execPath, MAIN, {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'LOUD' },
    });
    const { code, stderr } = await exited(child);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^gnexus-creds: Invalid configuration:/);
    expect(stderr).toContain('LOG_LEVEL');
  });

  it('resolves a relative NAVI_CWD against its own folder, and falls back to it without one', () => {
    expect(vaultFolder({ NAVI_CWD: '/srv/navi' }, '/opt/navi')).toBe('/srv/navi');
    expect(vaultFolder({ NAVI_CWD: 'data' }, '/opt/navi')).toBe('/opt/navi/data');
    expect(vaultFolder({ NAVI_CWD: '  ' }, '/opt/navi')).toBe('/opt/navi');
    expect(vaultFolder({}, '/opt/navi')).toBe('/opt/navi');
  });
});
