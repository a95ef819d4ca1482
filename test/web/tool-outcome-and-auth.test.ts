/**
 * The words of a tool card's outcome (web/src/lib/tool-outcome.ts), and of the sign-in dialog and
 * the chat when the server refuses the token (web/src/lib/auth.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ToolOutcome } from '../../src/protocol/events.js';
import { loginErrorText, loginIntro, socketRefusalText } from '../../web/src/lib/auth.js';
import { toolStatusLabel, toolTone } from '../../web/src/lib/tool-outcome.js';

const card = (status: 'running' | 'done' | 'failed' | 'cancelled', outcome?: ToolOutcome) => ({
  status,
  confirm: null,
  ...(outcome ? { outcome } : {}),
});

describe('toolStatusLabel', () => {
  it('names every outcome instead of "failed" for all', () => {
    const labels: [ToolOutcome, boolean, string][] = [
      ['ok', true, 'done'],
      ['failed', false, 'failed'],
      ['denied', false, 'denied'],
      ['confirmation_timeout', false, 'confirmation timed out'],
      ['refused', false, 'refused by policy'],
      ['timed_out', false, 'timed out'],
      ['stopped', false, 'stopped'],
    ];
    for (const [outcome, success, label] of labels) {
      expect(toolStatusLabel(card(success ? 'done' : 'failed', outcome)), outcome).toBe(label);
    }
  });

  it('falls back on success or failure without an outcome (an older server) or with an unknown one', () => {
    expect(toolStatusLabel(card('done'))).toBe('done');
    expect(toolStatusLabel(card('failed'))).toBe('failed');
    expect(toolStatusLabel(card('failed', 'exploded' as ToolOutcome))).toBe('failed');
    expect(toolStatusLabel(card('done', '' as ToolOutcome))).toBe('done');
  });

  it('shows the waiting and running states first, and an unfinished call as such', () => {
    expect(toolStatusLabel({ status: 'running', confirm: 'pending' })).toBe('waiting for approval');
    expect(toolStatusLabel(card('running'))).toBe('running');
    expect(toolStatusLabel(card('cancelled', 'ok'))).toBe('not finished');
  });
});

describe('toolTone', () => {
  it('shows a refusal by a person, the policy or a stop muted, not as the tool failing', () => {
    for (const outcome of ['denied', 'confirmation_timeout', 'refused', 'stopped'] as const) {
      expect(toolTone(card('failed', outcome)), outcome).toBe('declined');
    }
    expect(toolTone(card('failed', 'timed_out'))).toBe('failed');
    expect(toolTone(card('failed', 'failed'))).toBe('failed');
    expect(toolTone(card('failed'))).toBe('failed');
    expect(toolTone(card('done', 'ok'))).toBe('ok');
    expect(toolTone(card('running'))).toBe('pending');
  });
});

describe('token refusals', () => {
  it('says a wrong token is not right, and what to check', () => {
    const text = loginErrorText('TOKEN_WRONG', 'server text');
    expect(text).toMatch(/^That token is not right/);
    expect(text).toContain('NAVI_API_TOKEN');
    expect(text).not.toContain('A valid API token is required');
  });

  it('asks for a token when none was typed, and keeps other errors as the server said them', () => {
    expect(loginErrorText('UNAUTHORIZED', 'x')).toBe('Type the access token first.');
    expect(loginErrorText(undefined, 'The Navi server cannot be reached.')).toBe(
      'The Navi server cannot be reached.',
    );
    expect(loginErrorText('RATE_LIMITED', 'Too many tries')).toBe('Too many tries');
  });

  it('opens the dialog with why it is asking', () => {
    expect(loginIntro('TOKEN_WRONG')).toMatch(/no longer accepted.*has changed/);
    expect(loginIntro(null)).toMatch(/needs its access token/);
    expect(loginIntro('UNAUTHORIZED')).toMatch(/needs its access token/);
  });

  it('tells a chat closed for a wrong token from one closed for a missing token', () => {
    expect(socketRefusalText('token wrong')).toMatch(/no longer accepts.*sign in again/);
    expect(socketRefusalText('token required')).toMatch(/needs its access token/);
    expect(socketRefusalText('')).toMatch(/needs its access token/);
  });
});
