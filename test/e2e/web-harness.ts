/**
 * Everything the browser tests share: the real Navi server (createServices + buildApp on a real
 * port, SQLite in a temporary folder) against the scripted fake LLM server, a few test tools
 * that produce UI components, publish or save session files, wait on the test, or need the
 * user's approval, and a headless Debian Chromium (WebGL in software) driven by playwright-core.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { findChromium, HEADLESS_CHROMIUM_ARGS } from '../../src/machine/browser/find-chromium.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, repoRoot, startNavi, tempDir } from '../support/navi.js';

export const LAPTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export const SCREENSHOT_DIR = join(repoRoot, 'test-artifacts', 'screenshots');

/** How an MCP server file starts the fixture MCP server (src/mcp/fixtures/fixture-server.ts). */
export const MCP_FIXTURE = {
  command: process.execPath,
  args: ['--import', 'tsx', join(repoRoot, 'src/mcp/fixtures/fixture-server.ts')],
  cwd: repoRoot,
};

/**
 * A new servers folder (for MCP_SERVERS_DIR) with the fixture server twice: `fixture`, which
 * runs, and `helper`, which Navi wrote and which waits for approval.
 */
export function mcpServersDir(prefix: string): string {
  const dir = join(tempDir(prefix), 'servers');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'fixture.json'), JSON.stringify({ name: 'fixture', ...MCP_FIXTURE }));
  writeFileSync(
    join(dir, 'helper.json'),
    JSON.stringify({ name: 'helper', ...MCP_FIXTURE, enabled: false, created_by: 'agent' }),
  );
  return dir;
}

/** Lets a test decide when the `slow_task` tool finishes. */
export class Gate {
  private waiting: (() => void)[] = [];
  private opened = 0;
  wait(signal: AbortSignal): Promise<void> {
    if (this.opened > 0) {
      this.opened -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      this.waiting.push(resolve);
      signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
    });
  }
  open(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.opened += 1;
  }
}

function testTools(gate: Gate): ToolDefinition[] {
  return [
    {
      name: 'render_component',
      description: 'Renders a UI component (card_grid or form) in the chat.',
      parameters: {
        type: 'object',
        properties: { component_name: { type: 'string' }, payload: { type: 'object' } },
        required: ['component_name', 'payload'],
      },
      execute: async (params) => ({
        success: true,
        output: `Component '${String(params.component_name)}' rendered`,
        metadata: { ui_component: { component: params.component_name, payload: params.payload } },
      }),
    },
    {
      name: 'slow_task',
      description: 'Works until the test lets it finish.',
      parameters: { type: 'object', properties: { job: { type: 'string' } } },
      execute: async (params, ctx) => {
        await gate.wait(ctx.signal);
        return { success: true, output: `finished ${String(params.job)}` };
      },
    },
    {
      name: 'long_report',
      description: 'Returns a long report.',
      parameters: { type: 'object', properties: {} },
      execute: async () => ({
        success: true,
        output: Array.from({ length: 400 }, (_, i) => `report line ${i + 1}`).join('\n'),
      }),
    },
    {
      name: 'publish_note',
      description: 'Publishes a file of this session for inline viewing (the metadata of content_publish).',
      parameters: {
        type: 'object',
        properties: { name: { type: 'string' }, kind: { type: 'string' }, title: { type: 'string' } },
        required: ['name'],
      },
      execute: async (params, ctx) => {
        const name = String(params.name);
        const url = `/sessions/${encodeURIComponent(ctx.sessionId)}/files/${encodeURIComponent(name)}`;
        const kind = typeof params.kind === 'string' ? params.kind : 'markdown';
        const mime = kind === 'model' ? 'model/stl' : 'text/markdown';
        const title = typeof params.title === 'string' ? params.title : 'Our trip';
        return {
          success: true,
          output: `Published ${name}`,
          metadata: { published: { name, url, kind, mime_type: mime, title } },
        };
      },
    },
    {
      name: 'save_files',
      description: 'Reports files of this session as saved by the tool (the shared_files of an MCP result).',
      parameters: {
        type: 'object',
        properties: { files: { type: 'array', items: { type: 'object' } } },
        required: ['files'],
      },
      execute: async (params, ctx) => {
        const files = params.files as { name: string; size: number; mime_type: string }[];
        const shared_files = files.map((file) => ({
          ...file,
          url: `/sessions/${encodeURIComponent(ctx.sessionId)}/files/${encodeURIComponent(file.name)}`,
        }));
        return { success: true, output: `Saved ${files.length} files`, metadata: { shared_files } };
      },
    },
    {
      name: 'dangerous_op',
      description: 'Does something that needs the user to approve it.',
      parameters: { type: 'object', properties: { what: { type: 'string' } }, required: ['what'] },
      execute: async (params) => ({ success: true, output: `did ${String(params.what)}` }),
    },
  ];
}

function writeProfiles(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const common = { system_prompt: 'You are a test assistant.', enabled_tools: ['*'], max_iterations: 10 };
  writeFileSync(
    join(dir, 'tester.json'),
    JSON.stringify({ ...common, id: 'tester', name: 'Tester', confirm_tools: ['dangerous_op'] }),
  );
  writeFileSync(
    join(dir, 'planner.json'),
    JSON.stringify({ ...common, id: 'planner', name: 'Planner', planning_enabled: true }),
  );
}

export interface WebEnv {
  fake: FakeLlm;
  navi: NaviHandle;
  browser: Browser;
  gate: Gate;
  /** A page at the given size (laptop by default), with errors of the page collected. */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** Errors thrown in any page so far (a test fails on them). */
  pageErrors: string[];
  /** Closes the server and starts it again on the same port with the same database. */
  restart(between?: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** Settings on top of the environment's own (e.g. `MCP_SHIPPED_SERVERS: 'true'`). */
export interface WebEnvOptions {
  settings?: Record<string, string>;
}

export async function startWebEnv(options: WebEnvOptions = {}): Promise<WebEnv> {
  const fake = await startFakeLlm();
  fake.setDefault({ text: 'OK.' });
  const dir = tempDir('navi-e2e-');
  const profilesDir = join(dir, 'profiles');
  writeProfiles(profilesDir);
  const gate = new Gate();
  const settings = {
    DEFAULT_LLM_BACKEND: 'ollama',
    OLLAMA_HOST: fake.ollamaUrl,
    OLLAMA_DEFAULT_MODEL: 'test-model',
    OLLAMA_NUM_CTX: '8192',
    PROFILES_DIR: profilesDir,
    DEFAULT_PROFILE: 'tester',
    // Compression runs only when a test scripts a usage near the window (8192 × 0.8).
    CONTEXT_COMPRESSION_ENABLED: 'true',
    CONTEXT_KEEP_RECENT: '1',
    NAVI_SANDBOX: 'off',
    ...options.settings,
  };
  const start = async (port?: number): Promise<NaviHandle> => {
    return startNavi({ dir, settings, extraTools: testTools(gate), ...(port ? { port } : {}) });
  };
  const browser = await chromium.launch({
    executablePath: findChromium('').path ?? 'chromium',
    // WebGL (the 3D viewer) in software: without a GPU, Chromium draws only through SwiftShader.
    args: [...HEADLESS_CHROMIUM_ARGS, '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  const pageErrors: string[] = [];
  const env: WebEnv = {
    fake,
    navi: await start(),
    browser,
    gate,
    pageErrors,
    async newPage(viewport = LAPTOP) {
      const page = await browser.newPage({ viewport });
      page.on('pageerror', (error) => pageErrors.push(error.message));
      return page;
    },
    async restart(between) {
      const port = env.navi.port;
      await env.navi.close();
      await between?.();
      env.navi = await start(port);
    },
    async close() {
      await browser.close();
      await env.navi.close();
      await fake.close();
    },
  };
  return env;
}

/**
 * One WebEnv for the enclosing `describe`: started before its tests, closed after them, and
 * after each test the page errors are checked and the fake LLM is reset. The returned object
 * stands for the started environment (it may be used only inside tests and hooks).
 */
export function useWebEnv(options: WebEnvOptions = {}): WebEnv {
  let started: WebEnv | undefined;
  beforeAll(async () => {
    started = await startWebEnv(options);
    await started.navi.services.mcp?.ready();
  }, 180_000);
  afterAll(async () => {
    await started?.close();
  });
  afterEach(() => {
    if (!started) return;
    expect(started.pageErrors).toEqual([]);
    started.fake.reset();
    started.fake.setDefault({ text: 'OK.' });
  });
  return new Proxy({} as WebEnv, {
    get(_, property) {
      if (!started) throw new Error('The web environment is used before its beforeAll hook ran.');
      const value: unknown = Reflect.get(started, property);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}

/**
 * `useWebEnv` with no model answering: Ollama, the default backend, is looked for at an address
 * where nothing listens. `ollamaUrl()` is that address once the hooks ran, so a test can start
 * a fake LLM server there.
 */
export function useWebEnvWithoutModel(): { env: WebEnv; ollamaUrl: () => string } {
  let url = '';
  // Registered before the environment's own beforeAll, which reads OLLAMA_HOST.
  beforeAll(async () => {
    url = await closedPortUrl();
  });
  const env = useWebEnv({
    settings: {
      get OLLAMA_HOST() {
        return url;
      },
    },
  });
  return { env, ollamaUrl: () => url };
}

/** Saves a screenshot under test-artifacts/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), animations: 'disabled' });
}

/**
 * Pairs the page's browser context as a person does: a code made through the store (what
 * `navi pair` does), opened as `/#pair=CODE`. Resolves once the cookie is set.
 */
export async function pairPage(env: WebEnv, page: Page): Promise<void> {
  const code = await env.navi.services.consent.createPairingCode(10 * 60_000);
  const paired = page.waitForResponse(
    (r) => r.url().endsWith('/auth/pair') && r.request().method() === 'POST',
  );
  await page.goto(`${env.navi.url}/#pair=${code}`);
  const response = await paired;
  if (response.status() !== 200)
    throw new Error(`pairing answered ${response.status()}: ${await response.text()}`);
}

/** Opens a new session of `profileId` in the page through the REST API and the URL. */
export async function openNewSession(env: WebEnv, page: Page, profileId?: string): Promise<string> {
  const id = await env.navi.createSession(profileId);
  await page.goto(`${env.navi.url}/#/sessions/${id}`);
  await page.getByTestId('connection').and(page.locator('[data-state="open"]')).waitFor();
  return id;
}

/** Types a message into the composer and sends it with Enter. */
export async function sendMessage(page: Page, text: string): Promise<void> {
  const box = page.getByTestId('composer');
  await box.fill(text);
  await box.press('Enter');
}

/** Waits until the locator's text contains `text`. */
export async function waitForText(locator: Locator, text: string): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor();
}

/** Waits until the current run is over (the composer is enabled again). */
export async function waitForIdle(page: Page): Promise<void> {
  await page.getByTestId('send').waitFor();
  await page.waitForFunction(() => {
    const box = document.querySelector<HTMLTextAreaElement>('[data-testid="composer"]');
    return box !== null && !box.disabled;
  });
}
