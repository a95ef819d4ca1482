/**
 * Messages written by the first build kept their meaning in a free-form `metadata` object and in
 * text markers inside `content` (the attached-files list, the summary heading). This rewrites
 * every such row into the typed fields of `SessionMessage`, in both buffers, so the history
 * shows and the model reads exactly what it did before. Rows without `metadata` or markers are
 * left untouched. The texts below are frozen copies of what that build wrote: a migration must
 * not change when the code around it does.
 */
import type { Migration } from './types.js';

const FILES_MARKER = '\n\n[Attached files]\n';
const SUMMARY_HEADING = '[Summary of earlier conversation]';

type Json = Record<string, unknown>;

interface Row {
  rowid: number;
  role: string;
  content: string | null;
  payload: string;
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The new content and payload of one first-build row. */
export function upgradeRow(
  role: string,
  content: string | null,
  old: Json,
): { content: string | null; payload: Json } {
  const { metadata, is_summary, ...payload } = old;
  const meta: Json = isRecord(metadata) ? metadata : {};
  let text = content;
  if (is_summary === true) {
    payload.kind = 'summary';
    if (text?.startsWith(SUMMARY_HEADING)) text = text.slice(SUMMARY_HEADING.length).replace(/^\n/, '');
  }
  if (role === 'user') {
    if (Array.isArray(meta.files) && meta.files.length > 0) {
      payload.attachments = meta.files;
      const at = text?.lastIndexOf(FILES_MARKER) ?? -1;
      if (text && at >= 0) text = text.slice(0, at);
    }
    if (meta.trigger === 'form' || meta.trigger === 'recall') payload.trigger = meta.trigger;
    if (isRecord(meta.form_submit)) {
      payload.kind = 'form_submit';
      payload.form_submit = meta.form_submit;
    }
    if (meta.injected_image === true) payload.kind = 'injected_image';
  } else if (role === 'assistant') {
    if (meta.plan !== undefined && meta.plan !== false) payload.kind = 'plan';
    if (meta.max_iterations_reached === true) payload.kind = 'iteration_limit';
    if (meta.interrupted === true) payload.interrupted = true;
    if (meta.stopped === true) payload.stopped = true;
  } else if (role === 'tool') {
    const { success, ui_component, published, ...rest } = meta;
    if (typeof success === 'boolean') payload.success = success;
    if (ui_component !== undefined) payload.ui_component = ui_component;
    if (published !== undefined) payload.published = published;
    if (Object.keys(rest).length > 0) payload.tool_metadata = rest;
  }
  return { content: text, payload };
}

function upgradeTable(db: Parameters<Migration['up']>[0], table: 'messages' | 'context_messages'): void {
  const rows = db
    .prepare(
      `SELECT rowid, role, content, payload FROM ${table}
       WHERE payload IS NOT NULL
         AND (json_type(payload, '$.metadata') IS NOT NULL OR json_type(payload, '$.is_summary') IS NOT NULL)`,
    )
    .all() as Row[];
  const write = db.prepare(`UPDATE ${table} SET content = ?, payload = ? WHERE rowid = ?`);
  for (const row of rows) {
    const { content, payload } = upgradeRow(row.role, row.content, JSON.parse(row.payload) as Json);
    const json = Object.keys(payload).length > 0 ? JSON.stringify(payload) : null;
    write.run(content, json, row.rowid);
  }
}

export const typedMessagesMigration: Migration = {
  version: 4,
  name: 'typed-messages',
  up(db) {
    upgradeTable(db, 'messages');
    upgradeTable(db, 'context_messages');
  },
};
