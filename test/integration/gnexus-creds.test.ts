/**
 * gnexus-creds through Navi: the shipped server starts as its own process from
 * mcp_servers.shipped/, its seven tools are offered as mcp__gnexus_creds__*, reveal_secret asks
 * the person over the real WebSocket and runs only when approved, and the vault's audit log
 * names the Navi session that asked. A copy of the server configured by the user never learns
 * the session. Last, a real `navi serve` started in another folder shares its vault file with
 * the server it starts.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testSettings } from '../../src/config/settings.js';
import type { ServerEvent } from '../../src/protocol/events.js';
import { openVault, vaultOptions } from '../../src/vault/index.js';
import type { AuditEntry, Vault } from '../../src/vault/types.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { CREDS_TOOL_NAMES, MASTER_KEY } from '../support/gnexus-vault.js';
import { repoRoot, tempDir } from '../support/navi.js';
import { spawnNavi } from '../support/navi-process.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

type ConfirmRequestEvent = Extract<ServerEvent, { type: 'tool_confirm_request' }>;
type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;

const PASSWORD = 'correct-horse-battery-staple-42';

const toolCallOf = (events: ServerEvent[]) => events.find((e): e is ToolCallEvent => e.type === 'tool_call');

describe('gnexus-creds, shipped with Navi', () => {
  const dir = tempDir('gnexus-creds-');
  const vaultSettings = {
    GNEXUS_MASTER_KEY: MASTER_KEY,
    GNEXUS_VAULT_PATH: join(dir, 'vault.db'),
    GNEXUS_KEY_FILE: join(dir, 'vault.key'),
    GNEXUS_AUDIT_LOG: join(dir, 'vault-audit.jsonl'),
  };
  let app: NaviWithLlm;
  let cookie = '';
  /** The test's own handle on the vault, as the person's. */
  let vault: Vault;
  let secretId = '';

  beforeAll(async () => {
    vault = openVault(vaultOptions(testSettings(vaultSettings)));
    secretId = vault.create(
      {
        name: 'NAS admin',
        type: 'password',
        tags: ['home'],
        fields: [
          { name: 'username', value: 'root', secret: false },
          { name: 'password', value: PASSWORD, secret: true },
        ],
      },
      { actor: 'user' },
    ).id;
    // The same server configured by the user: Navi gives it no session id.
    const mcpDir = join(dir, 'mcp');
    mkdirSync(mcpDir, { recursive: true });
    writeFileSync(
      join(mcpDir, 'my-creds.json'),
      JSON.stringify({
        name: 'my-creds',
        command: process.execPath,
        args: ['--import', 'tsx', join(repoRoot, 'src/servers/gnexus-creds/main.ts')],
        cwd: repoRoot,
        env: vaultSettings,
      }),
    );
    app = await startNaviWithLlm({
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        PROFILES_DIR: profilesDir([plainProfile]),
        DEFAULT_PROFILE: 'plain',
        MCP_SERVERS_DIR: mcpDir,
        SESSION_FILES_DIR: join(dir, 'files'),
        MCP_SHIPPED_SERVERS: 'true',
        ...vaultSettings,
      },
    });
    await app.navi.services.mcp?.ready();
    cookie = await app.navi.pair();
  });
  afterEach(() => app.fake.reset());
  afterAll(async () => {
    await app?.close();
    vault?.close();
  });

  /** Starts a run in a new session whose LLM calls `tool` once with `args`, then says `answer`. */
  async function runWithCall(
    tool: string,
    args: Record<string, unknown>,
    answer = 'Done.',
  ): Promise<{ sessionId: string; client: EventClient }> {
    const sessionId = await app.navi.createSession();
    app.fake.enqueue({ toolCalls: [{ id: 'call-1', name: tool, arguments: args }] }, { text: answer });
    const client = await EventClient.connect(app.navi.wsUrl(sessionId), { headers: { cookie } });
    client.send({ type: 'message', content: 'please' });
    return { sessionId, client };
  }

  /** What the LLM was sent back as the tool's result. */
  function toolResultSent(): string {
    const message = chatRequests(app.fake)[1]?.body.messages?.find((m) => m.role === 'tool');
    return typeof message?.content === 'string' ? message.content : JSON.stringify(message?.content);
  }

  const reveals = (): AuditEntry[] =>
    vault.auditLog({ secret_id: secretId }).filter((e) => e.action === 'reveal');

  it('starts as a shipped server offering its seven tools in group secrets, the key never shown', () => {
    const { services } = app.navi;
    const status = services.mcp?.server('gnexus-creds');
    expect(status).toMatchObject({ state: 'ready', shipped: true, transport: 'stdio' });
    expect(status?.tools.sort()).toEqual(CREDS_TOOL_NAMES.map((t) => `mcp__gnexus_creds__${t}`));
    expect(status?.command).toContain('GNEXUS_MASTER_KEY=[secret]');
    expect(status?.command).not.toContain(MASTER_KEY);
    const profile = services.profiles.get('plain');
    if (!profile) throw new Error('no plain profile');
    const offered = services.executor.specsFor(profile).map((s) => s.name);
    for (const tool of CREDS_TOOL_NAMES) {
      const name = `mcp__gnexus_creds__${tool}`;
      expect(offered).toContain(name);
      expect(services.tools.get(name)?.tool.group).toBe('secrets');
      expect(services.executor.hookActionFor(name, profile)?.action).toBe(
        tool === 'reveal_secret' ? 'confirm' : 'log',
      );
    }
    // The user's copy names neither a group nor confirm_tools: only its annotations count.
    expect(services.executor.hookActionFor('mcp__my_creds__reveal_secret', profile)?.action).toBe('silent');
  });

  it('search_secrets runs without asking; the model reads the reference, never the value', async () => {
    const { client } = await runWithCall('mcp__gnexus_creds__search_secrets', { query: 'nas' });
    const events = await client.waitForRunEnd();
    await client.close();
    expect(events.some((e) => e.type === 'tool_confirm_request')).toBe(false);
    expect(toolCallOf(events)).toMatchObject({ success: true });
    const seen = toolResultSent();
    expect(seen).toContain('NAS admin');
    expect(seen).toContain(`{{secret:${secretId}.password}}`);
    expect(seen).toContain('Navi substitutes it when the tool runs');
    expect(JSON.stringify(app.fake.requests)).not.toContain(PASSWORD);
    expect(JSON.stringify(events)).not.toContain(PASSWORD);
  });

  it('reveal_secret asks first, and runs once approved; the audit entry names the session', async () => {
    const before = reveals().length;
    const args = { id: secretId, field: 'password', reason: 'the person wants to log in by hand' };
    const { sessionId, client } = await runWithCall('mcp__gnexus_creds__reveal_secret', args, 'Shown.');
    const asked = (await client.waitFor((e) => e.type === 'tool_confirm_request')) as ConfirmRequestEvent;
    expect(asked).toMatchObject({ tool: 'mcp__gnexus_creds__reveal_secret', args });
    // Nothing was revealed while the question is open.
    expect(reveals()).toHaveLength(before);

    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: true });
    const events = await client.waitForRunEnd();
    await client.close();
    expect(toolCallOf(events)).toMatchObject({ call_id: asked.call_id, success: true });
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'Shown.' });
    const entries = reveals();
    expect(entries).toHaveLength(before + 1);
    expect(entries[0]).toMatchObject({
      action: 'reveal',
      secret_id: secretId,
      secret_name: 'NAS admin',
      field: 'password',
      actor: 'agent',
      tool: 'reveal_secret',
      reason: 'the person wants to log in by hand',
      session_id: sessionId,
    });
  });

  it('reveal_secret declined: nothing is revealed and the model is told', async () => {
    const before = reveals().length;
    const { client } = await runWithCall('mcp__gnexus_creds__reveal_secret', {
      id: secretId,
      field: 'password',
      reason: 'just curious',
    });
    const asked = (await client.waitFor((e) => e.type === 'tool_confirm_request')) as ConfirmRequestEvent;
    client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: false });
    const events = await client.waitForRunEnd();
    await client.close();
    expect(toolCallOf(events)).toMatchObject({ success: false, metadata: { refused: 'confirmation' } });
    expect(toolResultSent()).toContain('the user declined');
    expect(toolResultSent()).not.toContain(PASSWORD);
    expect(reveals()).toHaveLength(before);
  });

  it('a server the user configured never learns the session id; the shipped one does', async () => {
    const viaUser = await runWithCall('mcp__my_creds__create_secret', {
      name: 'From the user copy',
      type: 'note',
      fields: [{ name: 'text', value: 'one' }],
    });
    expect(toolCallOf(await viaUser.client.waitForRunEnd())).toMatchObject({ success: true });
    await viaUser.client.close();
    app.fake.reset();
    const viaShipped = await runWithCall('mcp__gnexus_creds__create_secret', {
      name: 'From the shipped server',
      type: 'note',
      fields: [{ name: 'text', value: 'two' }],
    });
    expect(toolCallOf(await viaShipped.client.waitForRunEnd())).toMatchObject({ success: true });
    await viaShipped.client.close();

    const created = vault.auditLog({ limit: 10 }).filter((e) => e.action === 'create');
    const byName = new Map(created.map((e) => [e.secret_name, e]));
    expect(byName.get('From the user copy')).toMatchObject({ actor: 'agent', tool: 'create_secret' });
    expect(byName.get('From the user copy')).not.toHaveProperty('session_id');
    expect(byName.get('From the shipped server')).toMatchObject({ session_id: viaShipped.sessionId });
  });
});

describe('gnexus-creds started by navi serve in its own working folder', () => {
  const dir = tempDir('gnexus-serve-');
  let fake: FakeLlm;
  let child: ChildProcess | undefined;
  let url = '';

  beforeAll(async () => {
    fake = await startFakeLlm();
    // The vault where Navi's default relative paths put it: in the folder Navi runs in.
    const vault = openVault(vaultOptions(testSettings({ GNEXUS_MASTER_KEY: MASTER_KEY }), dir));
    vault.create(
      {
        name: 'Made before Navi started',
        type: 'note',
        fields: [{ name: 'text', value: 'x', secret: true }],
      },
      { actor: 'user' },
    );
    vault.close();
    const port = Number(new URL(await closedPortUrl()).port);
    url = `http://127.0.0.1:${port}`;
    child = await spawnNavi({
      dir,
      port,
      ollamaUrl: fake.ollamaUrl,
      extra: { MCP_SHIPPED_SERVERS: 'true', GNEXUS_MASTER_KEY: MASTER_KEY },
    });
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await fake?.close();
  });

  async function serverReady(): Promise<void> {
    for (;;) {
      const body = (await (await fetch(`${url}/agents/mcp`)).json()) as {
        servers: { name: string; state: string; last_error: string | null }[];
      };
      const server = body.servers.find((s) => s.name === 'gnexus-creds');
      if (server?.state === 'ready') return;
      if (server?.state === 'down') throw new Error(`gnexus-creds is down: ${server.last_error}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('opens the same vault file as Navi, so the secret made beforehand is found', async () => {
    await serverReady();
    const created = await fetch(`${url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { session_id: sessionId } = (await created.json()) as { session_id: string };
    fake.enqueue(
      { toolCalls: [{ name: 'mcp__gnexus_creds__search_secrets', arguments: { query: 'before' } }] },
      { text: 'Found it.' },
    );
    const res = await fetch(`${url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'what do I have?' }),
    });
    expect(res.status).toBe(200);
    const tool = chatRequests(fake)[1]?.body.messages?.find((m) => m.role === 'tool');
    expect(String(tool?.content)).toContain('Made before Navi started');
  });
});
