/**
 * The gmail tool inside a real Navi: loaded from the repository's tools/ folder, offered to the
 * profiles that fit, and asking the person over the real WebSocket before it sends. The LLM is
 * the fake server; mail goes to a real dovecot and a real SMTP server on loopback.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/protocol/events.js';
import { type MailWorld, startMailWorld } from '../support/mail-fixtures.js';
import { repoRoot } from '../support/navi.js';
import { type NaviWithLlm, startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { needsProgram } from '../support/requirements.js';
import { chatRequests } from '../support/rest.js';
import { EventClient } from '../support/ws-client.js';

type ConfirmRequestEvent = Extract<ServerEvent, { type: 'tool_confirm_request' }>;
type ToolCallEvent = Extract<ServerEvent, { type: 'tool_call' }>;

function toolCallOf(events: ServerEvent[]): ToolCallEvent | undefined {
  return events.find((e): e is ToolCallEvent => e.type === 'tool_call');
}

describe.skipIf(!needsProgram('dovecot', 'gmail tool against a real IMAP server'))(
  'gmail in a running Navi',
  () => {
    let world: MailWorld;
    let app: NaviWithLlm;
    let cookie = '';

    beforeAll(async () => {
      world = await startMailWorld();
      app = await startNaviWithLlm({
        settings: {
          DEFAULT_LLM_BACKEND: 'openai',
          PROFILES_DIR: profilesDir([plainProfile]),
          DEFAULT_PROFILE: 'plain',
          TOOLS_DIR: join(repoRoot, 'tools'),
          ...world.settings,
        },
      });
      cookie = await app.navi.pair();
    });
    afterEach(() => {
      app.fake.reset();
      world.smtp.received.length = 0;
    });
    afterAll(async () => {
      await app?.close();
      await world?.close();
    });

    /** Starts a run in a new session whose LLM calls gmail with `args` once, then says `answer`. */
    async function runWithCall(args: Record<string, unknown>, answer: string): Promise<EventClient> {
      const id = await app.navi.createSession();
      app.fake.enqueue({ toolCalls: [{ id: 'call-1', name: 'gmail', arguments: args }] }, { text: answer });
      const client = await EventClient.connect(app.navi.wsUrl(id), { headers: { cookie } });
      client.send({ type: 'message', content: 'please handle my mail' });
      return client;
    }

    /** The text of the tool result the LLM was sent back. */
    function toolResultSent(): string {
      const message = chatRequests(app.fake)[1]?.body.messages?.find((m) => m.role === 'tool');
      return typeof message?.content === 'string' ? message.content : JSON.stringify(message?.content);
    }

    const letter = { action: 'send', to: 'zoe@example.test', subject: 'Picnic', body: 'Bring a blanket.' };

    it('is offered where it fits: every-tool profiles, not the server or smart home ones', () => {
      const { services } = app.navi;
      const offered = (id: string) => {
        const profile = services.profiles.get(id);
        if (!profile) throw new Error(`no profile ${id}`);
        return services.executor.specsFor(profile).some((s) => s.name === 'gmail');
      };
      expect(offered('secretary')).toBe(true);
      expect(offered('plain')).toBe(true);
      expect(offered('server_admin')).toBe(false);
      expect(offered('smart_home')).toBe(false);
    });

    it('asks over the WebSocket before sending, and sends once the person approves', async () => {
      const client = await runWithCall(letter, 'I sent it.');
      const asked = (await client.waitFor((e) => e.type === 'tool_confirm_request')) as ConfirmRequestEvent;
      expect(asked).toMatchObject({ tool: 'gmail', args: letter });
      expect(world.smtp.received).toEqual([]);

      client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: true });
      const events = await client.waitForRunEnd();
      expect(toolCallOf(events)).toMatchObject({ call_id: asked.call_id, success: true });
      expect(toolCallOf(events)?.result).toMatch(/^Sent to zoe@example\.test: "Picnic"/);
      expect(world.smtp.received).toHaveLength(1);
      expect(world.smtp.received[0]).toMatchObject({
        from: world.dovecot.user,
        recipients: ['zoe@example.test'],
      });
      expect(world.smtp.received[0]!.parsed.subject).toBe('Picnic');
      expect(toolResultSent()).toContain('Sent to zoe@example.test');
      expect(events.at(-1)).toMatchObject({ type: 'stream_end', content: 'I sent it.' });
      await client.close();
    });

    it('sends nothing when the person declines, and tells the model so', async () => {
      const client = await runWithCall(letter, 'Understood, not sent.');
      const asked = (await client.waitFor((e) => e.type === 'tool_confirm_request')) as ConfirmRequestEvent;
      client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: false });
      const events = await client.waitForRunEnd();
      expect(toolCallOf(events)).toMatchObject({ success: false, metadata: { refused: 'confirmation' } });
      expect(toolResultSent()).toContain('it sends an e-mail in your name');
      expect(toolResultSent()).toContain('the user declined');
      expect(world.smtp.received).toEqual([]);
      await client.close();
    });

    it('asks before a reply too, which then carries the thread headers', async () => {
      const client = await runWithCall(
        { action: 'reply', id: '<thread-2@example.test>', body: 'Friday it is.' },
        'Replied.',
      );
      const asked = (await client.waitFor((e) => e.type === 'tool_confirm_request')) as ConfirmRequestEvent;
      client.send({ type: 'tool_confirm', call_id: asked.call_id, approved: true });
      const events = await client.waitForRunEnd();
      expect(toolCallOf(events)?.success).toBe(true);
      const [mail] = world.smtp.received;
      expect(mail!.recipients).toEqual(['dave.home@example.test']);
      expect(mail!.parsed.inReplyTo).toBe('<thread-2@example.test>');
      expect(mail!.parsed.subject).toBe('Re: Lunch on Friday?');
      await client.close();
    });

    it('searches without asking, and no event carries the app password', async () => {
      const client = await runWithCall({ action: 'search', query: 'from:alice' }, 'One report.');
      const events = await client.waitForRunEnd();
      expect(events.some((e) => e.type === 'tool_confirm_request')).toBe(false);
      expect(toolCallOf(events)).toMatchObject({ success: true });
      expect(toolCallOf(events)?.result).toContain('Subject: Quarterly report');
      expect(JSON.stringify(events)).not.toContain(world.dovecot.password);
      expect(JSON.stringify(app.fake.requests)).not.toContain(world.dovecot.password);
      await client.close();
    });
  },
);
