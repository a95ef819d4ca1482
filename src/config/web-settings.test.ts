/** The web tools' settings: what each accepts, and the message when it is wrong. */
import { describe, expect, it } from 'vitest';
import { loadSettings, SettingsError, settingText, testSettings } from './settings.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadSettings(env);
  } catch (err) {
    if (err instanceof SettingsError) return err.problems;
    throw err;
  }
  return [];
}

describe('web settings', () => {
  it('have defaults that need no configuration', () => {
    const s = loadSettings({});
    expect(s.WEB_SEARCH_PROVIDERS).toEqual(['searxng', 'duckduckgo', 'brave']);
    expect(s.SEARXNG_URL).toBe('');
    expect(s.MCP_SHIPPED_SERVERS).toBe(true);
    expect(testSettings().MCP_SHIPPED_SERVERS).toBe(false);
    expect(testSettings({ MCP_SHIPPED_SERVERS: 'true' }).MCP_SHIPPED_SERVERS).toBe(true);
  });

  it('take a provider order and a SearXNG URL without its trailing slash', () => {
    const s = loadSettings({
      WEB_SEARCH_PROVIDERS: ' brave , searxng ',
      SEARXNG_URL: 'http://searx.lan:8080/',
    });
    expect(s.WEB_SEARCH_PROVIDERS).toEqual(['brave', 'searxng']);
    expect(s.SEARXNG_URL).toBe('http://searx.lan:8080');
    expect(settingText(s, 'WEB_SEARCH_PROVIDERS')).toBe('brave,searxng');
  });

  it('name the variable and what it accepts when a value is wrong', () => {
    expect(problems({ WEB_SEARCH_PROVIDERS: 'google' })).toEqual([
      expect.stringMatching(
        /^WEB_SEARCH_PROVIDERS="google": accepts a comma-separated list of searxng, duckduckgo, brave/,
      ),
    ]);
    expect(problems({ WEB_SEARCH_PROVIDERS: ' , ' })).toEqual([
      expect.stringMatching(/^WEB_SEARCH_PROVIDERS=.*needs at least one of/),
    ]);
    expect(problems({ SEARXNG_URL: 'ftp://searx' })).toEqual([
      expect.stringMatching(/^SEARXNG_URL="ftp:\/\/searx": accepts an http/),
    ]);
    expect(problems({ WEB_VIEW_TIMEOUT_MS: '5' })).toEqual([expect.stringMatching(/must be at least 1000/)]);
    expect(problems({ HTTP_ALLOW_PRIVATE: 'not a host!' })).toEqual([
      expect.stringMatching(/^HTTP_ALLOW_PRIVATE=.*accepts true, false, or a comma-separated list/),
    ]);
  });
});
