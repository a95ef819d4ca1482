/**
 * Where an MCP server's authorisation server sends the browser back to: Navi's callback path
 * under an origin the person's browser reaches Navi at. Shared by the REST routes and
 * `navi mcp login`, which checks its --redirect-base the same way before asking Navi.
 */

// The path the authorisation server sends the browser back to, under the redirect base: the
// one the OAuth provider registers.
export { OAUTH_CALLBACK_PATH } from '../../mcp/oauth/provider.js';

const MAX_REDIRECT_BASE = 200;

export const ORIGIN_EXAMPLE = 'like http://127.0.0.1:8000 or https://navi.example.org';

/**
 * `value` as an origin (`http://host:port`), or why it is not one. Only a bare origin is taken:
 * the callback path is Navi's to add, and credentials in it would be sent to the browser.
 */
export function redirectOrigin(value: unknown, what = 'redirect_base'): string | { problem: string } {
  if (typeof value !== 'string' || value === '')
    return { problem: `${what} must be a text: the address your browser reaches Navi at, ${ORIGIN_EXAMPLE}` };
  if (value.length > MAX_REDIRECT_BASE)
    return {
      problem: `${what} is longer than ${MAX_REDIRECT_BASE} characters; send only the origin, ${ORIGIN_EXAMPLE}`,
    };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return {
      problem: `${what} is not an address; send the origin your browser reaches Navi at, ${ORIGIN_EXAMPLE}`,
    };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { problem: `${what} must start with http:// or https://, ${ORIGIN_EXAMPLE}` };
  if (url.username !== '' || url.password !== '')
    return {
      problem: `${what} must not hold a user name or password; send only the origin, ${ORIGIN_EXAMPLE}`,
    };
  // The URL parser drops an empty "?" or "#", so the text itself is checked as well.
  if (!/^https?:\/\/[^/?#]+\/?$/i.test(value))
    return {
      problem: `${what} must be an origin only, without a path, query or fragment, ${ORIGIN_EXAMPLE}`,
    };
  return url.origin;
}
