/** `list_labels`: the account's mailboxes (Gmail shows them as labels), INBOX first. */
import type { GmailConfig } from './config.js';
import { INBOX, withImap } from './imap.js';

const SPECIAL: Record<string, string> = {
  '\\All': 'all mail',
  '\\Archive': 'archive',
  '\\Drafts': 'drafts',
  '\\Flagged': 'starred',
  '\\Important': 'important',
  '\\Junk': 'spam',
  '\\Sent': 'sent',
  '\\Trash': 'trash',
};

/** One line per mailbox, with what it is for when the server says so. */
export async function listLabels(config: GmailConfig, signal: AbortSignal): Promise<string> {
  const boxes = await withImap(config, signal, (client) => client.list());
  const lines = boxes
    .map((box) => {
      const notes = [
        ...(box.specialUse && SPECIAL[box.specialUse] ? [SPECIAL[box.specialUse]!] : []),
        ...(box.flags.has('\\Noselect') ? ['holds only other mailboxes'] : []),
      ];
      return { path: box.path, line: `- ${box.path}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}` };
    })
    .sort((a, b) => (a.path === INBOX ? -1 : b.path === INBOX ? 1 : a.path.localeCompare(b.path)));
  return [
    `${lines.length} mailbox${lines.length === 1 ? '' : 'es'} (pass one as "mailbox" to search, read or reply):`,
    ...lines.map((l) => l.line),
  ].join('\n');
}
