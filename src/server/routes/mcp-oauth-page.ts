/**
 * The page a browser lands on when an MCP server's authorisation server sends it back to Navi
 * (`GET /agents/mcp/oauth/callback`). It stands alone: the web client may not be built, the
 * browser may hold no Navi token, and the address carries a one-time code, so the page loads
 * nothing, runs no script and sends no referrer.
 */

export interface CallbackPage {
  status: 200 | 400;
  title: string;
  message: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe inside HTML elements and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/**
 * Headers of the page: nothing from elsewhere may load or frame it, and neither the code nor
 * the state in its address leaks through a referrer or a cache.
 */
export const CALLBACK_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
} as const;

/** The whole HTML document for `page`; every text in it is escaped. */
export function renderCallbackPage(page: CallbackPage): string {
  const ok = page.status === 200;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Navi: ${escapeHtml(page.title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5; color: #1f2328; }
h1 { font-size: 1.4rem; color: ${ok ? '#1a7f37' : '#cf222e'}; }
a { color: #0969da; }
</style></head>
<body><main>
<h1 data-testid="oauth-title">${escapeHtml(page.title)}</h1>
<p data-testid="oauth-message">${escapeHtml(page.message)}</p>
<p><a href="/#/mcp">Back to Navi's MCP servers page</a></p>
</main></body></html>
`;
}

/** The sentence that tells the person how to start over. */
function again(server: string | undefined): string {
  const login = server ? `navi mcp login ${server}` : 'navi mcp login <server>';
  return `To try again, press Connect on Navi's MCP servers page (or run ${login}).`;
}

export function connectedPage(server: string): CallbackPage {
  return {
    status: 200,
    title: 'Connected',
    message: `Navi is connected to ${server}. You can close this tab.`,
  };
}

/**
 * The page for a callback that did not authorise Navi. `denied` is the authorisation server's
 * `access_denied`: the person (or its policy) said no, which is not a fault to explain.
 */
export function failedPage(why: string, options: { server?: string; denied?: boolean } = {}): CallbackPage {
  const reason = why.replace(/[.\s]+$/, '');
  if (options.denied) {
    const who = options.server ?? 'the MCP server';
    return {
      status: 400,
      title: 'Access was denied',
      message: `Navi was not given access to ${who}: ${reason}. Nothing was stored. ${again(options.server)}`,
    };
  }
  return {
    status: 400,
    title: 'Navi is not connected',
    message: `The authorisation did not complete: ${reason}. ${again(options.server)}`,
  };
}
