/**
 * Whether this browser holds the person's consent: only then may it answer the agent's
 * confirmations. A browser gets it by opening a pairing link (`/#pair=CODE`, printed by
 * `navi serve` and `navi pair`) or by signing in with the API token. The code sits in the URL
 * fragment so that it never reaches a server log, and is removed from the address bar at once.
 */
import { ref } from 'vue';
import { ApiError, api, describeError } from './api.js';

/** True or false once known; null while unknown (the status could not be read). */
export const consent = ref<boolean | null>(null);
/** Why the last pairing attempt failed, for the person to read; null when it did not. */
export const pairingProblem = ref<string | null>(null);

/**
 * What a browser without consent is told when it tries to change the model settings, test a
 * connection, or download, install or remove something: the server takes those from the person
 * only, never from the agent's own commands on that machine.
 */
export const PAIR_TO_CHANGE_MODELS =
  'This browser is not paired with Navi, so it may not change the model settings, test connections, or download, install or remove anything. To pair it, run npx navi pair on the machine Navi runs on and open the link it prints in this browser.';

/**
 * Why a call that needs consent failed, for the person to read: `pairText` (what this browser
 * may not do, and how to pair it) when the server wants consent, and then the rest of the app
 * knows it has none; the server's own words otherwise.
 */
export function explainConsentError(err: unknown, pairText: string): string {
  if (err instanceof ApiError && err.code === 'CONSENT_REQUIRED') {
    consent.value = false;
    return pairText;
  }
  return describeError(err);
}

/** Why a call of the setup screen or the settings page failed (see `explainConsentError`). */
export function explainModelError(err: unknown): string {
  return explainConsentError(err, PAIR_TO_CHANGE_MODELS);
}

/** The code of a `#pair=CODE` fragment, removed from the address bar; null without one. */
function takePairingCode(): string | null {
  const match = /^#pair=([^&]*)/.exec(window.location.hash);
  if (!match) return null;
  // replaceState leaves no history entry holding the code, and fires no hashchange.
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}`);
  const raw = match[1] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    // A mangled link: the server refuses the code as it is, and the person is told pairing failed.
    return raw;
  }
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
