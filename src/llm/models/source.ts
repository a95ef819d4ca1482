/**
 * Where a model file comes from. `navi model pull` and `POST /llm/downloads` accept an alias of
 * the catalog, `hf:org/repo/path/file.gguf` (a file of a Hugging Face repository) or an https
 * URL; this turns any of them into the URL to fetch, the file name it gets in the models folder
 * and the checksum it must have, or an error saying what is wrong with it.
 */
import { type CatalogModel, catalogByAlias, catalogBySource } from './catalog.js';

/** Longest source accepted: a real URL is far shorter; the limit keeps hostile input cheap. */
export const MAX_SOURCE_LENGTH = 2048;

const SHA256 = /^[0-9a-f]{64}$/;
const SAFE_NAME = /^[A-Za-z0-9._-]+$/;
const MAX_NAME_LENGTH = 200;

/** A source resolved: what to fetch and what the result must be. */
export interface ResolvedSource {
  /** The source as it was given (trimmed). */
  source: string;
  url: string;
  /** The file's name in the models folder. */
  fileName: string;
  /** The checksum the file must have, when the catalog or the caller knows it. */
  sha256?: string;
  /** The catalog entry, when the source is one. */
  model?: CatalogModel;
}

/** A source that cannot be used; the message says why and what to give instead. */
export class SourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceError';
  }
}

/**
 * Why `name` cannot be a model file's name, or undefined when it can: letters, digits, dots,
 * dashes and underscores only (no folder, no `..`), ending in `.gguf`.
 */
export function modelFileNameProblem(name: string): string | undefined {
  const shown = JSON.stringify(name.slice(0, 80));
  if (name.length === 0) return 'the model file name is empty';
  if (name.length > MAX_NAME_LENGTH)
    return `the model file name is ${name.length} characters long; at most ${MAX_NAME_LENGTH} are accepted`;
  if (!SAFE_NAME.test(name))
    return `${shown} is not a plain file name: only letters, digits, ".", "-" and "_" are accepted (no folders)`;
  if (name.startsWith('.')) return `${shown} starts with a dot; give the model file's own name`;
  if (!name.endsWith('.gguf') || name === '.gguf')
    return `${shown} does not end in .gguf; Navi runs GGUF model files only`;
  return undefined;
}

/** A checksum as given (any case, surrounding spaces) in lower case, or a SourceError. */
export function normalizeSha256(value: string): string {
  const hex = value.trim().toLowerCase();
  if (!SHA256.test(hex))
    throw new SourceError(
      `the checksum ${JSON.stringify(value.slice(0, 80))} is not a SHA-256: it must be 64 hexadecimal characters`,
    );
  return hex;
}

/** Whether a URL host is this machine (plain http is accepted only there). */
function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

export interface SourceResolverOptions {
  /** Where `hf:` sources are fetched from; default https://huggingface.co (tests: a local server). */
  hfBaseUrl?: string;
}

/** Resolves sources; one per process, its `hf:` base fixed at construction. */
export class SourceResolver {
  private readonly hfBase: string;

  constructor(options: SourceResolverOptions = {}) {
    this.hfBase = (options.hfBaseUrl ?? 'https://huggingface.co').replace(/\/+$/, '');
  }

  /**
   * Resolves `input`. `sha256`, when given, is the checksum the caller expects: it wins over
   * the catalog's (a file updated on the server can still be pulled by naming its new checksum).
   * Throws a `SourceError` saying what is wrong.
   */
  resolve(input: string, sha256?: string): ResolvedSource {
    const source = input.trim();
    if (source === '')
      throw new SourceError(
        'no model given: name a recommended model (npx navi model list), hf:org/repo/file.gguf or an https URL',
      );
    if (source.length > MAX_SOURCE_LENGTH)
      throw new SourceError(
        `the source is ${source.length} characters long; at most ${MAX_SOURCE_LENGTH} are accepted`,
      );
    const expected = sha256 === undefined ? undefined : normalizeSha256(sha256);
    const withSum = (resolved: ResolvedSource): ResolvedSource => {
      const sum = expected ?? resolved.model?.sha256;
      return sum === undefined ? resolved : { ...resolved, sha256: sum };
    };

    if (source.startsWith('hf:')) return withSum(this.fromHf(source));
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) return withSum(fromUrl(source));
    const model = catalogByAlias(source);
    if (model) return withSum({ ...this.fromHf(model.source), source, model });
    throw new SourceError(
      `${JSON.stringify(source.slice(0, 80))} is not a recommended model (run npx navi model list for their names), ` +
        'nor hf:org/repo/file.gguf, nor an https:// URL',
    );
  }

  private fromHf(source: string): ResolvedSource {
    const parts = source.slice(3).split('/');
    if (parts.length < 3)
      throw new SourceError(
        `${JSON.stringify(source.slice(0, 80))} names no file: write hf:org/repo/file.gguf (the file may sit in folders: hf:org/repo/folder/file.gguf)`,
      );
    for (const part of parts) {
      if (part === '' || part === '.' || part === '..' || !SAFE_NAME.test(part))
        throw new SourceError(
          `${JSON.stringify(source.slice(0, 80))} has a part Navi does not accept (${JSON.stringify(part.slice(0, 40))}): ` +
            'organisation, repository, folders and file may hold letters, digits, ".", "-" and "_" only',
        );
    }
    const fileName = parts.at(-1) as string;
    const problem = modelFileNameProblem(fileName);
    if (problem) throw new SourceError(problem);
    const [org, repo, ...path] = parts;
    const url = `${this.hfBase}/${org}/${repo}/resolve/main/${path.join('/')}`;
    const model = catalogBySource(source);
    return { source, url, fileName, ...(model ? { model } : {}) };
  }
}

function fromUrl(source: string): ResolvedSource {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw new SourceError(`${JSON.stringify(source.slice(0, 80))} is not a valid URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw new SourceError(
      `${url.protocol}// URLs are not accepted: give an https:// URL (plain http only on this machine, for testing)`,
    );
  if (url.username !== '' || url.password !== '')
    throw new SourceError(
      'the URL holds a user name or password, which would be shown with the download; give a URL without them',
    );
  const last = url.pathname.slice(url.pathname.lastIndexOf('/') + 1);
  let fileName: string;
  try {
    fileName = decodeURIComponent(last);
  } catch {
    throw new SourceError(`the URL's file name ${JSON.stringify(last.slice(0, 80))} is not valid`);
  }
  const problem = modelFileNameProblem(fileName);
  if (problem) throw new SourceError(`the URL's file name will not do: ${problem}`);
  return { source, url: url.href, fileName };
}
