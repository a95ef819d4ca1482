/**
 * Profiles as the person edits them: the JSON of a profile's file for `GET /agents/profiles/{id}`,
 * and for `PUT` a new one checked by the profile schema, written whole in place of the old file
 * (never anywhere but the profiles folder) and loaded, so the next run uses it.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { describeProfileIssues } from '../config/profile-issues.js';
import { PROFILE_ID_PATTERN, type ProfileRegistry, profileSchema } from '../config/profiles.js';
import type { ProfileDocument } from '../protocol/rest.js';
import { replaceFile } from '../vault/durable-file.js';
import { ApiError } from './errors.js';

/**
 * Unknown fields are refused rather than dropped: a misspelt `planing_enabled` would otherwise
 * be saved and silently do nothing.
 */
const editedProfileSchema = profileSchema.strict();

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class ProfileDocuments {
  constructor(
    private readonly profiles: ProfileRegistry,
    private readonly logger: Logger,
  ) {}

  /** The profile `id` as its file holds it. 404 `PROFILE_NOT_FOUND` for an id that names none. */
  read(id: string): ProfileDocument {
    const { file, path } = this.locate(id);
    const loaded = this.profiles.get(id);
    try {
      const onDisk: unknown = JSON.parse(readFileSync(path, 'utf8'));
      if (isObject(onDisk)) return { id, profile: onDisk, file };
    } catch {
      // Gone or broken since it was loaded (or a profile Navi made up for an empty folder):
      // what the registry holds is what runs use.
    }
    return { id, profile: { ...loaded }, file };
  }

  /**
   * Replaces profile `id` with `input`: 400 `INVALID_PROFILE` saying what is wrong when the
   * schema refuses it or its id is not `id`. The file is written through a temporary file and a
   * rename, so a reader sees the old profile or the new one, never part of one; then the
   * profiles are read again.
   */
  write(id: string, input: unknown): ProfileDocument {
    const { file, path } = this.locate(id);
    const parsed = editedProfileSchema.safeParse(input);
    if (!parsed.success) throw new ApiError('INVALID_PROFILE', describeProfileIssues(parsed.error, input));
    if (parsed.data.id !== id)
      throw new ApiError(
        'INVALID_PROFILE',
        `id: must stay "${id}", the profile being edited (a profile is not renamed by changing its id)`,
      );
    const profile = input as Record<string, unknown>;
    replaceFile(path, `${JSON.stringify(profile, null, 2)}\n`);
    const errors = this.profiles.reload();
    for (const e of errors) this.logger.warn({ file: e.file }, `profile skipped: ${e.error}`);
    this.logger.info({ profile: id, file }, 'profile saved');
    return { id, profile, file };
  }

  /** The file of profile `id` inside the profiles folder; refuses ids that name no profile. */
  private locate(id: string): { file: string; path: string } {
    if (!PROFILE_ID_PATTERN.test(id))
      throw new ApiError('PROFILE_NOT_FOUND', 'a profile id is 1 to 64 letters, digits, _ and -');
    if (!this.profiles.has(id))
      throw new ApiError(
        'PROFILE_NOT_FOUND',
        `"${id}"; the profiles are ${this.profiles
          .list()
          .map((p) => p.id)
          .join(', ')}`,
      );
    const dir = this.profiles.directory;
    if (dir === undefined) throw new Error('the profiles were not loaded from a folder');
    // A profile Navi made up because the folder held none gets the file its id names.
    const file = this.profiles.fileOf(id) ?? `${id}.json`;
    const path = join(resolve(dir), file);
    // File names come from listing the folder, but the rule is kept here, where the write is.
    if (basename(file) !== file || dirname(path) !== resolve(dir))
      throw new Error(`profile file ${JSON.stringify(file)} is not inside the profiles folder`);
    return { file, path };
  }
}
