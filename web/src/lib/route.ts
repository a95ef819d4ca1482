/**
 * Hash routing (`#/sessions/<id>`, `#/sessions/<id>?m=<message id>` to open a chat at one
 * message, `#/vault`, `#/settings`, `#/setup`, and the settings' own pages `#/memory`, `#/tools`,
 * `#/mcp`, `#/profiles`): reload and back/forward work without any server fallback.
 */
import { type Ref, ref } from 'vue';

export interface Route {
  sessionId: string | null;
  /** The message a chat opens at (a search hit), when the link names one. */
  messageId: string | null;
  /**
   * Which page the main area shows: a chat (or the welcome page), the vault, the settings (and
   * its pages on memory, tools, MCP servers and profiles), or the setup screen asked for from
   * the settings page.
   */
  page: Page;
}

export type Page = 'chat' | 'vault' | 'settings' | 'setup' | 'memory' | 'tools' | 'mcp' | 'profiles';

export const vaultHref = '#/vault';
export const settingsHref = '#/settings';
export const setupHref = '#/setup';
export const memoryHref = '#/memory';
export const toolsHref = '#/tools';
export const mcpHref = '#/mcp';
export const profilesHref = '#/profiles';

const pages = ['vault', 'settings', 'setup', 'memory', 'tools', 'mcp', 'profiles'] as const;

/** The settings page and the pages reached from it: the sidebar's Settings link stands for them all. */
export function isSettingsPage(page: Page): boolean {
  return page !== 'chat' && page !== 'vault';
}

/** A part of the address, decoded; null when absent or not valid percent-encoding. */
function decodePart(raw: string | undefined): string | null {
  if (!raw) return null;
  try {
    return decodeURIComponent(raw);
  } catch {
    // A hand-edited or truncated link must not stop the app from starting: it opens nothing.
    return null;
  }
}

export function parseHash(hash: string): Route {
  for (const page of pages) {
    if (new RegExp(`^#/${page}(?:[/?#]|$)`).test(hash)) return { sessionId: null, messageId: null, page };
  }
  const match = /^#\/sessions\/([^/?#]+)(?:\?m=([^&#]+))?/.exec(hash);
  const sessionId = decodePart(match?.[1]);
  return {
    sessionId,
    messageId: sessionId === null ? null : decodePart(match?.[2]),
    page: 'chat',
  };
}

/** A chat's link; with `messageId`, the chat opens scrolled to that message. */
export function sessionHref(sessionId: string, messageId?: string): string {
  const base = `#/sessions/${encodeURIComponent(sessionId)}`;
  return messageId ? `${base}?m=${encodeURIComponent(messageId)}` : base;
}

/** A reactive route that follows `location.hash`. */
export function useHashRoute(): { route: Ref<Route>; navigate: (sessionId: string | null) => void } {
  const route = ref<Route>(parseHash(window.location.hash));
  window.addEventListener('hashchange', () => {
    route.value = parseHash(window.location.hash);
  });
  const navigate = (sessionId: string | null): void => {
    window.location.hash = sessionId ? sessionHref(sessionId) : '#/';
  };
  return { route, navigate };
}
