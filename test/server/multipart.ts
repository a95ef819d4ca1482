/** Builds a multipart/form-data body by hand, so tests control every byte of the file name. */
export function multipartBody(
  parts: { field: string; filename?: string; content: string | Buffer; type?: string }[],
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----navi${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    const type =
      part.filename === undefined ? '' : `\r\nContent-Type: ${part.type ?? 'application/octet-stream'}`;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.field}"${filename}${type}\r\n\r\n`,
      ),
    );
    chunks.push(Buffer.isBuffer(part.content) ? part.content : Buffer.from(part.content));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(chunks),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}
