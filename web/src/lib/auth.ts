/**
 * Why the server last refused this browser, and how to say it. The server tells a missing
 * token (UNAUTHORIZED, WebSocket close reason `token required`) from a wrong one (TOKEN_WRONG,
 * `token wrong`): a stale cookie after NAVI_API_TOKEN changed, or a mistyped token, are fixed by
 * signing in with the right token, not by looking for where a token goes.
 */
import { ref } from 'vue';

/** The code of the last 401 a request got (`TOKEN_WRONG`, `UNAUTHORIZED`), null before any. */
export const authRefusal = ref<string | null>(null);

/** The line the sign-in dialog opens with. */
export function loginIntro(refusal: string | null): string {
  if (refusal === 'TOKEN_WRONG') {
    return 'This browser’s sign-in is no longer accepted: the server’s access token (NAVI_API_TOKEN) has changed since. Sign in with the token it uses now.';
  }
  return 'This server needs its access token (the value of NAVI_API_TOKEN).';
}

/** What the dialog says when signing in failed (`code` is the server's error code, if any). */
export function loginErrorText(code: string | undefined, fallback: string): string {
  if (code === 'TOKEN_WRONG') {
    return 'That token is not right: it is not the one this server uses. Check NAVI_API_TOKEN where Navi runs (its environment or .env file) and type it again.';
  }
  if (code === 'UNAUTHORIZED') return 'Type the access token first.';
  return fallback;
}

/** What the chat says when its WebSocket was closed with 4401 (`reason` as the server gave it). */
export function socketRefusalText(reason: string): string {
  if (reason === 'token wrong') {
    return 'The server no longer accepts this browser’s sign-in (its access token changed). Reload the page to sign in again.';
  }
  return 'The server needs its access token. Reload the page to sign in.';
}
