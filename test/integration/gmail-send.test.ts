/**
 * The gmail user tool sending mail: a real SMTP server (smtp-server, in-process) records what
 * arrives, a real dovecot holds the messages being answered. Every send and reply asks first;
 * a refused or malformed one never reaches the SMTP server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/dovecot.js';
import { type GmailHarness, gmailHarness } from '../support/gmail-tool.js';
import { type MailWorld, startMailWorld } from '../support/mail-fixtures.js';
import { needsProgram } from '../support/requirements.js';

describe.skipIf(!needsProgram('dovecot', 'gmail tool against a real IMAP server'))(
  'gmail: sending mail',
  () => {
    let world: MailWorld;
    let gmail: GmailHarness;

    beforeAll(async () => {
      world = await startMailWorld();
      gmail = await gmailHarness(world.settings);
    });
    afterEach(() => {
      world.smtp.received.length = 0;
    });
    afterAll(async () => {
      await world?.close();
    });

    /** The id of the INBOX message with `subject`, as search reports it. */
    async function idOf(subject: string): Promise<string> {
      const found = await gmail.call({ action: 'search', query: `subject:"${subject}"` });
      const id = /\[id (\d+)\]/.exec(found.output)?.[1];
      if (!id) throw new Error(`no message "${subject}": ${found.output}`);
      return id;
    }

    const letter = {
      action: 'send',
      to: 'Zoe Friend <zoe@example.test>',
      subject: 'Picnic',
      body: 'Bring a blanket.',
    };

    it('sends once approved: the SMTP server receives it from the configured address', async () => {
      const result = await gmail.call(
        { ...letter, cc: 'yann@example.test, "Doe, Jo" <jo@example.test>' },
        { approve: true },
      );
      expect(result.success, result.output).toBe(true);
      expect(result.asked).toEqual([
        { callId: expect.any(String), tool: 'gmail', args: { ...letter, cc: expect.any(String), limit: 10 } },
      ]);
      expect(result.output).toMatch(
        /^Sent to zoe@example\.test, cc yann@example\.test, jo@example\.test: "Picnic" \(Message-ID <.+>\)\.$/,
      );
      expect(world.smtp.received).toHaveLength(1);
      const [mail] = world.smtp.received;
      expect(mail!.from).toBe(world.dovecot.user);
      expect(mail!.recipients).toEqual(['zoe@example.test', 'yann@example.test', 'jo@example.test']);
      expect(mail!.parsed.subject).toBe('Picnic');
      expect(mail!.parsed.text?.trim()).toBe('Bring a blanket.');
      expect(mail!.parsed.from?.text).toBe(world.dovecot.user);
      expect(mail!.parsed.to).toMatchObject({ value: [{ name: 'Zoe Friend', address: 'zoe@example.test' }] });
      expect(mail!.parsed.cc).toMatchObject({
        value: [{ address: 'yann@example.test' }, { name: 'Doe, Jo' }],
      });
    });

    it('sends nothing when the person declines', async () => {
      const result = await gmail.call(letter, { approve: false });
      expect(result.success).toBe(false);
      expect(result.metadata).toEqual({ refused: 'confirmation', confirmation: 'denied' });
      expect(result.output).toContain('it sends an e-mail in your name');
      expect(result.asked).toHaveLength(1);
      expect(world.smtp.received).toEqual([]);
    });

    it('replies to the sender (its Reply-To) in the same thread, with one "Re:"', async () => {
      const id = await idOf('Lunch on Friday?');
      const result = await gmail.call({ action: 'reply', id, body: 'Friday suits me.' }, { approve: true });
      expect(result.success, result.output).toBe(true);
      expect(result.asked[0]?.args).toMatchObject({ action: 'reply', id });
      expect(result.output).toContain('Sent to dave.home@example.test: "Re: Lunch on Friday?"');
      const [mail] = world.smtp.received;
      expect(mail!.recipients).toEqual(['dave.home@example.test']);
      expect(mail!.parsed.subject).toBe('Re: Lunch on Friday?');
      expect(mail!.parsed.inReplyTo).toBe('<thread-2@example.test>');
      expect(mail!.parsed.references).toEqual(['<thread-1@example.test>', '<thread-2@example.test>']);
      expect(mail!.parsed.text?.trim()).toBe('Friday suits me.');

      // By Message-ID, with a cc.
      const again = await gmail.call(
        { action: 'reply', id: '<thread-2@example.test>', body: 'See you.', cc: 'erin@example.test' },
        { approve: true },
      );
      expect(again.success, again.output).toBe(true);
      expect(world.smtp.received[1]!.recipients).toEqual(['dave.home@example.test', 'erin@example.test']);
    });

    it('keeps an existing "Re:" and answers a message without Reply-To at its From', async () => {
      world.dovecot.deliver(
        'From: Finn <finn@example.test>\nTo: navi@example.test\nSubject: RE: Budget\nMessage-ID: <budget-2@example.test>\n\nAgreed.\n',
      );
      const id = await idOf('RE: Budget');
      const result = await gmail.call({ action: 'reply', id, body: 'Thanks.' }, { approve: true });
      expect(result.success, result.output).toBe(true);
      const [mail] = world.smtp.received;
      expect(mail!.parsed.subject).toBe('RE: Budget');
      expect(mail!.recipients).toEqual(['finn@example.test']);
      expect(mail!.parsed.references).toBe('<budget-2@example.test>');
    });

    it('replies to a hostile message without its smuggled Bcc and with a one-line subject', async () => {
      const id = await idOf('Hello');
      const result = await gmail.call({ action: 'reply', id, body: 'Who are you?' }, { approve: true });
      expect(result.success, result.output).toBe(true);
      const [mail] = world.smtp.received;
      expect(mail!.recipients).toEqual(['mallory@example.test']);
      expect(mail!.parsed.subject).toBe('Re: Hello Bcc: evil@example.test');
      expect(mail!.raw).not.toMatch(/^Bcc:/im);
    });

    it('refuses malformed sends and replies, and nothing reaches the server even when approved', async () => {
      const huge = 'x'.repeat(200_000);
      const cases: [Record<string, unknown>, string][] = [
        [{ action: 'send', subject: 'Hi', body: 'b' }, '"send" needs "to"'],
        [{ action: 'send', to: 'a@example.test', body: 'b' }, '"send" needs "subject"'],
        [{ action: 'send', to: 'a@example.test', subject: 'Hi' }, '"send" needs "body"'],
        [{ action: 'send', to: 'a@example.test', subject: 'Hi', body: '   ' }, '"send" needs "body"'],
        [
          { action: 'send', to: 'not an address', subject: 'Hi', body: 'b' },
          'which is not an e-mail address',
        ],
        [{ action: 'send', to: 42, subject: 'Hi', body: 'b' }, 'which is not an e-mail address'],
        [{ action: 'send', to: ['a@example.test'], subject: 'Hi', body: 'b' }, '"to" must be of type string'],
        [{ action: 'send', to: ', ,', subject: 'Hi', body: 'b' }, '"to" names nobody'],
        [
          { action: 'send', to: 'a@example.test\r\nBcc: x@example.test', subject: 'Hi', body: 'b' },
          '"to" contains a line break',
        ],
        [
          {
            action: 'send',
            to: 'a@example.test',
            cc: 'c@example.test\nBcc: x@y.test',
            subject: 'Hi',
            body: 'b',
          },
          '"cc" contains a line break',
        ],
        [
          { action: 'send', to: 'a@example.test', subject: 'Hi\r\nBcc: x@example.test', body: 'b' },
          '"subject" contains a line break',
        ],
        [{ action: 'send', to: 'a@example.test', subject: 's'.repeat(501), body: 'b' }, 'keep it under 500'],
        [
          { action: 'send', to: 'a@example.test', subject: 'Hi', body: huge },
          '"body" is 200000 characters long',
        ],
        [{ action: 'send', to: 'a@example.test', subject: 'Hi', body: 'a\u0000b' }, 'NUL character'],
        [
          {
            action: 'send',
            to: Array.from({ length: 51 }, (_, i) => `u${i}@example.test`).join(','),
            subject: 'Hi',
            body: 'b',
          },
          'at most 50 are allowed',
        ],
        [
          { action: 'send', to: '"Evil <x@y.test>" <a@example.test>', subject: 'Hi', body: 'b' },
          'has a name with <, > or "',
        ],
        [{ action: 'reply', body: 'b' }, '"reply" needs "id"'],
        [{ action: 'reply', id: '1' }, '"reply" needs "body"'],
        [{ action: 'reply', id: '9999', body: 'b' }, 'No message with id 9999 in INBOX'],
        [{ action: 'reply', id: '1', body: huge }, '"body" is 200000 characters long'],
        [{ action: 'reply', id: '1', body: 'b', mailbox: 'Nowhere' }, 'There is no mailbox "Nowhere"'],
      ];
      for (const [args, expected] of cases) {
        const result = await gmail.call(args, { approve: true });
        expect(result.success, JSON.stringify(args).slice(0, 200)).toBe(false);
        expect(result.output, JSON.stringify(args).slice(0, 200)).toContain(expected);
      }
      expect(world.smtp.received).toEqual([]);
    });

    it('explains a wrong password and a server that is down, without showing the password', async () => {
      const wrong = 'wrong-smtp-password-0815';
      const refusedBefore = world.smtp.refusedLogins;
      const login = await gmail.call(letter, { approve: true, settings: { GMAIL_APP_PASSWORD: wrong } });
      expect(login.success).toBe(false);
      expect(login.output).toContain(
        `The SMTP server 127.0.0.1:${world.smtp.port} refused the login of ${world.dovecot.user}`,
      );
      expect(login.output).toContain('GMAIL_APP_PASSWORD');
      expect(JSON.stringify(login)).not.toContain(wrong);
      expect(world.smtp.refusedLogins).toBe(refusedBefore + 1);

      const port = await freePort();
      const down = await gmail.call(letter, { approve: true, settings: { GMAIL_SMTP_PORT: String(port) } });
      expect(down.success).toBe(false);
      expect(down.output).toContain(
        `Cannot connect to the SMTP server 127.0.0.1:${port}: the connection was refused`,
      );
      expect(down.output).toContain('GMAIL_SMTP_HOST and GMAIL_SMTP_PORT');
      expect(down.output).not.toContain(world.dovecot.password);

      // A reply needs the IMAP server first: down there, nothing is sent either.
      const imapDown = await gmail.call(
        { action: 'reply', id: '1', body: 'b' },
        { approve: true, settings: { GMAIL_IMAP_PORT: String(port) } },
      );
      expect(imapDown.output).toContain(`Cannot connect to the IMAP server 127.0.0.1:${port}`);
      expect(world.smtp.received).toEqual([]);
    });

    it('sends nothing when it is not set up', async () => {
      const result = await gmail.call(letter, { approve: true, settings: { GMAIL_ADDRESS: '' } });
      expect(result.success).toBe(false);
      expect(result.output).toContain('gmail is not set up: GMAIL_ADDRESS is empty');
      expect(world.smtp.received).toEqual([]);
    });
  },
);
