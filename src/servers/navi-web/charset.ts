/**
 * What a response's Content-Type says, and which character set its body is written in: a
 * byte-order mark wins, then the header's charset, then (for HTML) a <meta charset> near the top,
 * as browsers decide it. Used by web_view and http_request alike.
 */

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
