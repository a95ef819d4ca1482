/**
 * A REST client for the vault's routes on a running Navi, paired like the person's browser so
 * that it holds consent (every vault route but `GET /vault` needs it).
 */
import type { SecretRecord } from '../../src/protocol/vault.js';
import type { NaviHandle } from './navi.js';

export interface VaultClient {
  /** The `Cookie` header value that carries consent. */
  cookie: string;
  /**
   * A request with the consent cookie (unless `headers` replaces it); a JSON body when given
   * (a string is sent as it is, for broken JSON). Resolves whatever the status.
   */
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /** `POST /vault/secrets`, which must answer 201. */
  create(body: unknown): Promise<SecretRecord>;
}

export async function vaultClient(navi: Pick<NaviHandle, 'url' | 'pair'>): Promise<VaultClient> {
  const cookie = await navi.pair();
  const send: VaultClient['send'] = (method, path, body, headers = {}) =>
    fetch(`${navi.url}${path}`, {
      method,
      headers: {
        cookie,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  return {
    cookie,
    send,
    async create(body) {
      const res = await send('POST', '/vault/secrets', body);
      if (res.status !== 201)
        throw new Error(`POST /vault/secrets answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as SecretRecord;
    },
  };
}
