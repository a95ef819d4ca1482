import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventClient } from '../support/ws-client.js';
import { startScripted } from './harness.js';
import { aborted, scriptedAgent } from './scripted-agent.js';

describe('web client files', () => {
  it('serves index.html and hashed assets with caching, without a token', async () => {
    const agent = scriptedAgent();
    const server = await startScripted({ agent, settings: { NAVI_API_TOKEN: 't' } });
    await server.close();
    const webDir = makeWeb();
    const withWeb = await startScripted({ agent, settings: { NAVI_API_TOKEN: 't' }, app: { webDir } });
    const index = await withWeb.app.inject({ method: 'GET', url: '/' });
    expect(index.statusCode).toBe(200);
    expect(index.body).toContain('<div id="app">');
    expect(index.headers['cache-control']).toBe('no-cache');
    const asset = await withWeb.app.inject({ method: 'GET', url: '/assets/app-1234.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toContain('immutable');
    expect((await withWeb.app.inject({ method: 'GET', url: '/assets/missing.js' })).statusCode).toBe(404);
    expect((await withWeb.app.inject({ method: 'GET', url: '/../package.json' })).statusCode).toBe(404);
    await withWeb.close();
    rmSync(webDir, { recursive: true, force: true });
  });
});

function makeWeb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'navi-web-'));
  mkdirSync(join(dir, 'assets'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><div id="app"></div>');
  writeFileSync(join(dir, 'assets', 'app-1234.js'), 'console.log(1)');
  return dir;
}

describe('closing the server', () => {
  it('stops active runs so clients get stream_stopped', async () => {
    const agent = scriptedAgent(async function* (input, options) {
      yield { type: 'stream_start', trigger: input.trigger };
      await aborted(options.signal);
      yield { type: 'stream_stopped', content: '' };
    });
    const server = await startScripted({ agent });
    const id = await server.createSession();
    const client = await EventClient.connect(server.wsUrl(id));
    client.send({ type: 'message', content: 'long task' });
    await client.waitFor((e) => e.type === 'stream_start');
    await server.close();
    expect(client.events.at(-1)).toMatchObject({ type: 'stream_stopped' });
  });
});
