import { describe, expect, it } from 'vitest';
import { SecretMasker } from '../util/secret-masker.js';
import { DoctorNotes, logLineSentence } from './doctor-notes.js';

describe('logLineSentence', () => {
  it('turns a JSON log line into its message and its text fields', () => {
    const line = JSON.stringify({
      level: 40,
      time: 1,
      pid: 2,
      hostname: 'h',
      component: 'mcp',
      mcp_server: 'files',
      reason: 'process exited with code 1',
      restart_in_ms: 1000,
      msg: 'MCP server down',
    });
    expect(logLineSentence(line)).toBe(
      'MCP server down (mcp server: files; reason: process exited with code 1)',
    );
  });

  it("gives an error's message, not its stack", () => {
    const line = JSON.stringify({
      level: 50,
      err: { type: 'Error', message: 'disk full', stack: 'Error: …' },
      msg: 'x',
    });
    expect(logLineSentence(line)).toBe('x (error: disk full)');
  });

  it('keeps text that is not a JSON object as it is, and drops blank lines', () => {
    expect(logLineSentence('plain words\n')).toBe('plain words');
    expect(logLineSentence('[1,2]')).toBe('[1,2]');
    expect(logLineSentence('   ')).toBeUndefined();
    expect(logLineSentence(JSON.stringify({ level: 40 }))).toBe('a log line without text');
  });
});

describe('DoctorNotes', () => {
  it('prints nothing when nothing was logged, and never info lines', () => {
    const notes = new DoctorNotes();
    notes.logger.info('started');
    expect(notes.lines()).toEqual([]);
  });

  it('says each warning once, masked, as a sentence', async () => {
    const secrets = new SecretMasker([{ name: 'OPENAI_API_KEY', value: 'sk-very-secret-value-123' }]);
    const notes = new DoctorNotes(secrets);
    for (let i = 0; i < 3; i++)
      notes.logger.warn({ reason: 'key sk-very-secret-value-123 refused', attempt: i }, 'backend down');
    await new Promise((resolve) => setImmediate(resolve));
    const lines = notes.lines();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('Logged while checking:');
    expect(lines[1]).toMatch(/^ {2}backend down \(reason: key .*OPENAI_API_KEY.* refused\)$/);
    expect(lines.join('\n')).not.toContain('sk-very-secret-value-123');
  });

  it('prints at most twenty notes and says how many more there were', async () => {
    const notes = new DoctorNotes();
    for (let i = 0; i < 25; i++) notes.logger.error(`failure ${i}`);
    await new Promise((resolve) => setImmediate(resolve));
    const lines = notes.lines();
    expect(lines).toHaveLength(22);
    expect(lines.at(-1)).toBe('  … and 5 more');
  });
});
