/**
 * Hash routing (`#/sessions/<id>`, `#/vault`, `#/settings`, `#/setup`): reload and back/forward
 * work without any server fallback.
 */
import { type Ref, ref } from 'vue';

export interface Route {
  sessionId: string | null;
  /**
   * Which page the main area shows: a chat (or the welcome page), the vault, the settings, or
   * the setup screen asked for from the settings page.
   */
  page: 'chat' | 'vault' | 'settings' | 'setup';
}

export const vaultHref = '#/vault';
export const settingsHref = '#/settings';
export const setupHref = '#/setup';

const pages = ['vault', 'settings', 'setup'] as const;

export function parseHash(hash: string): Route {
  for (const page of pages) {
    if (new RegExp(`^#/${page}(?:[/?#]|$)`).test(hash)) return { sessionId: null, page };
  }
  const match = /^#\/sessions\/([^/?#]+)/.exec(hash);
  return { sessionId: match?.[1] ? decodeURIComponent(match[1]) : null, page: 'chat' };
}

export function sessionHref(sessionId: string): string {
  return `#/sessions/${encodeURIComponent(sessionId)}`;
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
