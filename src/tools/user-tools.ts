/**
 * Hot reload of user tools and context providers: drop every user tool, load the
 * folder again and register what loaded. Built-in and MCP tools are never touched, and a user
 * tool may not take a name they use.
 *
 * The new set is imported completely before the registry changes, and the swap itself is
 * synchronous, so a run that lists tools never sees a half-loaded folder.
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import { type FileError, loadToolsFromDir, readEnabledList } from './loader.js';
import { ModuleImporter } from './module-import.js';
import type { ToolLoadError, ToolRegistry } from './registry.js';

/**
 * A folder of the user's that reloads in the same step as the tools: the context providers,
 * which live with the system prompt in a higher layer and are handed in by the composition root.
 * `load` swaps in the new set only once it is complete and never rejects.
 */
export interface ReloadableFolder {
  load(): Promise<{ loaded: string[]; errors: FileError[] }>;
}

export interface UserToolsDeps {
  registry: ToolRegistry;
  /** TOOLS_DIR, absolute or relative to the working directory. */
  toolsDir: string;
  /** Reloaded in the same step when given. */
  providers?: ReloadableFolder;
  logger?: Logger;
}

export interface ReloadReport {
  /** Names of the user tools now registered. */
  loaded: string[];
  /** Section names of the context providers now active (when providers were given). */
  providers: string[];
  /** One entry per file (or `enabled.json`) that failed, with the reason. */
  errors: { origin: string; error: string }[];
}

interface ReloadState {
  importer: ModuleImporter;
  queue: Promise<unknown>;
}

// Per registry, not global: the importer generation and the queue that keeps two reloads
// (say `write_tool` and `POST /agents/tools/reload`) from interleaving belong to one registry.
const states = new WeakMap<ToolRegistry, ReloadState>();

function stateFor(registry: ToolRegistry): ReloadState {
  let s = states.get(registry);
  if (!s) {
    s = { importer: new ModuleImporter(), queue: Promise.resolve() };
    states.set(registry, s);
  }
  return s;
}

/**
 * Reloads TOOLS_DIR (and the context providers) into `registry`; resolves to what loaded and
 * what failed. Never rejects. Also records the errors in the registry for `list_tools` and doctor.
 */
export function reloadUserTools(deps: UserToolsDeps): Promise<ReloadReport> {
  const state = stateFor(deps.registry);
  const next = state.queue.then(() => reloadNow(deps, state));
  state.queue = next.catch(() => {});
  return next;
}

async function reloadNow(deps: UserToolsDeps, state: ReloadState): Promise<ReloadReport> {
  const { registry } = deps;
  const toolsDir = resolve(deps.toolsDir);
  await state.importer.refresh();
  const { loaded, errors } = await loadToolsFromDir(toolsDir, state.importer, registry.validator);
  const enabled = readEnabledList(toolsDir);
  const toolErrors: ToolLoadError[] = errors.map((e) => ({ ...e, source: 'user' }));
  if (enabled.error) toolErrors.push({ origin: 'enabled.json', source: 'user', error: enabled.error });

  registry.removeWhere((e) => e.source === 'user');
  const names: string[] = [];
  for (const { tool, file } of loaded) {
    const taken = registry.get(tool.name);
    if (taken) {
      toolErrors.push({
        origin: relativeName(file, toolsDir),
        source: 'user',
        error: `tool name "${tool.name}" is taken by a ${taken.source} tool; rename the user tool`,
      });
      continue;
    }
    registry.register({ tool, source: 'user', file, enabledEverywhere: enabled.names.includes(tool.name) });
    names.push(tool.name);
  }
  registry.setErrors('user', toolErrors);
  for (const e of toolErrors)
    deps.logger?.warn({ origin: e.origin, error: e.error }, 'user tool failed to load');

  let providerNames: string[] = [];
  const providerErrors: ToolLoadError[] = [];
  if (deps.providers) {
    const p = await deps.providers.load();
    providerNames = p.loaded;
    for (const e of p.errors) providerErrors.push({ ...e, source: 'context_provider' });
    registry.setErrors('context_provider', providerErrors);
  }
  deps.logger?.info(
    {
      tools: names.length,
      providers: providerNames.length,
      errors: toolErrors.length + providerErrors.length,
    },
    'user tools reloaded',
  );
  return {
    loaded: names,
    providers: providerNames,
    errors: [
      ...toolErrors.map(({ origin, error }) => ({ origin, error })),
      ...providerErrors.map(({ origin, error }) => ({ origin: `${origin} (context provider)`, error })),
    ],
  };
}

function relativeName(file: string, dir: string): string {
  return file.startsWith(dir) ? file.slice(dir.length).replace(/^[/\\]/, '') : file;
}
