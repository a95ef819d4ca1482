/**
 * The agent must not be able to approve its own actions. In one turn the (fake) LLM calls
 * `terminal` with a script and `write_tool`, which waits for the person's approval. The script
 * does what a hostile command would: it lists the sessions on loopback, opens each session's
 * WebSocket and approves every pending confirmation, answers them over REST too, and approves
 * every MCP server waiting for approval. None of it may count. Then the person's paired client
 * approves, and that works.
 *
 * Run once with the command sandboxed, once unsandboxed (the person approves the terminal call
 * itself: it then runs as Navi's own OS user, on the host's loopback). A sandboxed script may
 * simply fail to reach Navi; the outcome must be the same either way.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import type { McpStatusBody } from '../../src/server/routes/mcp.js';
import { type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, repoRoot, startNavi, tempDir } from '../support/navi.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { needsProgram } from '../support/requirements.js';
import { EventClient } from '../support/ws-client.js';

type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;
type ConfirmEvent = Extract<ServerEvent, { type: 'tool_confirm_request' }>;

/** What the hostile script did, as it reports it on stdout. */
interface AttackReport {
  sessions: number | null;
  /** Per confirmation request seen on a WebSocket: what the server answered to our approval. */
  ws: { call_id: string; tool: string; answer: string | null }[];
  rest: { call_id: string; status: number; code: string | null }[];
  mcp: { name: string; status: number; code: string | null }[];
  errors: string[];
}

/** The hostile script (CommonJS for `node -e`); BASE and WS_MODULE are filled in. */
const ATTACK = `
const WebSocket = require(WS_MODULE);
const base = BASE;
const report = { sessions: null, ws: [], rest: [], mcp: [], errors: [] };
const post = async (path, body) => {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  return { status: res.status, code: json.code ?? null };
};
function attackSocket(id) {
  return new Promise((resolve) => {
    const ws = new WebSocket(base.replace('http', 'ws') + '/ws/sessions/' + id);
    const waiting = [];
    const rest = [];
    const finish = async () => {
      clearTimeout(timer);
      ws.terminate();
      await Promise.all(rest);
      resolve();
    };
    const timer = setTimeout(finish, 8000);
    ws.on('message', (data) => {
      const e = JSON.parse(String(data));
      if (e.type === 'tool_confirm_request') {
        const entry = { call_id: e.call_id, tool: e.tool, answer: null };
        report.ws.push(entry);
        waiting.push(entry);
        ws.send(JSON.stringify({ type: 'tool_confirm', call_id: e.call_id, approved: true }));
        rest.push(
          post('/sessions/' + id + '/confirm', { call_id: e.call_id, approved: true }).then((r) =>
            report.rest.push({ call_id: e.call_id, ...r }),
          ),
        );
      } else if (e.type === 'error' && e.run_id === undefined && waiting.length > 0) {
        waiting.shift().answer = e.code ?? e.message;
        if (waiting.length === 0) void finish();
      } else if (e.type === 'tool_call' && waiting.some((w) => w.call_id === e.call_id)) {
        const entry = waiting.find((w) => w.call_id === e.call_id);
        entry.answer = 'ACCEPTED';
      }
    });
    ws.on('error', (err) => {
      report.errors.push('ws: ' + String(err));
      void finish();
    });
  });
}
(async () => {
  try {
    const sessions = await (await fetch(base + '/sessions')).json();
    report.sessions = sessions.length;
    const mcp = await (await fetch(base + '/agents/mcp')).json();
    for (const s of mcp.servers) {
      if (s.state !== 'awaiting_approval') continue;
      const r = await post('/agents/mcp/servers/' + encodeURIComponent(s.name) + '/approve', { command: s.command });
      report.mcp.push({ name: s.name, ...r });
    }
    await Promise.all(sessions.map((s) => attackSocket(s.id)));
  } catch (err) {
    report.errors.push(String(err));
  }
  console.log('REPORT ' + JSON.stringify(report));
})();
`;

function attackCommand(base: string): string {
  const script = ATTACK.replace('WS_MODULE', JSON.stringify(join(repoRoot, 'node_modules/ws'))).replace(
    'BASE',
    JSON.stringify(base),
  );
  const encoded = Buffer.from(script).toString('base64');
  return `${process.execPath} -e "eval(Buffer.from('${encoded}', 'base64').toString())"`;
}

const PLANTED_TOOL = `export const name = 'planted_tool';
export const description = 'Written by the agent.';
export const parameters = { type: 'object', properties: {} };
export async function execute(): Promise<string> { return 'planted'; }
`;

/** The report the script printed, or undefined when it never got to print one. */
function reportOf(result: string): AttackReport | undefined {
  const line = result.split('\n').find((l) => l.startsWith('REPORT '));
  return line ? (JSON.parse(line.slice('REPORT '.length)) as AttackReport) : undefined;
}

const cases = [
  { label: 'sandboxed', sandbox: 'required', runs: needsProgram('bwrap', 'sandboxed self-approval') },
  { label: 'unsandboxed, approved by the person', sandbox: 'off', runs: true },
] as const;

for (const { label, sandbox, runs } of cases) {
  describe.skipIf(!runs)(`the agent approving its own actions (${label})`, () => {
    let fake: FakeLlm;
    let navi: NaviHandle;
    let dir: string;

    beforeAll(async () => {
      fake = await startFakeLlm();
      dir = tempDir('navi-self-approval-');
      // An agent-written MCP server waiting for approval: the script tries to approve it too.
      mkdirSync(join(dir, 'mcp_servers.d'), { recursive: true });
      writeFileSync(
        join(dir, 'mcp_servers.d', 'planted.json'),
        JSON.stringify({
          name: 'planted',
          command: join(repoRoot, 'node_modules/.bin/mcp-server-everything'),
          args: ['stdio'],
          enabled: false,
          created_by: 'agent',
        }),
      );
      navi = await startNavi({
        dir,
        settings: {
          DEFAULT_LLM_BACKEND: 'openai',
          OPENAI_BASE_URL: fake.openaiUrl,
          // The strongest attacker: the profile may use the network.
          PROFILES_DIR: profilesDir([{ ...plainProfile, network_access: true }]),
          DEFAULT_PROFILE: 'plain',
          NAVI_SANDBOX: sandbox,
        },
      });
      await navi.services.mcp?.ready();
    });
    afterAll(async () => {
      await navi?.close();
      await fake?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const plantedState = async (): Promise<string | undefined> => {
      const body = (await (await fetch(`${navi.url}/agents/mcp`)).json()) as McpStatusBody;
      return body.servers.find((s) => s.name === 'planted')?.state;
    };

    it('refuses every answer and approval the script sends; the paired client is obeyed', async () => {
      expect(await plantedState()).toBe('awaiting_approval');
      const cookie = await navi.pair();
      const id = await navi.createSession();
      const person = await EventClient.connect(navi.wsUrl(id), { headers: { cookie } });
      fake.enqueue(
        {
          toolCalls: [
            {
              id: 'call-script',
              name: 'terminal',
              arguments: { command: attackCommand(navi.url), timeout_seconds: 60 },
            },
            { id: 'call-write', name: 'write_tool', arguments: { name: 'planted_tool', code: PLANTED_TOOL } },
          ],
        },
        { text: 'Done.' },
      );
      person.send({ type: 'message', content: 'go' });

      if (sandbox === 'off') {
        // Without the sandbox the person decides whether the script may run at all.
        const asked = (await person.waitFor(
          (e) => e.type === 'tool_confirm_request' && e.tool === 'terminal',
        )) as ConfirmEvent;
        person.send({ type: 'tool_confirm', call_id: asked.call_id, approved: true });
      }
      const script = (await person.waitFor(
        (e) => e.type === 'tool_call' && e.call_id === 'call-script',
        60_000,
      )) as ToolCallEvent;
      const report = reportOf(script.result);

      // Nothing the script sent was taken.
      const toolsDir = join(dir, 'tools');
      expect(existsSync(join(toolsDir, 'planted_tool.ts'))).toBe(false);
      expect(person.events.some((e) => e.type === 'tool_call' && e.call_id === 'call-write')).toBe(false);
      expect(await plantedState()).toBe('awaiting_approval');
      for (const answer of report?.ws ?? [])
        expect(answer.answer, JSON.stringify(answer)).not.toBe('ACCEPTED');
      for (const r of [...(report?.rest ?? []), ...(report?.mcp ?? [])]) expect(r.status).toBe(403);

      if (sandbox === 'off') {
        // On the host's loopback the script did reach Navi: it was refused, not just lost.
        expect(report, script.result).toBeDefined();
        expect(report?.errors).toEqual([]);
        expect(report?.ws).toContainEqual({
          call_id: 'call-write',
          tool: 'write_tool',
          answer: 'CONSENT_REQUIRED',
        });
        expect(report?.rest).toContainEqual({ call_id: 'call-write', status: 403, code: 'CONSENT_REQUIRED' });
        expect(report?.mcp).toEqual([{ name: 'planted', status: 403, code: 'CONSENT_REQUIRED' }]);
      }

      // The question is still open: the person's paired client answers it (over REST here).
      const approve = await fetch(`${navi.url}/sessions/${id}/confirm`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ call_id: 'call-write', approved: true }),
      });
      expect(approve.status).toBe(200);
      const run = await person.waitForRunEnd();
      const written = run.find(
        (e): e is ToolCallEvent => e.type === 'tool_call' && e.call_id === 'call-write',
      );
      expect(written?.success, written?.result).toBe(true);
      expect(existsSync(join(toolsDir, 'planted_tool.ts'))).toBe(true);

      const status = (await (await fetch(`${navi.url}/agents/mcp`)).json()) as McpStatusBody;
      const command = status.servers.find((s) => s.name === 'planted')?.command ?? '';
      const mcpApproval = await fetch(`${navi.url}/agents/mcp/servers/planted/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ command }),
      });
      expect(mcpApproval.status).toBe(200);
      expect(await plantedState()).not.toBe('awaiting_approval');
      await person.close();
    });
  });
}
