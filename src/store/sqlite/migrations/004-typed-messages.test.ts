/**
 * The row rewrite of migration 004 for the first-build keys the fixture database does not hold
 * (its real rows are checked end to end in test/integration/first-build-migration.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { upgradeRow } from './004-typed-messages.js';

describe('upgradeRow', () => {
  it('turns the step-limit answer and a recall trigger into typed fields', () => {
    expect(upgradeRow('assistant', 'I stopped', { metadata: { max_iterations_reached: true } })).toEqual({
      content: 'I stopped',
      payload: { kind: 'iteration_limit' },
    });
    expect(upgradeRow('user', 'remind me', { metadata: { trigger: 'recall' } })).toEqual({
      content: 'remind me',
      payload: { trigger: 'recall' },
    });
  });

  it('keeps the other payload fields and drops keys nothing reads', () => {
    const old = { thinking: 'hmm', images: ['aGk='], metadata: { is_form_submit: true } };
    expect(upgradeRow('user', 'hi', old)).toEqual({
      content: 'hi',
      payload: { thinking: 'hmm', images: ['aGk='] },
    });
  });

  it('strips only a trailing file list, and only when files were attached', () => {
    const text = 'see [Attached files] below';
    expect(upgradeRow('user', text, { metadata: {} }).content).toBe(text);
    const files = [{ name: 'a.txt', path: '/f/a.txt' }];
    const content = 'read this\n\n[Attached files]\n- a.txt: /f/a.txt';
    expect(upgradeRow('user', content, { metadata: { files } })).toEqual({
      content: 'read this',
      payload: { attachments: files },
    });
  });

  it('keeps what a tool reported beside success, components and published content', () => {
    expect(
      upgradeRow('tool', 'ok', {
        tool_call_id: 'c1',
        name: 'terminal',
        metadata: { success: true, exit_code: 0, sandboxed: true },
      }),
    ).toEqual({
      content: 'ok',
      payload: {
        tool_call_id: 'c1',
        name: 'terminal',
        success: true,
        tool_metadata: { exit_code: 0, sandboxed: true },
      },
    });
  });
});
