/**
 * The gmail tool's settings, read from the `settings` Navi hands every tool call (secret
 * variables are gone from Navi's environment by then), and the one error type the tool throws
 * on purpose: its message is what the model reads, and never holds the app password.
 */
import type { Settings } from '../../src/config/settings.js';

export interface Endpoint {
  host: string;
  port: number;
  /** TLS from the first byte (993, 465); false means plain, upgraded with STARTTLS when offered. */
  tls: boolean;
}

export interface GmailConfig {
  address: string;
  /** The app password as the servers get it (without the spaces Google shows). */
  password: string;
  /** Every form of the password that could turn up in a message: hidden by `withoutPassword`. */
  passwordForms: string[];
  imap: Endpoint;
  smtp: Endpoint;
  timeoutMs: number;
}

/** A failure the tool explains itself; the message says what was wrong and what to do. */
export class GmailError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GmailError';
    // The message is the whole story; a stack would only add this folder's paths to what the model reads.
    this.stack = undefined;
  }
}

const HOW_TO_SET_UP =
  'To use gmail, set GMAIL_ADDRESS (your address, e.g. you@gmail.com) and GMAIL_APP_PASSWORD in ' +
  "Navi's environment or .env, then restart Navi. GMAIL_APP_PASSWORD is an app password, not your " +
  'Google password: turn on 2-Step Verification for the Google account, then create one at ' +
  'https://myaccount.google.com/apppasswords (16 letters; spaces do not matter). For another mail ' +
  'provider also set GMAIL_IMAP_HOST and GMAIL_SMTP_HOST (and their _PORT and _TLS).';

type GmailSettings = Pick<
  Settings,
  | 'GMAIL_ADDRESS'
  | 'GMAIL_APP_PASSWORD'
  | 'GMAIL_IMAP_HOST'
  | 'GMAIL_IMAP_PORT'
  | 'GMAIL_IMAP_TLS'
  | 'GMAIL_SMTP_HOST'
  | 'GMAIL_SMTP_PORT'
  | 'GMAIL_SMTP_TLS'
  | 'GMAIL_TIMEOUT_MS'
>;

/** The configuration, or a `GmailError` naming the settings that are missing and how to set them. */
export function readConfig(settings: GmailSettings | undefined): GmailConfig {
  if (!settings) {
    throw new GmailError(`gmail got no settings from Navi (an old or custom set-up?). ${HOW_TO_SET_UP}`);
  }
  const address = settings.GMAIL_ADDRESS.trim();
  // Google shows app passwords in groups of four; the spaces are not part of it.
  const password = settings.GMAIL_APP_PASSWORD.replace(/\s+/g, '');
  const passwordForms = [...new Set([settings.GMAIL_APP_PASSWORD.trim(), password])];
  const missing = [
    ...(address === '' ? ['GMAIL_ADDRESS'] : []),
    ...(password === '' ? ['GMAIL_APP_PASSWORD'] : []),
  ];
  if (missing.length > 0) {
    throw new GmailError(
      `gmail is not set up: ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} empty. ${HOW_TO_SET_UP}`,
    );
  }
  return {
    address,
    password,
    passwordForms,
    imap: { host: settings.GMAIL_IMAP_HOST, port: settings.GMAIL_IMAP_PORT, tls: settings.GMAIL_IMAP_TLS },
    smtp: { host: settings.GMAIL_SMTP_HOST, port: settings.GMAIL_SMTP_PORT, tls: settings.GMAIL_SMTP_TLS },
    timeoutMs: settings.GMAIL_TIMEOUT_MS,
  };
}

/**
 * `text` with the app password (as configured, and without its spaces) replaced: a last guard
 * for messages built from what a server or library said.
 */
export function withoutPassword(text: string, config: Pick<GmailConfig, 'passwordForms'>): string {
  let out = text;
  for (const form of config.passwordForms) {
    if (form.length >= 4) out = out.split(form).join('[app password hidden]');
  }
  return out;
}
