/**
 * The models folder (NAVI_MODELS_DIR): the GGUF files in it, the downloads left half done, and
 * removing a model. Names are checked before they touch the file system, so no name reaches
 * outside the folder.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalModel } from '../../protocol/llm.js';
import { catalogByAlias, catalogByFileName } from './catalog.js';
import { modelFileNameProblem } from './source.js';

const PARTIAL = '.partial';

/** A download stopped or cut before it finished; pulling the same model resumes it. */
export interface PartialModel {
  name: string;
  bytes: number;
}

export class ModelStoreError extends Error {
  constructor(
    readonly kind: 'invalid' | 'not_found',
    message: string,
  ) {
    super(message);
    this.name = 'ModelStoreError';
  }
}

export class ModelStore {
  constructor(readonly dir: string) {}

  /** The `.gguf` files of the folder by name; none when the folder does not exist yet. */
  async list(): Promise<LocalModel[]> {
    const models: LocalModel[] = [];
    for (const name of await this.names()) {
      if (!name.endsWith('.gguf') || modelFileNameProblem(name) !== undefined) continue;
      const info = await stat(join(this.dir, name)).catch(() => undefined);
      if (!info?.isFile()) continue;
      const alias = catalogByFileName(name)?.alias;
      models.push({ name, size_bytes: info.size, ...(alias ? { alias } : {}) });
    }
    return models;
  }

  /** Downloads that stopped before they were complete. */
  async partials(): Promise<PartialModel[]> {
    const found: PartialModel[] = [];
    for (const file of await this.names()) {
      if (!file.endsWith(PARTIAL)) continue;
      const name = file.slice(0, -PARTIAL.length);
      if (modelFileNameProblem(name) !== undefined) continue;
      const info = await stat(join(this.dir, file)).catch(() => undefined);
      if (info?.isFile()) found.push({ name, bytes: info.size });
    }
    return found;
  }

  /**
   * The file a model name means: a file name of the folder, or the alias of a recommended model.
   * Throws `invalid` for a name that is not a plain `.gguf` file name.
   */
  fileNameOf(nameOrAlias: string): string {
    const model = catalogByAlias(nameOrAlias);
    if (model) return model.fileName;
    const problem = modelFileNameProblem(nameOrAlias);
    if (problem) throw new ModelStoreError('invalid', problem);
    return nameOrAlias;
  }

  /**
   * Removes a model (by file name or alias) and any half-done download of it. Throws
   * `not_found` when there is neither.
   */
  async remove(nameOrAlias: string): Promise<string> {
    const name = this.fileNameOf(nameOrAlias);
    const path = join(this.dir, name);
    const whole = await stat(path).catch(() => undefined);
    const partial = await stat(`${path}${PARTIAL}`).catch(() => undefined);
    if (!whole?.isFile() && !partial?.isFile())
      throw new ModelStoreError(
        'not_found',
        `there is no model ${JSON.stringify(name)} in ${this.dir}; npx navi model list shows the models there`,
      );
    if (whole?.isFile()) await rm(path);
    if (partial?.isFile()) await rm(`${path}${PARTIAL}`);
    return name;
  }

  private async names(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}
