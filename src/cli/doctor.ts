/**
 * `navi doctor`: builds the same services `navi serve` runs on and checks each part a person
 * depends on. Every line says what was checked and, when it failed, what to do about it.
 * The exit code is 0 only when nothing failed; warnings (say, no sandbox) do not fail it.
 */

import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { type Settings, SettingsError } from '../config/settings.js';
import { capabilitySummary } from '../llm/capabilities.js';
import { findChromium } from '../machine/browser/find-chromium.js';
import { probeBwrap } from '../machine/sandbox/bwrap.js';
import { findNetworkHelpers } from '../machine/sandbox/sandbox-network.js';
import { findOpenscad, findXvfb } from '../machine/system/find-3d-programs.js';
import { defaultModelCapabilities, NO_TOOLS_ADVICE } from '../server/default-model.js';
import type { NaviServices } from '../server/services.js';
import type { StoreReport } from '../store/open-stores.js';
import type { SecretMasker } from '../util/secret-masker.js';
import { vaultOptions } from '../vault/index.js';
import { checkDataLocation } from './data.js';
import { usesPostgres } from './data-files.js';
import { mcpChecks } from './doctor-mcp.js';
import { DoctorNotes } from './doctor-notes.js';

export type CheckLevel = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  name: string;
  level: CheckLevel;
  detail: string;
}

/** How long doctor waits for the LLM backend and for MCP servers to answer. */
const HEALTH_TIMEOUT_MS = 10_000;
const MCP_TIMEOUT_MS = 20_000;

/** `secrets` are masked in what the services log, as in `navi serve`. */
export async function runDoctor(settings: Settings, out: Writable, secrets?: SecretMasker): Promise<number> {
  const results: CheckResult[] = [checkDataLocation(settings)];
  const notes = new DoctorNotes(secrets);
  let services: NaviServices | undefined;
  try {
    const { createServices } = await import('../server/create-services.js');
    services = await createServices(settings, { logger: notes.logger });
  } catch (err) {
    // A setting naming a vault secret that cannot be read stops start-up before the database.
    if (err instanceof SettingsError)
      results.push({ name: 'settings', level: 'fail', detail: err.problems.join('; ') });
    else if (usesPostgres(settings))
      // The error names the URL (password hidden) and what to check.
      results.push({ name: 'database', level: 'fail', detail: (err as Error).message });
    else
      results.push({
        name: 'database',
        level: 'fail',
        detail: `could not open ${settings.DB_PATH}: ${(err as Error).message}. Check DB_PATH and its folder's permissions.`,
      });
  }
  if (services) {
    try {
      results.push(...(await checkStorage(services)));
      results.push(...(await checkServices(services)), checkVault(services, settings));
    } finally {
      await services.close();
    }
  }
  results.push(await checkSandbox(settings));
  if (settings.MCP_SHIPPED_SERVERS) results.push(checkBrowser(settings), ...check3dPrograms(settings));

  for (const r of results) out.write(`${mark(r.level)} ${r.name}: ${r.detail}\n`);
  for (const line of notes.lines()) out.write(`${line}\n`);
  const failed = results.filter((r) => r.level === 'fail').length;
  out.write(failed === 0 ? 'All checks passed.\n' : `${failed} check(s) failed.\n`);
  return failed === 0 ? 0 : 1;
}

/**
 * Which store is in use, its version, schema version and one round trip's latency; on
 * PostgreSQL also how memory finds vectors. A server that stopped answering since start-up is a
 * failed check with its reason.
 */
export async function checkStorage(services: NaviServices): Promise<CheckResult[]> {
  if (!services.storage) return [];
  let report: StoreReport;
  try {
    report = await services.storage.report();
  } catch (err) {
    return [
      {
        name: 'database',
        level: 'fail',
        detail: `the ${services.storage.engine === 'postgres' ? 'PostgreSQL server' : 'database'} stopped answering: ${(err as Error).message}`,
      },
    ];
  }
  const engine = report.engine === 'postgres' ? 'PostgreSQL' : 'SQLite';
  const results: CheckResult[] = [
    {
      name: 'database',
      level: 'ok',
      detail: `${engine} ${report.version} at ${report.location}, schema version ${report.migration}, ${report.latencyMs.toFixed(1)} ms round trip`,
    },
  ];
  const store = services.memory?.store;
  // Read-only: `vectorSearch()` would set pgvector up, and a check must not change the database.
  const vectorSearchState = (
    store as { vectorSearchState?: () => Promise<'pgvector' | 'offered' | 'absent' | 'scan'> } | undefined
  )?.vectorSearchState;
  if (report.engine === 'postgres' && store && typeof vectorSearchState === 'function') {
    try {
      const state = await vectorSearchState.call(store);
      results.push({
        name: 'memory vectors',
        level: 'ok',
        detail:
          state === 'pgvector'
            ? 'found with pgvector on the server'
            : state === 'offered'
              ? 'found by a scan in Navi for now: the server offers pgvector, which navi serve sets up on its first vector search (creating the extension may need a superuser: CREATE EXTENSION vector;), then restart every navi serve together'
              : 'found by a scan in Navi (the server has no pgvector; installing it speeds up large memories)',
      });
    } catch (err) {
      results.push({ name: 'memory vectors', level: 'fail', detail: (err as Error).message });
    }
  }
  return results;
}

/** The LLM backends the profiles use, the tools that failed to load, and the MCP servers. */
export async function checkServices(services: NaviServices): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const backendIds = new Set(
    services.profiles.list().map((p) => p.llm_backend ?? services.settings.DEFAULT_LLM_BACKEND),
  );
  for (const id of backendIds) results.push(await checkBackend(services, id));
  results.push(await checkDefaultModel(services));

  const toolErrors = services.tools.errors();
  results.push({
    name: 'tools',
    level: toolErrors.length === 0 ? 'ok' : 'fail',
    detail:
      toolErrors.length === 0
        ? `${services.tools.list().length} tools loaded`
        : `${toolErrors.length} failed to load: ${toolErrors.map((e) => `${e.origin} (${e.error})`).join('; ')}`,
  });

  if (services.mcp) {
    const ready = services.mcp.ready();
    const timedOut = await Promise.race([
      ready.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(resolve, MCP_TIMEOUT_MS, true).unref()),
    ]);
    results.push(...mcpChecks(services.mcp.errors(), services.mcp.status()));
    if (timedOut) {
      results.push({
        name: 'mcp',
        level: 'fail',
        detail: `servers still starting after ${MCP_TIMEOUT_MS / 1000} s`,
      });
    }
  }
  return results;
}

async function checkBackend(services: NaviServices, id: string): Promise<CheckResult> {
  const profile = services.profiles
    .list()
    .find((p) => (p.llm_backend ?? services.settings.DEFAULT_LLM_BACKEND) === id);
  try {
    const backend = services.backendFor(profile?.id ?? services.profiles.getDefault().id);
    const report = await backend.checkHealth(AbortSignal.timeout(HEALTH_TIMEOUT_MS));
    return { name: `llm ${id}`, level: report.ok ? 'ok' : 'fail', detail: report.detail };
  } catch (err) {
    return { name: `llm ${id}`, level: 'fail', detail: (err as Error).message };
  }
}

/** What the default profile's model can do; a model that cannot call tools is a warning. */
async function checkDefaultModel(services: NaviServices): Promise<CheckResult> {
  const { model, capabilities } = await defaultModelCapabilities(
    services,
    AbortSignal.timeout(HEALTH_TIMEOUT_MS),
  );
  const line = capabilitySummary(capabilities);
  if (capabilities.tools === false)
    return { name: `model ${model}`, level: 'warn', detail: `${line}; ${NO_TOOLS_ADVICE}.` };
  return { name: `model ${model}`, level: 'ok', detail: line };
}

async function checkSandbox(settings: Settings): Promise<CheckResult> {
  if (settings.NAVI_SANDBOX === 'off') {
    return {
      name: 'sandbox',
      level: 'warn',
      detail: "NAVI_SANDBOX=off: terminal, code_exec and navi-3d's OpenSCAD run unconfined",
    };
  }
  const probe = await probeBwrap();
  if (probe.available) {
    const helpers = findNetworkHelpers();
    if ('missing' in helpers) {
      return {
        name: 'sandbox',
        level: 'warn',
        detail: `bubblewrap at ${probe.path}, but ${helpers.missing.join(', ')} missing: sandboxed commands of profiles with network_access run without network. Install slirp4netns and iproute2.`,
      };
    }
    return {
      name: 'sandbox',
      level: 'ok',
      detail: `bubblewrap at ${probe.path}; network for profiles that allow it through ${helpers.slirp4netns}`,
    };
  }
  return {
    name: 'sandbox',
    level: settings.NAVI_SANDBOX === 'required' ? 'fail' : 'warn',
    detail: `bubblewrap unavailable (${probe.reason}); terminal and code_exec ask before every call, and navi-3d ${settings.NAVI_SANDBOX === 'required' ? 'refuses to run OpenSCAD' : 'runs OpenSCAD unconfined'}. Install it with apt-get install bubblewrap.`,
  };
}

/** Whether the vault opens; a vault not created yet is fine (doctor does not create one). */
function checkVault(services: NaviServices, settings: Settings): CheckResult {
  const path = vaultOptions(settings).path;
  if (!existsSync(path))
    return {
      name: 'vault',
      level: 'ok',
      detail: `none yet at ${path}; it is created when a secret is first stored`,
    };
  const state = services.vault.status();
  if (state.state === 'unlocked')
    return {
      name: 'vault',
      level: 'ok',
      detail: `${state.path} unlocked (key from ${state.keySource === 'env' ? 'GNEXUS_MASTER_KEY' : 'the key file'})`,
    };
  return {
    name: 'vault',
    level: 'fail',
    detail: `${state.path} is locked: ${state.reason.replace(/\.?$/, '.')} ${state.howToUnlock}`,
  };
}

/** navi-web renders pages in the system Chromium; without it web_view degrades to a plain fetch. */
function checkBrowser(settings: Settings): CheckResult {
  const chromium = findChromium(settings.CHROMIUM_PATH);
  if (chromium.available)
    return { name: 'chromium', level: 'ok', detail: `${chromium.path}, used by web_view` };
  return {
    name: 'chromium',
    level: 'warn',
    detail: `${chromium.reason} web_view still works, but reads pages with a plain fetch: no JavaScript, no screenshots.`,
  };
}

/**
 * navi-3d compiles with OpenSCAD and renders under Xvfb; without them it still starts, and its
 * tools say what is missing, so either is a warning.
 */
export function check3dPrograms(settings: Pick<Settings, 'OPENSCAD_PATH' | 'XVFB_PATH'>): CheckResult[] {
  const openscad = findOpenscad(settings);
  const xvfb = findXvfb(settings);
  return [
    openscad.available
      ? { name: 'openscad', level: 'ok', detail: `${openscad.path}, used by compile_scad and render_stl` }
      : {
          name: 'openscad',
          level: 'warn',
          detail: `${openscad.reason} navi-3d still starts, and lint_scad works; compile_scad and render_stl do not.`,
        },
    xvfb.available
      ? { name: 'xvfb', level: 'ok', detail: `${xvfb.path}, the virtual screen render_stl draws on` }
      : { name: 'xvfb', level: 'warn', detail: `${xvfb.reason} render_stl does not work without it.` },
  ];
}

function mark(level: CheckLevel): string {
  return level === 'ok' ? '[ok]  ' : level === 'warn' ? '[warn]' : '[FAIL]';
}
