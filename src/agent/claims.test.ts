import { describe, expect, it } from 'vitest';
import { findUnverifiedClaims, type RunCall } from './claims.js';

const none: RunCall[] = [];

describe('findUnverifiedClaims: claims of acting that no call backs', () => {
  it.each([
    ['I have saved the notes to ~/notes.txt.', 'I have saved the notes to ~/notes.txt.'],
    [
      "I've created the file report.md with the figures.",
      "I've created the file report.md with the figures.",
    ],
    ['I sent the invitation to Anna.', 'I sent the invitation to Anna.'],
    ['I scheduled a check of the backups for 9 am.', 'I scheduled a check of the backups for 9 am.'],
    ['Done — the file is written.', 'Done — the file is written.'],
    ['The report has been saved.', 'The report has been saved.'],
    ['Your email has been sent to the team.', 'Your email has been sent to the team.'],
    ['I’ve just installed ripgrep for you.', 'I’ve just installed ripgrep for you.'],
    ['I ran the tests and they pass.', 'I ran the tests and they pass.'],
    ['I set a reminder for Friday.', 'I set a reminder for Friday.'],
    ['The backup is now saved on the server.', 'The backup is now saved on the server.'],
    ['I have gone ahead and deleted the old logs.', 'I have gone ahead and deleted the old logs.'],
    [
      'I saved the notes to ~/notes.txt so you can read them later.',
      'I saved the notes to ~/notes.txt so you can read them later.',
    ],
    ['**I have saved the file.**', 'I have saved the file.'],
    ['- I emailed the summary to Bob.', 'I emailed the summary to Bob.'],
  ])('flags %j', (answer, claim) => {
    expect(findUnverifiedClaims(answer, none)).toEqual([claim]);
  });

  it.each([
    'I will save the notes to ~/notes.txt.',
    'I can create the file for you.',
    'Shall I send it to Anna?',
    'Should I schedule a reminder?',
    "I'll send it as soon as you confirm.",
    "I haven't saved anything yet.",
    'I have not sent the email.',
    "I couldn't create the file: the folder is read-only.",
    'I was unable to install the package.',
    'If you want, I have saved drafts before.',
    'Let me save that to a file.',
    'I wrote a short poem for you.',
    "I've created a table comparing the two phones.",
    'I wrote a Python script that renames the photos.',
    'Here is the file I created.',
    'I summarised the article below.',
    'I ran into a problem with the request.',
    'I started by reading the article.',
    'As I sent you earlier, the meeting is at 3.',
    'To save it, run `I have saved the file` in the terminal.',
    'He said "I have saved the file" but it was empty.',
    '> I have saved the file.',
    'The file is written in Python.',
    'The meeting is scheduled for Monday.',
    'It should have been saved automatically.',
    'You have saved the file already.',
    'I saved nothing, because the path does not exist.',
    'For example, I sent an email to the team.',
    '```\nI have saved the file\n```',
    'I am going to install it now.',
    'I updated my answer with the new figures.',
    'Have you created the folder yet?',
  ])('leaves %j alone', (answer) => {
    expect(findUnverifiedClaims(answer, none)).toEqual([]);
  });

  it.each<[string, RunCall[]]>([
    ['I have saved the notes to ~/notes.txt.', [{ name: 'filesystem', success: true }]],
    ["I've created the file report.md.", [{ name: 'write_file', success: true }]],
    ['I sent the invitation to Anna.', [{ name: 'mcp__gmail__send_email', success: true }]],
    ['I sent the form.', [{ name: 'mcp__navi_web__http_request', success: true }]],
    ['I scheduled a check of the backups.', [{ name: 'recall_create', success: true }]],
    ['I set a reminder for Friday.', [{ name: 'recall_create', success: true }]],
    ['I installed ripgrep.', [{ name: 'terminal', success: true }]],
    ['I saved the notes to notes.txt.', [{ name: 'terminal', success: true }]],
    ['I emailed the report to Bob.', [{ name: 'spawn_agent', success: true }]],
    ['I have stored that in your memory.', [{ name: 'memory', success: true }]],
    [
      'I saved the notes to notes.txt and emailed them to Bob.',
      [
        { name: 'filesystem', success: true },
        { name: 'mcp__gmail__send_email', success: true },
      ],
    ],
  ])('accepts %j when a fitting call succeeded', (answer, calls) => {
    expect(findUnverifiedClaims(answer, calls)).toEqual([]);
  });

  it('does not count a failed call, nor a call of another kind', () => {
    expect(
      findUnverifiedClaims('I have saved the notes to ~/notes.txt.', [
        { name: 'filesystem', success: false },
      ]),
    ).toHaveLength(1);
    expect(
      findUnverifiedClaims('I sent the invitation to Anna.', [{ name: 'filesystem', success: true }]),
    ).toHaveLength(1);
    expect(
      findUnverifiedClaims('I have saved the notes to ~/notes.txt.', [
        { name: 'mcp__navi_web__web_search', success: true },
      ]),
    ).toHaveLength(1);
  });

  it('flags the part of a claim no call backs: saved and emailed, only the file written', () => {
    expect(
      findUnverifiedClaims('I saved the notes to notes.txt and emailed them to Bob.', [
        { name: 'filesystem', success: true },
      ]),
    ).toEqual(['I saved the notes to notes.txt and emailed them to Bob.']);
  });

  it('quotes each claim once, at most five, each at most 200 characters', () => {
    const long = `I have saved the file ${'very '.repeat(60)}carefully.`;
    const claims = findUnverifiedClaims(
      [
        long,
        long,
        'I sent it.',
        'I deleted the logs.',
        'I installed git.',
        'I executed the job.',
        'I uploaded it.',
      ].join('\n'),
      none,
    );
    expect(claims).toHaveLength(5);
    expect(claims[0]).toHaveLength(200);
    expect(claims[0]?.endsWith('…')).toBe(true);
    expect(new Set(claims).size).toBe(5);
  });

  it('finds nothing in an empty or plain answer', () => {
    expect(findUnverifiedClaims('', none)).toEqual([]);
    expect(findUnverifiedClaims('Paris is the capital of France.', none)).toEqual([]);
  });
});
