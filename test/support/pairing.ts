/**
 * Pairs a test client the way a person's browser is paired: a code created through the store
 * (what `navi pair` does), exchanged at `POST /auth/pair` for the `navi_consent` cookie.
 */
import type { ConsentStore } from '../../src/store/types.js';

/** Resolves to a `Cookie` header value carrying the person's consent. */
export async function pairClient(url: string, store: ConsentStore, token = ''): Promise<string> {
  const code = await store.createPairingCode(10 * 60_000);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== '') headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${url}/auth/pair`, { method: 'POST', headers, body: JSON.stringify({ code }) });
  if (res.status !== 200) throw new Error(`POST /auth/pair answered ${res.status}: ${await res.text()}`);
  const match = /(?:^|[,\s])navi_consent=([^;,\s]+)/.exec(res.headers.get('set-cookie') ?? '');
  if (!match?.[1]) throw new Error('POST /auth/pair set no navi_consent cookie');
  return `navi_consent=${match[1]}`;
}
