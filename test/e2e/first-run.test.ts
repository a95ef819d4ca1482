/**
 * First run in a real headless Chromium against the real server: with no model server the setup
 * screen takes the chat's place; an Ollama started afterwards on the configured port (a fake
 * Ollama behind a TCP relay on that very port) appears by itself with its models, choosing one
 * brings the chat back without a reload and a message is answered by that server. The
 * OpenAI-compatible way shows which step of "Test connection" failed (a key refused with 401),
 * then saves a server that works. The local-model way downloads a small fake GGUF from a local
 * HTTP server with its progress shown, cancels another download, and lists the file. Each of
 * those is done from a paired browser: one that is not paired is told how to pair it instead, and
 * changes nothing.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownedSettingsPath, writeOwnedSettings } from '../../src/config/owned-settings.js';
import type { LlmSettingsView, LlmStatus, LocalModelsView } from '../../src/protocol/llm.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { needsProgram } from '../support/requirements.js';
import { PHONE, pairPage, screenshot, sendMessage, useWebEnv, waitForText } from './web-harness.js';

/** Listens on `port` and pipes every connection to `target`: a server started on that port. */
async function relay(port: number, target: number): Promise<Server> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const close = server.close.bind(server);
  server.close = (callback?: (err?: Error) => void) => {
    for (const socket of sockets) socket.destroy();
    return close(callback);
  };
  return server;
}

/** A GGUF file as far as the downloader checks: the magic, then filler. */
function fakeGguf(size: number): Buffer {
  const body = Buffer.alloc(size, 7);
  body.write('GGUF', 0, 'latin1');
  return body;
}

/** Serves `/tiny-test.gguf` in two halves (the second when the test says) and `/stalled.gguf`, which never ends. */
async function modelServer(): Promise<{ url: string; server: HttpServer; release(): void }> {
  const tiny = fakeGguf(300_000);
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const open = new Set<ServerResponse>();
  const server = createHttpServer((req, res) => {
    const file =
      req.url === '/tiny-test.gguf' ? tiny : req.url === '/stalled.gguf' ? fakeGguf(400_000) : null;
    if (!file) {
      res.writeHead(404).end('not found');
      return;
    }
    open.add(res);
    res.on('close', () => open.delete(res));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.length) });
    res.write(file.subarray(0, file.length / 2));
    if (req.url === '/tiny-test.gguf') void released.then(() => res.end(file.subarray(file.length / 2)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const close = server.close.bind(server);
  server.close = (callback?: (err?: Error) => void) => {
    for (const res of open) res.destroy();
    return close(callback);
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    release: () => release(),
  };
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  return (await response.json()) as T;
}

describe.skipIf(!needsProgram('chromium', 'web client e2e'))('web client: first run', () => {
  // The LLM settings come from the settings file Navi owns, not the environment, so the client
  // may change them (blank in the environment means "not set there").
  const dataDir = tempDir('navi-first-run-data-');
  let ollamaPort = 0;
  beforeAll(async () => {
    const free = await closedPortUrl();
    ollamaPort = Number(new URL(free).port);
    // No OpenAI-compatible server either: nothing answers there (and nothing leaves the machine).
    const noOpenAi = `${await closedPortUrl()}/v1`;
    writeOwnedSettings(ownedSettingsPath(dataDir), {
      OLLAMA_HOST: free,
      OLLAMA_DEFAULT_MODEL: 'llama3.2:3b',
      OPENAI_BASE_URL: noOpenAi,
    });
  });
  const env = useWebEnv({
    settings: {
      NAVI_DATA_DIR: dataDir,
      DEFAULT_LLM_BACKEND: '',
      OLLAMA_HOST: '',
      OLLAMA_DEFAULT_MODEL: '',
      OPENAI_BASE_URL: '',
      OPENAI_MODEL: '',
    },
  });
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  it('shows the setup screen without a model, finds an Ollama started later, and chats once one is chosen', async () => {
    const page = await env.newPage();
    await pairPage(env, page);
    const id = await env.navi.createSession();
    await page.goto(`${env.navi.url}/#/sessions/${id}`);
    const setup = page.getByTestId('setup-screen');
    await setup.waitFor();
    expect(await page.getByTestId('composer').count()).toBe(0);
    await page.getByTestId('ollama-looking').waitFor();
    expect(await page.getByTestId('setup-reason').textContent()).toContain(String(ollamaPort));
    await screenshot(page, 'laptop-setup-no-model');

    // Ollama starts now, on the port Navi was told about: the screen lists its models by itself.
    const ollama: FakeLlm = await startFakeLlm({ models: ['fake-qwen:3b', 'fake-llama:1b'] });
    closers.push(() => ollama.close());
    ollama.setDefault({ text: 'Hello from the Ollama that started late.' });
    const relayServer = await relay(ollamaPort, Number(new URL(ollama.url).port));
    closers.push(() => new Promise((resolve) => relayServer.close(resolve)));
    const model = page.locator('[data-testid="ollama-model"][data-model="fake-llama:1b"]');
    await model.waitFor();
    expect(await page.getByTestId('ollama-model').count()).toBe(2);
    await waitForText(page.getByTestId('ollama-found'), `127.0.0.1:${ollamaPort}`);
    await screenshot(page, 'laptop-setup-ollama-found');

    await model.getByTestId('use-ollama-model').click();
    await page.getByTestId('connection').and(page.locator('[data-state="open"]')).waitFor();
    expect(await setup.count()).toBe(0);
    expect(page.url()).toContain(`#/sessions/${id}`);

    await sendMessage(page, 'Are you there?');
    await waitForText(page.getByTestId('assistant-message'), 'Hello from the Ollama that started late.');
    const chats = ollama.requests.filter((r) => r.kind === 'chat');
    expect(chats.map((r) => r.body.model)).toEqual(['fake-llama:1b']);

    // Saved in the settings file Navi owns, and the status says no setup is needed any more.
    const saved = JSON.parse(readFileSync(ownedSettingsPath(dataDir), 'utf8')) as Record<string, string>;
    expect(saved).toMatchObject({
      DEFAULT_LLM_BACKEND: 'ollama',
      OLLAMA_HOST: `http://127.0.0.1:${ollamaPort}`,
      OLLAMA_DEFAULT_MODEL: 'fake-llama:1b',
    });
    expect((await getJson<LlmStatus>(`${env.navi.url}/llm/status`)).needs_setup).toBe(false);
  });

  it('shows which step of the connection test failed for a refused key, then saves a server that works', async () => {
    const server = await startFakeLlm({ apiKey: 'right-key', models: ['remote-model', 'remote-large'] });
    closers.push(() => server.close());
    const page = await env.newPage(PHONE);
    await pairPage(env, page);
    await page.goto(`${env.navi.url}/#/setup`);
    await page.getByTestId('setup-screen').waitFor();
    await page.getByTestId('setup-tab-openai').click();

    // What the form catches itself, before asking the server.
    await page.getByTestId('openai-url').fill('localhost:8080');
    await page.getByTestId('test-connection').click();
    await waitForText(page.getByTestId('openai-problem'), 'must start with http:// or https://');

    await page.getByTestId('openai-url').fill(server.openaiUrl);
    await page.getByTestId('openai-key').fill('wrong-key');
    await page.getByTestId('openai-model').fill('remote-large');
    await page.getByTestId('test-connection').click();
    const result = page.getByTestId('test-result');
    await result.waitFor();
    const step = (name: string) => page.locator(`[data-testid="test-step"][data-step="${name}"]`);
    expect(await step('connect').getAttribute('data-state')).toBe('passed');
    expect(await step('auth').getAttribute('data-state')).toBe('failed');
    expect(await step('models').getAttribute('data-state')).toBe('not-reached');
    expect(await page.getByTestId('test-message').textContent()).toContain('401');
    await screenshot(page, 'phone-setup-openai-auth-failed');

    await page.getByTestId('openai-key').fill('right-key');
    await page.getByTestId('test-connection').click();
    await page.locator('[data-testid="test-result"][data-ok="true"]').waitFor();
    expect(await step('model').getAttribute('data-state')).toBe('passed');
    expect(await page.getByTestId('found-model').allTextContents()).toEqual(['remote-model', 'remote-large']);
    // The key went to the server being tested, and only there.
    const listed = server.requests.filter((r) => r.kind === 'models');
    expect(listed.map((r) => r.headers.authorization)).toEqual(['Bearer wrong-key', 'Bearer right-key']);

    await page.getByTestId('use-openai').click();
    await page.waitForURL((url) => !url.hash.startsWith('#/setup'));
    const settings = await getJson<LlmSettingsView>(`${env.navi.url}/llm/settings`);
    expect(settings.values).toMatchObject({
      DEFAULT_LLM_BACKEND: 'openai',
      OPENAI_BASE_URL: server.openaiUrl,
      OPENAI_MODEL: 'remote-large',
      OPENAI_API_KEY: '',
    });
    expect(settings.api_key_set).toBe(true);
    expect(await page.content()).not.toContain('right-key');
  });

  it('downloads a model file with its progress shown, cancels another, and lists the one downloaded', async () => {
    const files = await modelServer();
    closers.push(() => new Promise((resolve) => files.server.close(resolve)));
    const page = await env.newPage();
    await pairPage(env, page);
    await page.goto(`${env.navi.url}/#/setup`);
    await page.getByTestId('setup-tab-llamacpp').click();
    const recommended = page.getByTestId('recommended-model');
    await recommended.first().waitFor();
    const first = page.locator('[data-testid="recommended-model"][data-alias="qwen2.5-3b"]');
    expect(await first.textContent()).toMatch(/2\.1 GB · 32k context/);
    expect(await first.textContent()).toContain('tool calling');
    await page.getByTestId('no-installed').waitFor();
    await screenshot(page, 'laptop-setup-local');

    await page.getByText('Download another GGUF file').click();
    // Refused before it is sent: a checksum that is not one.
    await page.getByTestId('download-source').fill(`${files.url}/tiny-test.gguf`);
    await page.getByTestId('download-sha256').fill('not-a-checksum');
    await page.getByTestId('download-custom').click();
    await waitForText(page.getByTestId('local-problem'), '64 hexadecimal characters');
    // Refused by the server, which says why: a folder in the name.
    await page.getByTestId('download-sha256').fill('');
    await page.getByTestId('download-source').fill('https://example.org/../../etc/passwd');
    await page.getByTestId('download-custom').click();
    await waitForText(page.getByTestId('local-problem'), 'The download did not start');

    await page.getByTestId('download-source').fill(`${files.url}/tiny-test.gguf`);
    await page.getByTestId('download-custom').click();
    const tiny = page.locator('[data-testid="download"][data-file="tiny-test.gguf"]');
    await waitForText(tiny.getByTestId('download-progress'), '150 KB of 300 KB (50%)');
    expect(await tiny.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('50');
    await screenshot(page, 'laptop-setup-download-progress');

    await page.getByTestId('download-source').fill(`${files.url}/stalled.gguf`);
    await page.getByTestId('download-custom').click();
    const stalled = page.locator('[data-testid="download"][data-file="stalled.gguf"]');
    await waitForText(stalled.getByTestId('download-progress'), '(50%)');
    await stalled.getByTestId('cancel-download').click();
    await page
      .locator('[data-testid="download"][data-file="stalled.gguf"][data-state="cancelled"]')
      .waitFor();

    files.release();
    const installed = page.locator('[data-testid="installed-model"][data-name="tiny-test.gguf"]');
    await installed.waitFor();
    await tiny.waitFor({ state: 'detached' });
    expect(await installed.textContent()).toContain('300 KB');
    expect(await page.locator('[data-testid="installed-model"][data-name="stalled.gguf"]').count()).toBe(0);
    await installed.scrollIntoViewIfNeeded();
    await screenshot(page, 'laptop-setup-downloaded');
  });

  it('tells a browser that is not paired how to pair it, and saves, tests and downloads nothing', async () => {
    const server = await startFakeLlm({ models: ['unpaired-model'] });
    closers.push(() => server.close());
    const settingsBefore = readFileSync(ownedSettingsPath(dataDir), 'utf8');
    const downloadsBefore = (await getJson<LocalModelsView>(`${env.navi.url}/llm/local`)).downloads;
    const pairHint = 'This browser is not paired with Navi';
    const how = 'run npx navi pair on the machine Navi runs on and open the link it prints in this browser';
    const page = await env.newPage();
    await page.goto(`${env.navi.url}/#/setup`);
    await page.getByTestId('setup-screen').waitFor();
    await page.getByTestId('setup-tab-openai').click();
    await page.getByTestId('openai-url').fill(server.openaiUrl);
    await page.getByTestId('openai-model').fill('unpaired-model');

    await page.getByTestId('test-connection').click();
    await waitForText(page.getByTestId('openai-problem'), pairHint);
    expect(await page.getByTestId('openai-problem').textContent()).toContain(how);

    await page.getByTestId('use-openai').click();
    const error = page.getByTestId('setup-error');
    await waitForText(error, pairHint);
    expect(await error.textContent()).toContain(`unpaired-model at ${server.openaiUrl} was not saved`);
    expect(await error.textContent()).toContain(how);
    await screenshot(page, 'laptop-setup-not-paired');

    await page.getByTestId('setup-tab-llamacpp').click();
    await page.getByText('Download another GGUF file').click();
    await page.getByTestId('download-source').fill(`${await closedPortUrl()}/unasked.gguf`);
    await page.getByTestId('download-custom').click();
    await waitForText(page.getByTestId('local-problem'), pairHint);
    expect(await page.getByTestId('local-problem').textContent()).toContain('The download did not start');

    // The settings page says the same on Save.
    await page.goto(`${env.navi.url}/#/settings`);
    await page.getByTestId('setting-LLAMACPP_MODEL_PATH').fill('unasked.gguf');
    await page.getByTestId('settings-save').click();
    await waitForText(page.getByTestId('settings-problem'), pairHint);
    expect(await page.getByTestId('settings-problem').textContent()).toContain(how);

    // Nothing was tested, saved or downloaded.
    expect(server.requests).toEqual([]);
    expect(readFileSync(ownedSettingsPath(dataDir), 'utf8')).toBe(settingsBefore);
    expect((await getJson<LocalModelsView>(`${env.navi.url}/llm/local`)).downloads).toEqual(downloadsBefore);
  });
});
