/**
 * The vault token store when several Navi processes share one vault (`navi mcp` beside `navi
 * serve`, a cluster): two stores, each on its own opening of one real vault file, as two
 * processes would have. One record per server whoever creates it, a refresh another process
 * spent is taken up again from the vault, and a removal the vault refused leaves the tokens.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OAuthMcpServer, startOAuthMcpServer } from '../../../test/support/oauth-mcp-server.js';
import { openVault } from '../../vault/index.js';
import { type Vault, VaultError } from '../../vault/types.js';
import { REDIRECT_BASE, vaultOptions, visit } from './oauth-support.test-helpers.js';
import { NaviOAuthProvider } from './provider.js';
import { MCP_OAUTH_TAG, VaultTokenStore } from './vault-token-store.js';

let dir: string;
let vaults: Vault[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'navi-token-store-'));
  vaults = [];
});

afterEach(() => {
  for (const vault of vaults) vault.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One more opening of the shared vault file: what another process would have. */
function opening(): Vault {
  const vault = openVault(vaultOptions(dir));
  vaults.push(vault);
  return vault;
}

const tokens = (access: string) => ({ tokens: { access_token: access, token_type: 'Bearer' } });

describe('two stores on one vault', () => {
  it('keep one record per server, whichever creates it first', () => {
    const a = new VaultTokenStore(opening());
    const b = new VaultTokenStore(opening());
    // Both looked and found nothing; then each saves.
    expect(a.load('docs')).toBeUndefined();
    expect(b.load('docs')).toBeUndefined();
    a.save('docs', tokens('from-a'));
    b.save('docs', tokens('from-b'));
    const records = vaults[0]!.search({ tag: MCP_OAUTH_TAG });
    expect(records.map((r) => r.name)).toEqual(['MCP OAuth: docs']);
    expect(new VaultTokenStore(opening()).load('docs')).toEqual(tokens('from-b'));
  });

  it('reload reads what another store saved; remove archives a record it never saw', () => {
    const a = new VaultTokenStore(opening());
    const b = new VaultTokenStore(opening());
    a.save('docs', tokens('first'));
    expect(b.load('docs')).toEqual(tokens('first'));
    a.save('docs', tokens('rotated'));
    expect(b.load('docs')).toEqual(tokens('first'));
    expect(b.reload('docs')).toEqual(tokens('rotated'));

    const c = new VaultTokenStore(opening());
    expect(c.load('other')).toBeUndefined();
    a.save('other', tokens('x'));
    c.remove('other');
    expect(vaults[0]!.search({ tag: MCP_OAUTH_TAG }).map((r) => r.name)).toEqual(['MCP OAuth: docs']);
  });
});

describe('remove', () => {
  it('keeps the tokens when the vault refuses to archive them', () => {
    const vault = opening();
    const failing: Vault = new Proxy(vault, {
      get(target, key) {
        if (key === 'archive')
          return () => {
            throw new VaultError('io', 'the disk is full');
          };
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const store = new VaultTokenStore(failing);
    store.save('docs', tokens('kept'));
    expect(() => store.remove('docs')).toThrow('the disk is full');
    expect(store.load('docs')).toEqual(tokens('kept'));
  });
});

describe('a refresh another process spent', () => {
  let server: OAuthMcpServer;
  afterEach(async () => {
    await server?.close();
  });

  it('is taken up from the vault: the refused refresh is retried with the rotated tokens', async () => {
    server = await startOAuthMcpServer({ autoApprove: true });
    const serverUrl = server.url;
    const storeA = new VaultTokenStore(opening());
    const storeB = new VaultTokenStore(opening());

    // Process A is authorised by the person.
    const first = new NaviOAuthProvider({ server: 'docs', store: storeA, redirectBase: REDIRECT_BASE });
    expect(await auth(first, { serverUrl })).toBe('REDIRECT');
    const { code } = await visit(first.authorizationUrl!.href);
    expect(await auth(first, { serverUrl, authorizationCode: code })).toBe('AUTHORIZED');
    const a = new NaviOAuthProvider({ server: 'docs', store: storeA });
    const spent = a.tokens()!.refresh_token;

    // Process B refreshes: the server rotates the refresh token A still holds.
    const b = new NaviOAuthProvider({ server: 'docs', store: storeB });
    expect(await auth(b, { serverUrl })).toBe('AUTHORIZED');
    expect(a.tokens()!.refresh_token).toBe(spent);

    // A's refresh is refused (invalid_grant); A reads the vault again instead of asking the person.
    expect(await auth(a, { serverUrl })).toBe('AUTHORIZED');
    expect(a.tokens()!.refresh_token).not.toBe(spent);
    expect(server.events.authorizations).toHaveLength(1);
    expect(server.events.grants.map((g) => [g.grant_type, g.ok ? 'ok' : g.error])).toEqual([
      ['authorization_code', 'ok'],
      ['refresh_token', 'ok'],
      ['refresh_token', 'invalid_grant'],
      ['refresh_token', 'ok'],
    ]);
    expect(vaults[0]!.search({ tag: MCP_OAUTH_TAG })).toHaveLength(1);
  });

  it('still asks the person when the vault holds nothing newer', async () => {
    server = await startOAuthMcpServer({ autoApprove: true });
    const serverUrl = server.url;
    const store = new VaultTokenStore(opening());
    const first = new NaviOAuthProvider({ server: 'docs', store, redirectBase: REDIRECT_BASE });
    await auth(first, { serverUrl });
    const { code } = await visit(first.authorizationUrl!.href);
    await auth(first, { serverUrl, authorizationCode: code });
    server.revokeEverything();
    const a = new NaviOAuthProvider({ server: 'docs', store });
    expect(await auth(a, { serverUrl })).toBe('REDIRECT');
    expect(a.tokens()).toBeUndefined();
  });
});

describe('a config naming a vault secret', () => {
  it('resolves an ordinary secret, but never one of the records Navi keeps its tokens in', () => {
    const vault = opening();
    const store = new VaultTokenStore(vault);
    const plain = vault.create(
      { name: 'docs client', type: 'api_token', fields: [{ name: 'secret', value: 's3cret', secret: true }] },
      { actor: 'user' },
    );
    expect(store.resolveReference(`{{secret:${plain.id}.secret}}`, 'test')).toBe('s3cret');
    store.save('docs', tokens('navi-own'));
    const own = vault.search({ tag: MCP_OAUTH_TAG })[0]!;
    const field = own.fields.find((f) => f.secret)!.name;
    expect(() => store.resolveReference(`{{secret:${own.id}.${field}}}`, 'test')).toThrow(
      /not found|no secret/i,
    );
  });
});
