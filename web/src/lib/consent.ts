/**
 * Whether this browser holds the person's consent: only then may it answer the agent's
 * confirmations. A browser gets it by opening a pairing link (`/#pair=CODE`, printed by
 * `navi serve` and `navi pair`) or by signing in with the API token. The code sits in the URL
 * fragment so that it never reaches a server log, and is removed from the address bar at once.
 */
import { ref } from 'vue';
import { api, describeError } from './api.js';

/** True or false once known; null while unknown (the status could not be read). */
export const consent = ref<boolean | null>(null);
/** Why the last pairing attempt failed, for the person to read; null when it did not. */
export const pairingProblem = ref<string | null>(null);

/** The code of a `#pair=CODE` fragment, removed from the address bar; null without one. */
function takePairingCode(): string | null {
  const match = /^#pair=([^&]*)/.exec(window.location.hash);
  if (!match) return null;
  // replaceState leaves no history entry holding the code, and fires no hashchange.
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}`);
  return decodeURIComponent(match[1] ?? '');
}

/** Asks the server whether this browser has consent now. */
export async function refreshConsent(): Promise<boolean | null> {
  try {
    consent.value = (await api.authStatus()).consent;
  } catch {
    consent.value = null;
  }
  return consent.value;
}

/** Pairs with the code of the URL, if there is one, then reads the consent status. */
export async function startConsent(): Promise<void> {
  const code = takePairingCode();
  if (code !== null) {
    try {
      await api.pair(code);
      pairingProblem.value = null;
    } catch (err) {
      pairingProblem.value = `Pairing this browser failed: ${describeError(err)}`;
    }
  }
  await refreshConsent();
}

/** Pairs at start and whenever a pairing link is opened in this tab (only its fragment changes). */
export function watchPairingLinks(): () => void {
  const onHash = (): void => {
    if (window.location.hash.startsWith('#pair=')) void startConsent();
  };
  window.addEventListener('hashchange', onHash);
  void startConsent();
  return () => window.removeEventListener('hashchange', onHash);
}
