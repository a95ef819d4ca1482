/**
 * How mail reaches the model: as data between clear delimiters, never as instructions. Anyone
 * can send the person an e-mail, so its subject, sender and body are the easiest way to slip
 * orders to the agent; the block says so, and a message cannot close the block early.
 */
import type { MessageAddressObject } from 'imapflow';
import { untrustedBlock } from '../../src/util/untrusted.js';

/** `text` taken from mail in `where` (a mailbox), wrapped as untrusted data. */
export function untrustedMail(where: string, text: string): string {
  return untrustedBlock(
    { kind: 'email', attribute: { name: 'mailbox', value: where }, from: 'e-mail anyone could have sent' },
    text,
  );
}

/** `Name <address>` or just the address, for a list of addresses. */
export function addresses(list: MessageAddressObject[] | undefined): string {
  return (list ?? [])
    .map((a) => {
      const name = oneLine(a.name ?? '');
      const address = a.address ?? '';
      return name && address ? `${name} <${address}>` : name || address;
    })
    .filter((s) => s !== '')
    .join(', ');
}

/** A date as `2024-05-01 10:22 UTC`; an unknown date as `(no date)`. */
export function shortDate(value: Date | string | undefined): string {
  const date = value === undefined ? undefined : new Date(value);
  if (!date || Number.isNaN(date.getTime())) return '(no date)';
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A byte count for people: `812 B`, `14.2 KB`, `3.1 MB`. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Whether `text` holds a control character: a line break, a tab, NUL, DEL… */
export function hasControlCharacter(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  return /[\u0000-\u001f\u007f]/.test(text);
}

/** Whitespace (line breaks included) collapsed to single spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
