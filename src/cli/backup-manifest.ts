/**
 * The `manifest.json` of a backup folder (docs/running.md#backup-and-restore): what `navi backup`
 * copied, how big each part was, and the database's schema version, so `navi restore` can tell a
 * backup from any folder, a cut-short copy from a whole one, and one made by a newer Navi.
 */
import { z } from 'zod';
import { DATA_ITEM_NAMES, type DataItemName } from './data-files.js';

export const MANIFEST_FILE = 'manifest.json';
export const BACKUP_FORMAT = 'navi-backup';
export const BACKUP_VERSION = 1;

const itemName = z.enum(DATA_ITEM_NAMES as [DataItemName, ...DataItemName[]]);

const manifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  version: z.number().int().min(1),
  navi_version: z.string(),
  created_at: z.string(),
  items: z
    .array(
      z.object({
        item: itemName,
        // A plain name inside the backup folder: a manifest must not send restore elsewhere.
        name: z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: 'must be a plain file name inside the backup' }),
        bytes: z.number().int().min(0),
        files: z.number().int().min(0),
        from: z.string(),
      }),
    )
    .max(DATA_ITEM_NAMES.length),
  absent: z.array(itemName),
  database: z.object({
    schema_version: z.number().int().min(0),
    sessions: z.number().int().min(0),
    // Absent in backups of a SQLite install. 'postgres': the database was in PostgreSQL
    // (DATABASE_URL), so the folder holds no database; pg_dump backs that up.
    engine: z.enum(['sqlite', 'postgres']).optional(),
  }),
});

export type BackupManifest = z.infer<typeof manifestSchema>;
export type ManifestItem = BackupManifest['items'][number];

/**
 * The manifest in `text`, or what is wrong with it as one sentence. A version newer than this
 * Navi writes is refused: it may hold parts this restore would leave out.
 */
export function parseManifest(
  text: string,
): { ok: true; manifest: BackupManifest } | { ok: false; problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `it is not JSON (${(err as Error).message})` };
  }
  if (typeof json !== 'object' || json === null || (json as { format?: unknown }).format !== BACKUP_FORMAT)
    return { ok: false, problem: `it does not say "format": "${BACKUP_FORMAT}"` };
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: `${issue?.path.join('.') || 'it'}: ${issue?.message ?? 'invalid'}` };
  }
  const manifest = parsed.data;
  if (manifest.version > BACKUP_VERSION)
    return {
      ok: false,
      problem: `it is a version ${manifest.version} backup from Navi ${manifest.navi_version}; this Navi reads version ${BACKUP_VERSION}: upgrade Navi to restore it`,
    };
  const items = new Set<string>();
  const names = new Set<string>();
  for (const entry of manifest.items) {
    if (items.has(entry.item) || names.has(entry.name))
      return { ok: false, problem: `it lists ${entry.item} (${entry.name}) twice` };
    items.add(entry.item);
    names.add(entry.name);
  }
  if (manifest.database.engine !== 'postgres' && !manifest.items.some((i) => i.item === 'database'))
    return { ok: false, problem: 'it holds no database' };
  return { ok: true, manifest };
}
