/**
 * The gmail user tool against a real dovecot IMAP server: search with the tool's own query
 * language, read (multipart with an attachment, HTML only, by Message-ID), list_labels, and the
 * failures a person meets: not set up, wrong password, server down, bad arguments. The tool is
 * loaded from tools/ by the real loader and called through the real executor.
 */
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../support/dovecot.js';
import { type GmailHarness, gmailHarness } from '../support/gmail-tool.js';
import {
  ATTACHMENT_BYTES,
  ATTACHMENT_MARKER,
  type MailWorld,
  startMailWorld,
} from '../support/mail-fixtures.js';
import { needsProgram } from '../support/requirements.js';

describe.skipIf(!needsProgram('dovecot', 'gmail tool against a real IMAP server'))(
  'gmail: reading mail',
  () => {
    let world: MailWorld;
    let gmail: GmailHarness;

    beforeAll(async () => {
      world = await startMailWorld();
      gmail = await gmailHarness(world.settings);
    });
    afterAll(async () => {
      await world?.close();
    });

    /** The ids search shows, in the order it shows them. */
    const ids = (output: string) => [...output.matchAll(/\[id (\d+)\]/g)].map((m) => Number(m[1]));

    /** The id of the INBOX message with `subject`, as search reports it. */
    async function idOf(subject: string): Promise<number> {
      const found = await gmail.call({ action: 'search', query: `subject:"${subject}"` });
      const [id] = ids(found.output);
      if (id === undefined) throw new Error(`no message "${subject}": ${found.output}`);
      return id;
    }

    it('loads as one tool: the helpers in tools/gmail/ are not tools', () => {
      const entry = gmail.registry.get('gmail');
      expect(entry?.file).toMatch(/tools\/gmail\.ts$/);
      expect(entry?.tool.risk).toEqual({ reads: true, writes: true, network: true });
      expect(gmail.registry.list().filter((e) => e.file?.includes('/tools/gmail/'))).toEqual([]);
      expect(gmail.report.errors.filter((e) => e.origin.startsWith('gmail'))).toEqual([]);
    });

    it('lists the mailboxes, INBOX first, without asking', async () => {
      const result = await gmail.call({ action: 'list_labels' });
      expect(result.success).toBe(true);
      expect(result.asked).toEqual([]);
      expect(result.output).toMatch(/^2 mailboxes/);
      expect(result.output.split('\n').slice(1)).toEqual(['- INBOX', '- Work']);
    });

    it('searches the whole INBOX newest first, with date, sender, subject and snippet', async () => {
      const result = await gmail.call({ action: 'search' });
      expect(result.success).toBe(true);
      expect(result.asked).toEqual([]);
      expect(result.output).toMatch(/^5 messages in INBOX, newest first\./);
      const shown = ids(result.output);
      expect(shown).toHaveLength(5);
      expect([...shown].sort((a, b) => b - a)).toEqual(shown);
      expect(result.output).toContain('From: Alice Example <alice@example.test>\nSubject: Quarterly report');
      expect(result.output).toContain('2024-03-10 09:00 UTC');
      expect(result.output).toContain('Hi, the quarterly numbers are in. Revenue grew by a tenth.');
      // The HTML-only message gets a text snippet, without markup, styles or scripts.
      expect(result.output).toMatch(/BIG NEWS\s+Our garden party is on Saturday\./i);
      expect(result.output).not.toMatch(/<p>|stealCookies|color: red/);
      // Mail is handed over as data inside a block a message cannot close.
      expect(result.output).toContain('<<<untrusted-email-content mailbox="INBOX">>>');
      expect(result.output.match(/<<<end-untrusted-email-content>>>/g)).toHaveLength(1);
    });

    it('translates each term of the query language into IMAP SEARCH', async () => {
      const subjects = async (query: string) => {
        const result = await gmail.call({ action: 'search', query });
        expect(result.success, result.output).toBe(true);
        return [...result.output.matchAll(/^Subject: (.*)$/gm)].map((m) => m[1]).sort();
      };
      expect(await subjects('from:bob')).toEqual(['Invoice attached']);
      expect(await subjects('to:navi@example.test from:alice')).toEqual(['Quarterly report']);
      expect(await subjects('subject:"Lunch on"')).toEqual(['Lunch on Friday?']);
      expect(await subjects('unread')).toEqual([
        'Hello Bcc: evil@example.test',
        'Invoice attached',
        'Newsletter',
      ]);
      expect(await subjects('is:read')).toEqual(['Lunch on Friday?', 'Quarterly report']);
      expect(await subjects('since:2024-04-01 before:2024-05-01')).toEqual(['Invoice attached']);
      expect(await subjects('after:2024/06/05')).toEqual([
        'Hello Bcc: evil@example.test',
        'Lunch on Friday?',
      ]);
      // Plain words must all match, anywhere in the message.
      expect(await subjects('quarterly revenue')).toEqual(['Quarterly report']);
      expect(await subjects('quarterly garden')).toEqual([]);
      expect(await subjects('"numbers are in"')).toEqual(['Quarterly report']);
      expect(await subjects('unread from:carol garden')).toEqual(['Newsletter']);
    });

    it('says when nothing matches, and when it shows only the newest of more', async () => {
      const none = await gmail.call({ action: 'search', query: 'from:nobody@nowhere.test' });
      expect(none).toMatchObject({
        success: true,
        output: 'No messages in INBOX matching "from:nobody@nowhere.test".',
      });
      const one = await gmail.call({ action: 'search', limit: 2 });
      expect(ids(one.output)).toHaveLength(2);
      expect(one.output).toContain('Showing the newest 2 of 5');
    });

    it('searches another mailbox by name', async () => {
      const result = await gmail.call({ action: 'search', mailbox: 'Work', query: 'plan' });
      expect(result.output).toContain('Subject: Project plan');
      expect(result.output).toContain('and mailbox "Work"');
    });

    it('reads a multipart message: headers and text, the attachment listed but never dumped', async () => {
      const id = await idOf('Invoice attached');
      const result = await gmail.call({ action: 'read', id: String(id) });
      expect(result.success, result.output).toBe(true);
      expect(result.asked).toEqual([]);
      expect(result.output).toContain('From: Bob Builder <bob@example.test>');
      expect(result.output).toContain('To: navi@example.test');
      expect(result.output).toContain('Message-ID: <invoice@example.test>');
      expect(result.output).toContain('Please find the invoice for March attached.');
      const kb = (ATTACHMENT_BYTES.length / 1024).toFixed(1);
      expect(result.output).toContain(`Attachments (1):\n- invoice-march.pdf (application/pdf, ${kb} KB)`);
      expect(result.output).not.toContain(ATTACHMENT_MARKER);
      expect(result.output).not.toContain(ATTACHMENT_BYTES.toString('base64').slice(0, 40));
      expect(result.output).not.toContain('0123456789');
    });

    it('reads an HTML-only message as text, and leaves it unread', async () => {
      const id = await idOf('Newsletter');
      const result = await gmail.call({ action: 'read', id });
      expect(result.success, result.output).toBe(true);
      expect(result.output).toMatch(/Our garden party is on Saturday\./);
      expect(result.output).not.toMatch(/<p>|<b>|stealCookies|color: red/);
      expect(result.output).toContain('(unread; reading it here does not mark it read)');
      const unread = await gmail.call({ action: 'search', query: 'unread subject:Newsletter' });
      expect(ids(unread.output)).toEqual([id]);
    });

    it('reads by Message-ID, with or without the angle brackets', async () => {
      for (const id of ['<quarterly@example.test>', 'quarterly@example.test']) {
        const result = await gmail.call({ action: 'read', id });
        expect(result.output).toContain('Subject: Quarterly report');
      }
    });

    it('keeps a hostile message inside its data block', async () => {
      const id = await idOf('Hello');
      const result = await gmail.call({ action: 'read', id });
      expect(result.success).toBe(true);
      // Its subject's line break is flattened, its fake end marker defused.
      expect(result.output).toContain('Subject: Hello Bcc: evil@example.test');
      expect(result.output.match(/<<<end-untrusted-email-content>>>/g)).toHaveLength(1);
      expect(result.output.trimEnd().endsWith('<<<end-untrusted-email-content>>>')).toBe(true);
    });

    it('refuses bad arguments with what was wrong, before contacting a server', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'missing required argument "action"'],
        [
          { action: 'delete_all' },
          '"action" must be one of "search", "read", "send", "reply", "list_labels"',
        ],
        [{ action: 'search', limit: 500 }, '"limit" must be <= 50'],
        [{ action: 'search', limit: 'many' }, '"limit" must be of type integer'],
        [{ action: 'search', query: ['from:bob'] }, '"query" must be of type string'],
        [{ action: 'search', query: 'label:Work' }, 'pass the mailbox as "mailbox"'],
        [{ action: 'search', query: 'has:attachment' }, '"has:" is not a search term this tool knows'],
        [{ action: 'search', query: 'since:2024-02-30' }, 'is not a date; write it as since:2024-01-31'],
        [{ action: 'search', query: 'from:' }, '"from:" needs a value'],
        [{ action: 'search', query: 'x'.repeat(501) }, 'keep it under 500'],
        [{ action: 'search', query: 'from:bob\r\nA1 LOGOUT' }, 'write it on one line'],
        [{ action: 'search', mailbox: 'INBOX\r\nA1 DELETE INBOX' }, '"mailbox" must be one line'],
        [{ action: 'read' }, '"read" needs "id"'],
        [{ action: 'read', id: 'the newest one' }, 'is not a message id'],
        [{ action: 'read', id: '<a@b>\u0000' }, 'is not a message id'],
        [{ action: 'read', id: { uid: 1 } }, '"id" must be of type string'],
        [{ action: 'read', id: '99999999999' }, 'is not a message id'],
        [{ action: 'search', extra: 1 }, 'unknown argument "extra"'],
      ];
      for (const [args, expected] of cases) {
        const result = await gmail.call(args);
        expect(result.success, JSON.stringify(args)).toBe(false);
        expect(result.output, JSON.stringify(args)).toContain(expected);
      }
    });

    it('says which message or mailbox does not exist', async () => {
      const missing = await gmail.call({ action: 'read', id: '9999' });
      expect(missing.success).toBe(false);
      expect(missing.output).toContain('No message with id 9999 in INBOX');
      const unknownMessageId = await gmail.call({ action: 'read', id: '<nobody@example.test>' });
      expect(unknownMessageId.output).toContain('No message with id <nobody@example.test> in INBOX');
      const box = await gmail.call({ action: 'search', mailbox: 'Holidays' });
      expect(box.success).toBe(false);
      expect(box.output).toContain('There is no mailbox "Holidays". Use action "list_labels"');
    });

    it('explains a wrong password without ever showing it', async () => {
      const wrong = 'wrong-app-password-4711';
      const result = await gmail.call({ action: 'search' }, { settings: { GMAIL_APP_PASSWORD: wrong } });
      expect(result.success).toBe(false);
      expect(result.output).toContain(`refused the login of ${world.dovecot.user}`);
      expect(result.output).toContain('GMAIL_APP_PASSWORD');
      expect(result.output).toContain('https://myaccount.google.com/apppasswords');
      expect(result.output).not.toContain(wrong);
      expect(JSON.stringify(result)).not.toContain(wrong);
    });

    it('explains a server that is down', async () => {
      const port = await freePort();
      const result = await gmail.call(
        { action: 'list_labels' },
        { settings: { GMAIL_IMAP_PORT: String(port) } },
      );
      expect(result.success).toBe(false);
      expect(result.output).toContain(
        `Cannot connect to the IMAP server 127.0.0.1:${port}: the connection was refused`,
      );
      expect(result.output).toContain('GMAIL_IMAP_HOST and GMAIL_IMAP_PORT');
      expect(result.output).not.toContain(world.dovecot.password);
    });

    it('gives up on a server that never answers, and a stop closes the connection', async () => {
      const sockets: Socket[] = [];
      const closed: Promise<void>[] = [];
      const silent = createServer((socket) => {
        sockets.push(socket);
        closed.push(new Promise((resolve) => socket.on('close', () => resolve())));
        socket.on('error', () => {});
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const port = (silent.address() as AddressInfo).port;
      try {
        const late = await gmail.call(
          { action: 'list_labels' },
          { settings: { GMAIL_IMAP_PORT: String(port), GMAIL_TIMEOUT_MS: '1000' } },
        );
        expect(late.success).toBe(false);
        expect(late.output).toContain(`The IMAP server 127.0.0.1:${port} did not answer within 1000 ms`);
        expect(late.output).toContain('GMAIL_TIMEOUT_MS');

        const stop = new AbortController();
        const call = gmail.call(
          { action: 'list_labels' },
          // Its own limit is far away: only the stop can end the connection within the test.
          { settings: { GMAIL_IMAP_PORT: String(port), GMAIL_TIMEOUT_MS: '600000' }, signal: stop.signal },
        );
        await vi.waitUntil(() => sockets.length === 2);
        stop.abort();
        const stopped = await call;
        expect(stopped).toMatchObject({ success: false, metadata: { refused: 'stopped' } });
        // The tool itself let go of the connection: the server sees it closed.
        await Promise.all(closed);
      } finally {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });

    it('explains TLS spoken to a plain port', async () => {
      const result = await gmail.call({ action: 'list_labels' }, { settings: { GMAIL_IMAP_TLS: 'true' } });
      expect(result.success).toBe(false);
      expect(result.output).toContain('GMAIL_IMAP_TLS');
      expect(result.output).not.toContain(world.dovecot.password);
    });

    it('says which settings to set when it is not set up', async () => {
      const none = await gmail.call(
        { action: 'search' },
        { settings: { GMAIL_ADDRESS: '', GMAIL_APP_PASSWORD: '' } },
      );
      expect(none.success).toBe(false);
      expect(none.output).toContain('gmail is not set up: GMAIL_ADDRESS and GMAIL_APP_PASSWORD are empty');
      expect(none.output).toContain('https://myaccount.google.com/apppasswords');
      const noPassword = await gmail.call(
        { action: 'list_labels' },
        { settings: { GMAIL_APP_PASSWORD: '' } },
      );
      expect(noPassword.output).toContain('gmail is not set up: GMAIL_APP_PASSWORD is empty');
    });
  },
);
