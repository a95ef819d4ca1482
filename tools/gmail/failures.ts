/**
 * What went wrong talking to a mail server, in words a person can act on: which server, what
 * happened, and which setting to check. Built from error codes; the tool's `execute` hides the
 * app password in every message it passes on, these included.
 */
import { type Endpoint, type GmailConfig, GmailError } from './config.js';

export type Protocol = 'IMAP' | 'SMTP';

interface ErrorFields {
  code?: unknown;
  responseCode?: unknown;
  authenticationFailed?: unknown;
  tlsFailed?: unknown;
  responseText?: unknown;
  response?: unknown;
  message?: unknown;
}

const NOT_FOUND = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME']);
const UNREACHABLE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const TIMEOUT = new Set(['ETIMEDOUT', 'ETIMEOUT', 'CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'UPGRADE_TIMEOUT']);
const CLOSED = new Set([
  'ECONNRESET',
  'EPIPE',
  'NoConnection',
  'EConnectionClosed',
  'ClosedAfterConnectText',
]);

/** `err` (from imapflow, nodemailer or a socket) as a `GmailError` that names the cause and the fix. */
export function explainFailure(err: unknown, protocol: Protocol, config: GmailConfig): GmailError {
  if (err instanceof GmailError) return err;
  const e = (err ?? {}) as ErrorFields;
  const server = protocol === 'IMAP' ? config.imap : config.smtp;
  const at = `the ${protocol} server ${server.host}:${server.port}`;
  const prefix = `GMAIL_${protocol}`;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = String(e.message ?? err);
  const said = serverText(e);
  let text: string;
  if (e.authenticationFailed === true || code === 'EAUTH' || e.responseCode === 535) {
    text =
      `${capital(at)} refused the login of ${config.address}${said ? ` (it said: ${said})` : ''}. ` +
      'Check GMAIL_ADDRESS and GMAIL_APP_PASSWORD: Gmail wants an app password ' +
      '(https://myaccount.google.com/apppasswords), not the Google account password.';
  } else if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message)) {
    text =
      `Cannot connect to ${at}: the connection was refused (nothing listens there, or a firewall ` +
      `says no). Check ${prefix}_HOST and ${prefix}_PORT (Gmail: ${defaults(protocol)}).`;
  } else if (NOT_FOUND.has(code) || /ENOTFOUND|EAI_AGAIN/.test(message)) {
    text = `Cannot find the ${protocol} server "${server.host}": the name does not resolve. Check ${prefix}_HOST and the network.`;
  } else if (UNREACHABLE.has(code)) {
    text = `Cannot reach ${at} (${code}): no route to it. Check the network and ${prefix}_HOST.`;
  } else if (TIMEOUT.has(code) || /timed? ?out/i.test(message)) {
    text =
      `${capital(at)} did not answer within ${config.timeoutMs} ms. Check the network and ` +
      `${prefix}_HOST/${prefix}_PORT, or raise GMAIL_TIMEOUT_MS.`;
  } else if (e.tlsFailed === true || isTlsError(code, message)) {
    const why = /wrong version number/i.test(message)
      ? 'it answered in plain text, not TLS'
      : message.replace(/\s+/g, ' ').trim().slice(0, 200);
    text = `The TLS handshake with ${at} failed (${why}). ${tlsHint(protocol, server)}`;
  } else if (CLOSED.has(code) || code === 'ESOCKET' || code === 'ECONNECTION') {
    text =
      `${capital(at)} closed the connection (${message}). Try again later; if it keeps happening, ` +
      `check that ${prefix}_TLS suits ${prefix}_PORT. ${tlsHint(protocol, server)}`;
  } else {
    text = `${capital(at)} failed: ${said || message}`;
  }
  return new GmailError(text);
}

function serverText(e: ErrorFields): string {
  const raw =
    typeof e.responseText === 'string' ? e.responseText : typeof e.response === 'string' ? e.response : '';
  return raw.replace(/\s+/g, ' ').trim().slice(0, 300);
}

function isTlsError(code: string, message: string): boolean {
  return (
    code.startsWith('ERR_SSL') ||
    code === 'EPROTO' ||
    /SSL|TLS|certificate|wrong version number/i.test(message)
  );
}

function tlsHint(protocol: Protocol, server: Endpoint): string {
  const prefix = `GMAIL_${protocol}`;
  const [tlsPort, plainPort] = protocol === 'IMAP' ? [993, 143] : [465, 587];
  return server.tls
    ? `${prefix}_TLS=true needs a port that speaks TLS from the first byte (${tlsPort}); for a STARTTLS port such as ${plainPort} set ${prefix}_TLS=false.`
    : `${prefix}_TLS=false suits a plain or STARTTLS port (${plainPort}); for port ${tlsPort} set ${prefix}_TLS=true.`;
}

function defaults(protocol: Protocol): string {
  return protocol === 'IMAP' ? 'imap.gmail.com, port 993, TLS on' : 'smtp.gmail.com, port 465, TLS on';
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
