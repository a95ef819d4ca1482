/**
 * A session as a Markdown document people read (`GET /sessions/{id}/export?format=markdown`):
 * the title, then each message of the display buffer with who said it and when (UTC). Tool
 * calls and their results fold into `<details>` blocks, long results are cut, images and
 * attached files are named rather than embedded. The JSON export is the complete one; this is
 * for reading and sharing.
 */
import type { SessionMessage, SessionSummary } from '../protocol/rest.js';

/** Tool output beyond this is cut in the Markdown (the JSON export keeps all of it). */
export const MAX_TOOL_OUTPUT = 4000;

/** `2026-01-02T03:04:05.000Z` → `2026-01-02 03:04 UTC`; anything unparsable as it is. */
function when(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A code fence longer than any run of backticks in `text`, so the text cannot close it. */
function fenced(text: string, language = ''): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}

/** Text for inside an HTML `<summary>`: no tags, no entities. */
function plain(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function details(summary: string, body: string): string {
  return `<details><summary>${plain(summary)}</summary>\n\n${body}\n\n</details>`;
}

function cut(text: string): string {
  if (text.length <= MAX_TOOL_OUTPUT) return text;
  return `${text.slice(0, MAX_TOOL_OUTPUT)}\n… (${text.length - MAX_TOOL_OUTPUT} more characters in the JSON export)`;
}

function heading(m: SessionMessage): string {
  if (m.kind === 'error') return 'Failed turn';
  if (m.kind === 'plan') return 'Navi (plan)';
  if (m.role === 'user') return m.trigger === 'recall' ? 'Recall' : 'You';
  if (m.role === 'assistant') return 'Navi';
  if (m.role === 'system') return 'System';
  return `Result of ${m.name ?? 'a tool'}`;
}

function notes(m: SessionMessage): string[] {
  const lines: string[] = [];
  const images = m.images?.length ?? 0;
  if (images > 0) lines.push(`*${images === 1 ? 'An image was' : `${images} images were`} attached.*`);
  if (m.attachments?.length) lines.push(`*Attached files: ${m.attachments.map((f) => f.name).join(', ')}*`);
  if (m.interrupted) lines.push(m.stopped ? '*(stopped before it finished)*' : '*(interrupted)*');
  return lines;
}

function toolResult(m: SessionMessage): string {
  const outcome = m.outcome ?? (m.success === false ? 'failed' : m.success ? 'ok' : undefined);
  const summary = `Result of ${m.name ?? 'a tool'}${outcome ? ` (${outcome})` : ''}`;
  const parts = [m.content ? fenced(cut(m.content)) : '*(no output)*'];
  if (m.published) parts.push(`*Published: ${m.published.title || m.published.name}*`);
  return details(summary, parts.join('\n\n'));
}

function message(m: SessionMessage): string {
  if (m.role === 'tool') return toolResult(m);
  const parts = [`### ${heading(m)} · ${when(m.created_at)}`];
  if (m.kind === 'error') {
    parts.push(`> ${(m.error?.message ?? m.content ?? 'The run failed.').replace(/\n/g, '\n> ')}`);
  } else if (m.content) {
    parts.push(m.content);
  }
  parts.push(...notes(m));
  if (m.thinking) parts.push(details('Reasoning', m.thinking));
  for (const call of m.tool_calls ?? []) {
    parts.push(details(`Tool call: ${call.name}`, fenced(JSON.stringify(call.arguments, null, 2), 'json')));
  }
  return parts.join('\n\n');
}

/**
 * The start of the document: title, profile, dates and the rule under them. `profileName` is
 * the profile's display name (or its id when it is gone).
 */
export function markdownHeader(session: SessionSummary, profileName: string, exportedAt: Date): string {
  const title = session.title.trim() || 'Untitled conversation';
  const header = [
    `# ${title}`,
    `*Profile ${profileName} · started ${when(session.created_at)} · exported from Navi ${when(exportedAt.toISOString())}*`,
  ];
  return `${header.join('\n\n')}\n\n---`;
}

/** `messages` as they follow the header or earlier messages, so a long session goes out in pieces. */
export function markdownMessages(messages: readonly SessionMessage[]): string {
  return messages.map((m) => `\n\n${message(m)}`).join('');
}

/** The document ends with one newline after the last piece. */
export const MARKDOWN_END = '\n';

/** The Markdown document of `session` with its display buffer `messages`, whole. */
export function sessionMarkdown(
  session: SessionSummary,
  messages: SessionMessage[],
  profileName: string,
  exportedAt: Date,
): string {
  return `${markdownHeader(session, profileName, exportedAt)}${markdownMessages(messages)}${MARKDOWN_END}`;
}

/**
 * A download name from a title: letters, digits, spaces, dots, dashes and underscores kept,
 * anything else a dash (or a space beside one), at most 80 characters, never empty or hidden.
 */
export function exportFileName(title: string, extension: 'md' | 'json'): string {
  const base = title
    .normalize('NFKC')
    .replace(/\s+/g, ' ')
    // "Ops: disk/space" → "Ops disk-space": a space where one was, a dash inside a word.
    .replace(/ ?[^\p{L}\p{N} ._-]+ ?/gu, (run) => (run.includes(' ') ? ' ' : '-'))
    .replace(/-{2,}/g, '-')
    .replace(/^[\s.-]+|[\s.-]+$/g, '')
    .slice(0, 80)
    .trim();
  return `${base || 'navi-conversation'}.${extension}`;
}
