/**
 * Which GGUF file a llamacpp model name means. A name with a folder in it (or starting with `~`)
 * is a path; a plain name is a file of the models folder (NAVI_MODELS_DIR), or a recommended
 * model's alias; an empty name (LLAMACPP_MODEL_PATH unset) is the first `.gguf` file there.
 */
import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { CATALOG, catalogByAlias } from '../models/catalog.js';
import { modelFileNameProblem } from '../models/source.js';

/** No usable model file; the message says how to get one. */
export class ModelFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelFileError';
  }
}

const suggested = CATALOG[0]?.alias ?? '<model>';

/** The `.gguf` files of the folder, sorted by name; none when it does not exist. */
export function ggufFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return names.filter(
    (n) => n.endsWith('.gguf') && modelFileNameProblem(n) === undefined && isFile(join(dir, n)),
  );
}

/** The model name the backend uses when a call names none: LLAMACPP_MODEL_PATH, else the first file. */
export function defaultModelName(modelPath: string, modelsDir: string): string {
  return modelPath.trim() || (ggufFiles(modelsDir)[0] ?? '');
}

const isPathLike = (name: string) =>
  isAbsolute(name) || name.includes('/') || name.includes('\\') || name.startsWith('~');

/**
 * The absolute path of the model file `name` means; throws `ModelFileError` saying what to do.
 * A path is accepted only with `allowPath` (LLAMACPP_MODEL_PATH, which the person running Navi
 * sets): a model a client chooses is a file of the models folder.
 */
export function resolveModelFile(name: string, modelsDir: string, allowPath = true): string {
  const wanted = name.trim();
  if (wanted === '') {
    const first = ggufFiles(modelsDir)[0];
    if (first) return join(modelsDir, first);
    throw new ModelFileError(
      `No model file: the models folder ${modelsDir} (NAVI_MODELS_DIR) has no .gguf file and LLAMACPP_MODEL_PATH is not set. ` +
        `Download one with npx navi model pull ${suggested} (npx navi model list shows the recommended ones), or set LLAMACPP_MODEL_PATH to a .gguf file.`,
    );
  }
  if (isPathLike(wanted)) {
    if (!allowPath)
      throw new ModelFileError(
        `The llamacpp model ${JSON.stringify(wanted.slice(0, 80))} is a path; a model chosen for a session or a call must be a file of the models folder ${modelsDir}: give its file name (npx navi model list).`,
      );
    const path = resolve(wanted.startsWith('~') ? join(homedir(), wanted.slice(1)) : wanted);
    if (isFile(path)) return path;
    throw new ModelFileError(
      `The model file ${path} does not exist. Check LLAMACPP_MODEL_PATH (or the model chosen), or download a model with npx navi model pull ${suggested}.`,
    );
  }
  const fileName = catalogByAlias(wanted)?.fileName ?? wanted;
  const problem = modelFileNameProblem(fileName);
  if (problem)
    throw new ModelFileError(
      `The llamacpp model ${JSON.stringify(wanted.slice(0, 80))} is not usable: ${problem}.`,
    );
  const path = join(modelsDir, fileName);
  if (isFile(path)) return path;
  const present = ggufFiles(modelsDir);
  throw new ModelFileError(
    `There is no model ${fileName} in ${modelsDir} (NAVI_MODELS_DIR). ` +
      `Download it with npx navi model pull ${catalogByAlias(wanted) ? wanted : suggested}, or choose one that is there (${present.slice(0, 5).join(', ') || 'none yet'}).`,
  );
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
