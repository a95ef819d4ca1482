/**
 * The pure parts of `navi mcp login`: what it takes from a pasted address, and which origins it
 * accepts for --redirect-base (the same check as the authorize route's).
 */
import { describe, expect, it } from 'vitest';
import { redirectOrigin } from '../server/routes/mcp-oauth-origin.js';
import { pastedQuery } from './mcp-login.js';

describe('pastedQuery', () => {
  it('takes the query of a whole address, with or without a fragment', () => {
    const query = pastedQuery('  http://127.0.0.1:8000/agents/mcp/oauth/callback?code=c1&state=s1#x \n');
    expect(query?.get('state')).toBe('s1');
    expect(query?.get('code')).toBe('c1');
  });

  it('takes a bare query, and a refusal', () => {
    expect(pastedQuery('state=s2&code=c2')?.get('code')).toBe('c2');
    expect(pastedQuery('?state=s3&error=access_denied')?.get('error')).toBe('access_denied');
  });

  it('refuses what holds no state', () => {
    expect(pastedQuery('')).toBeUndefined();
    expect(pastedQuery('yes')).toBeUndefined();
    expect(pastedQuery('http://127.0.0.1:8000/agents/mcp/oauth/callback?code=c1')).toBeUndefined();
  });
});

describe('redirectOrigin', () => {
  it('keeps a bare origin, without its trailing slash and with its host in lower case', () => {
    expect(redirectOrigin('http://127.0.0.1:8000')).toBe('http://127.0.0.1:8000');
    expect(redirectOrigin('https://Navi.Example.org/')).toBe('https://navi.example.org');
    expect(redirectOrigin('http://[::1]:8000')).toBe('http://[::1]:8000');
  });

  it.each([
    [undefined, /must be a text/],
    [42, /must be a text/],
    ['ftp://host', /http:\/\/ or https:\/\//],
    ['http://host/#top', /origin only/],
    ['http://host:99999', /not an address/],
    ['http://a@host', /user name or password/],
  ])('refuses %j, saying what to send', (value, message) => {
    const answer = redirectOrigin(value, '--redirect-base');
    expect(answer).toEqual({ problem: expect.stringMatching(message) });
    expect((answer as { problem: string }).problem).toContain('like http://127.0.0.1:8000');
  });
});
