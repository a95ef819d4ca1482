/**
 * What a response's Content-Type says: its media type, whether that type is HTML or some other
 * text, and which character set the body is written in (a byte-order mark wins, then the
 * header's charset, then for HTML a <meta charset> near the top, as browsers decide it). Used by
 * web_view and http_request alike, so both read the same answer the same way.
 */

/** Media types that are text although they are not `text/*` (plus any `+json` or `+xml`). */
const TEXT_TYPES = new Set([
  'application/json',
  'application/ld+json',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/x-ndjson',
  'application/x-www-form-urlencoded',
  'application/graphql',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/x-sh',
  'application/sql',
  'application/csv',
  'image/svg+xml',
]);

export function isHtmlType(type: string): boolean {
  return type === 'text/html' || type === 'application/xhtml+xml';
}

/** Whether a (lower-cased, parameterless) media type names text of any kind, HTML included. */
export function isTextType(type: string): boolean {
  return type.startsWith('text/') || TEXT_TYPES.has(type) || /\+(json|xml)$/.test(type);
}

/** The media type, lower-cased, and the charset parameter when there is one. */
export function mediaType(contentType: string | undefined): { type: string; charset?: string } {
  const [type = '', ...params] = (contentType ?? '').split(';');
  const charset = params
    .map((p) => p.trim().match(/^charset\s*=\s*"?([^";\s]+)"?$/i)?.[1])
    .find((c) => c !== undefined);
  return charset === undefined
    ? { type: type.trim().toLowerCase() }
    : { type: type.trim().toLowerCase(), charset };
}

export function charsetOf(body: Buffer, declared: string | undefined, html: boolean): string {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (declared) return declared;
  if (html) {
    const head = body.subarray(0, 2048).toString('latin1');
    const meta = head.match(/<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i)?.[1];
    if (meta) return meta;
  }
  return 'utf-8';
}
