/**
 * The pure parts of the gmail user tool (tools/gmail/): the query language as IMAP criteria,
 * recipients and reply headers. Needs no mail server, so these run everywhere; the behaviour
 * against real servers is in test/integration/gmail-*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { testSettings } from '../../src/config/settings.js';
import { parseRecipients, replyReferences, replySubject } from '../../tools/gmail/compose.js';
import { GmailError, readConfig, withoutPassword } from '../../tools/gmail/config.js';
import { parseQuery } from '../../tools/gmail/query.js';

const day = (iso: string) => new Date(`${iso}T00:00:00Z`);

describe('gmail query language', () => {
  it('turns each term into its IMAP criterion, in as few searches as IMAP allows', () => {
    expect(parseQuery('')).toEqual([{ all: true }]);
    expect(parseQuery('  ')).toEqual([{ all: true }]);
    expect(
      parseQuery('from:alice to:bob cc:carol subject:"q3 report" unread since:2024-01-31 before:2024/3/1'),
    ).toEqual([
      {
        from: 'alice',
        to: 'bob',
        cc: 'carol',
        subject: 'q3 report',
        seen: false,
        since: day('2024-01-31'),
        before: day('2024-03-01'),
      },
    ]);
    // A key used twice needs a second search; the tool intersects the results.
    expect(parseQuery('budget "next year" from:a from:b is:starred')).toEqual([
      { text: 'budget', from: 'a', flagged: true },
      { text: 'next year', from: 'b' },
    ]);
    expect(parseQuery('is:read after:2024-02-29')).toEqual([{ seen: true, since: day('2024-02-29') }]);
    // Quoted, the flag words and colons are plain text.
    expect(parseQuery('"unread" "re:lunch" 10:30')).toEqual([
      { text: 'unread' },
      { text: 're:lunch' },
      { text: '10:30' },
    ]);
  });

  it('explains every mistake', () => {
    const why = (q: string) => {
      try {
        parseQuery(q);
      } catch (err) {
        expect(err).toBeInstanceOf(GmailError);
        return (err as Error).message;
      }
      throw new Error(`"${q}" was accepted`);
    };
    expect(why('since:yesterday')).toContain('is not a date; write it as since:2024-01-31');
    expect(why('before:2023-02-29')).toContain('is not a date');
    expect(why('subject:')).toContain('"subject:" needs a value');
    expect(why('is:important')).toContain('"is:important" is not known');
    expect(why('in:sent')).toContain('pass the mailbox as "mailbox"');
    expect(why('size:10')).toContain('"size:" is not a search term this tool knows');
    expect(why('a\tb')).toContain('write it on one line');
    expect(why('y'.repeat(501))).toContain('keep it under 500');
  });
});

describe('gmail recipients and replies', () => {
  it('reads plain, named and quoted addresses, and nothing else', () => {
    expect(
      parseRecipients('to', 'a@example.test; "Doe, Jo" <jo@example.test>, Ann <ann@exämple.test>'),
    ).toEqual([
      { name: '', address: 'a@example.test' },
      { name: 'Doe, Jo', address: 'jo@example.test' },
      { name: 'Ann', address: 'ann@exämple.test' },
    ]);
    for (const bad of ['a@b', 'a b@example.test', '<a@example.test', 'a@example.test>x', 'a@@example.test']) {
      expect(() => parseRecipients('to', bad), bad).toThrow(GmailError);
    }
    expect(() => parseRecipients('cc', 'a@example.test\u2028Bcc: x@example.test')).toThrow(
      '"cc" contains a line break',
    );
  });

  it('makes the subject and references of a reply', () => {
    expect(replySubject('Lunch')).toBe('Re: Lunch');
    expect(replySubject('re: Lunch')).toBe('re: Lunch');
    expect(replySubject('')).toBe('Re: (no subject)');
    expect(replySubject('Hi\r\nBcc: x@example.test')).toBe('Re: Hi Bcc: x@example.test');
    expect(replyReferences('<a@x> <b@x>\r\n <c@x>', '<d@x>')).toEqual(['<a@x>', '<b@x>', '<c@x>', '<d@x>']);
    expect(replyReferences('junk <a@x> <not valid>', '<bad id>')).toEqual(['<a@x>']);
    const many = Array.from({ length: 30 }, (_, i) => `<m${i}@x>`).join(' ');
    expect(replyReferences(many, '<last@x>')).toHaveLength(20);
  });
});

describe('gmail settings', () => {
  it('takes the app password without the spaces Google shows, and hides both forms', () => {
    const config = readConfig(
      testSettings({ GMAIL_ADDRESS: ' me@example.test ', GMAIL_APP_PASSWORD: 'abcd efgh ijkl mnop' }),
    );
    expect(config).toMatchObject({
      address: 'me@example.test',
      password: 'abcdefghijklmnop',
      imap: { host: 'imap.gmail.com', port: 993, tls: true },
      smtp: { host: 'smtp.gmail.com', port: 465, tls: true },
      timeoutMs: 30_000,
    });
    expect(withoutPassword('x abcdefghijklmnop y abcd efgh ijkl mnop z', config)).toBe(
      'x [app password hidden] y [app password hidden] z',
    );
  });

  it('names the missing settings, and how to get an app password', () => {
    expect(() => readConfig(testSettings())).toThrow(
      'gmail is not set up: GMAIL_ADDRESS and GMAIL_APP_PASSWORD are empty',
    );
    expect(() => readConfig(undefined)).toThrow('https://myaccount.google.com/apppasswords');
  });
});
