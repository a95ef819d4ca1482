/**
 * The person's steps of an MCP OAuth authorisation, done over plain HTTP for tests that have no
 * browser: the authorisation page of the OAuth test server (test/support/oauth-mcp-server.ts),
 * its Approve and Deny buttons, and where it sends the browser back.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { McpServerInfo, McpStatusView } from '../../src/protocol/rest.js';

/** Writes `<dir>/<name>.json` for an MCP server reached over HTTP at `url`. */
export function writeHttpServerConfig(dir: string, name: string, url: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.json`), JSON.stringify({ name, url }));
}

/** The status of one server from `GET /agents/mcp`; throws when it is not listed. */
export async function mcpServerStatus(naviUrl: string, name: string): Promise<McpServerInfo> {
  const res = await fetch(`${naviUrl}/agents/mcp`);
  if (res.status !== 200) throw new Error(`GET /agents/mcp answered ${res.status}: ${await res.text()}`);
  const found = ((await res.json()) as McpStatusView).servers.find((s) => s.name === name);
  if (!found) throw new Error(`GET /agents/mcp does not list ${name}`);
  return found;
}

/** `POST /agents/mcp/servers/<name>/authorize` with `body`; the raw response. */
export function postAuthorize(naviUrl: string, name: string, body?: unknown): Promise<Response> {
  return fetch(`${naviUrl}/agents/mcp/servers/${encodeURIComponent(name)}/authorize`, {
    method: 'POST',
    ...(body !== undefined && {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  });
}

/** The authorisation page Navi hands out for `name`, with the callback under `redirectBase`. */
export async function authorizationUrl(
  naviUrl: string,
  name: string,
  redirectBase?: string,
): Promise<string> {
  const res = await postAuthorize(naviUrl, name, redirectBase ? { redirect_base: redirectBase } : {});
  const body = (await res.json()) as { authorization_url?: string; error?: string };
  if (res.status !== 200 || !body.authorization_url)
    throw new Error(`POST authorize answered ${res.status}: ${JSON.stringify(body)}`);
  return body.authorization_url;
}

/** Where a redirect sends the browser; throws unless the answer is one. */
function redirectTarget(res: Response, what: string): string {
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`${what} answered ${res.status}, not a redirect`);
  return location;
}

/**
 * Opens the authorisation page of a test server started with `autoApprove`: it sends the browser
 * straight back. Resolves to the address it sends it to (Navi's callback with code and state),
 * without opening it.
 */
export async function autoApprovedCallback(authorizationPage: string): Promise<string> {
  return redirectTarget(await fetch(authorizationPage, { redirect: 'manual' }), 'the authorisation page');
}

/**
 * Opens the authorisation page of a test server without `autoApprove` and presses Approve or
 * Deny as a person would; resolves to the address the browser is sent back to, unopened.
 */
export async function decideAt(authorizationPage: string, decision: 'approve' | 'deny'): Promise<string> {
  const page = await fetch(authorizationPage);
  const html = await page.text();
  const id = /name="request" value="([^"]+)"/.exec(html)?.[1];
  if (page.status !== 200 || !id) throw new Error(`the authorisation page answered ${page.status}: ${html}`);
  const res = await fetch(new URL('/authorize/decision', authorizationPage), {
    method: 'POST',
    body: new URLSearchParams({ request: id, decision }),
    redirect: 'manual',
  });
  return redirectTarget(res, 'the decision');
}
