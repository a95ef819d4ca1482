/**
 * Imports user-written TypeScript and JavaScript (tools, context providers) so that an edited
 * file runs its new code after a reload.
 *
 * Node caches every module for the life of the process, so each reload starts a new tsx
 * namespace ("generation"): every file — and every helper it imports — is loaded afresh under
 * it. The previous generation's loader hook is switched off; tsx cannot take it out of Node's
 * hook chain, so each reload leaves one inert pass-through hook behind, which is cheap.
 *
 * tsx is loaded on the first import, not with this module: a server running the compiled build
 * with no user tools or context providers never starts its hooks thread and esbuild process.
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { NamespacedUnregister } from 'tsx/esm/api';

export class ModuleImporter {
  // A promise, so imports that start together share one generation.
  private generation: Promise<NamespacedUnregister> | undefined;

  /** Ends the current generation: imports from now on see the files as they are on disk now. */
  async refresh(): Promise<void> {
    const previous = this.generation;
    this.generation = undefined;
    await previous?.then((g) => g.unregister()).catch(() => {});
  }

  /** Imports `file` (absolute path) in the current generation, starting one if there is none. */
  async import(file: string): Promise<Record<string, unknown>> {
    this.generation ??= import('tsx/esm/api').then(({ register }) => register({ namespace: randomUUID() }));
    const generation = await this.generation;
    const mod: unknown = await generation.import(pathToFileURL(file).href, import.meta.url);
    return mod as Record<string, unknown>;
  }

  async close(): Promise<void> {
    await this.refresh();
  }
}

/** A load failure explained for the person (or agent) who wrote the file. */
export function describeImportError(err: unknown): string {
  if (!(err instanceof Error)) return `threw while loading: ${String(err)}`;
  const code = (err as { code?: unknown }).code;
  if (err.name === 'TransformError') return `syntax error: ${err.message}`;
  // A parse error of the file itself comes only from Node's loader; a SyntaxError that code
  // threw while running (a bad JSON.parse at import) has frames of its own and keeps its stack.
  if (err.name === 'SyntaxError' && !hasCodeFrames(err.stack)) {
    // Node's loader does not say which file failed to parse; it may be a helper the file imports.
    return `syntax error: ${err.message} (in this file or in a file it imports)`;
  }
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') {
    return `cannot import a dependency: ${err.message}`;
  }
  const stack = (err.stack ?? err.message).split('\n').slice(0, 10).join('\n');
  return `threw while loading: ${stack}`;
}

function hasCodeFrames(stack: string | undefined): boolean {
  return (stack ?? '')
    .split('\n')
    .some((line) => /^\s+at /.test(line) && !line.includes('node:internal') && !line.includes('<anonymous>'));
}

/** Source files a folder contributes: `.ts` and `.js`, not `_`-prefixed, not tests or typings. */
export function isLoadableFile(file: string): boolean {
  if (file.startsWith('_') || file.startsWith('.')) return false;
  if (file.endsWith('.d.ts') || /\.test\.[tj]s$/.test(file)) return false;
  return /\.[tj]s$/.test(file);
}
