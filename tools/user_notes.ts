/**
 * User tool: short notes by key that persist across sessions. Stored as JSON in
 * USER_NOTES_FILE when that variable is set, otherwise in user_notes.data.json beside this file.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const name = 'user_notes';

export const description =
  'Keep short notes by key across sessions (things the user asked you to note down: lists, reminders, ' +
  'snippets). Actions: save (key + text), get (key), list (all keys), delete (key), search (text in keys and notes).';

export const parameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['save', 'get', 'list', 'delete', 'search'] },
    key: { type: 'string', minLength: 1, maxLength: 200, description: 'Note key (save, get, delete).' },
    text: { type: 'string', description: 'Note text (save) or words to look for (search).' },
  },
  required: ['action'],
  additionalProperties: false,
};

type Notes = Record<string, { text: string; updated_at: string }>;

function dataFile(): string {
  return process.env.USER_NOTES_FILE || join(dirname(fileURLToPath(import.meta.url)), 'user_notes.data.json');
}

function load(): Notes {
  const file = dataFile();
  if (!existsSync(file)) return {};
  return JSON.parse(readFileSync(file, 'utf8')) as Notes;
}

function save(notes: Notes): void {
  const file = dataFile();
  // Write then rename, so a crash never leaves half a file.
  writeFileSync(`${file}.tmp`, JSON.stringify(notes, null, 2));
  renameSync(`${file}.tmp`, file);
}

function need(value: string | undefined, what: string, action: string): string {
  if (!value) throw new Error(`"${action}" needs "${what}".`);
  return value;
}

export async function execute(params: { action: string; key?: string; text?: string }): Promise<string> {
  const notes = load();
  const { action } = params;
  if (action === 'save') {
    const key = need(params.key, 'key', action);
    notes[key] = { text: need(params.text, 'text', action), updated_at: new Date().toISOString() };
    save(notes);
    return `Saved note "${key}".`;
  }
  if (action === 'get') {
    const key = need(params.key, 'key', action);
    const note = notes[key];
    if (!note) throw new Error(`No note "${key}". Use action "list" to see the keys.`);
    return note.text;
  }
  if (action === 'delete') {
    const key = need(params.key, 'key', action);
    if (!notes[key]) throw new Error(`No note "${key}".`);
    delete notes[key];
    save(notes);
    return `Deleted note "${key}".`;
  }
  if (action === 'search') {
    const words = need(params.text, 'text', action).toLowerCase();
    const hits = Object.entries(notes).filter(([k, n]) => `${k} ${n.text}`.toLowerCase().includes(words));
    return hits.length === 0
      ? `No note mentions "${params.text}".`
      : hits.map(([k, n]) => `${k}: ${n.text}`).join('\n');
  }
  const keys = Object.keys(notes);
  return keys.length === 0 ? 'No notes yet.' : `Notes: ${keys.join(', ')}`;
}
