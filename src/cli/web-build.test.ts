import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../config/logger.js';
import { ensureWebBuild, projectRoot, webBuildStatus } from './web-build.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A project folder with web sources written at `sourcesAt` (seconds since the epoch). */
function project(sourcesAt: number): string {
  const root = mkdtempSync(join(tmpdir(), 'navi-web-build-'));
  roots.push(root);
  mkdirSync(join(root, 'web', 'src', 'components'), { recursive: true });
  mkdirSync(join(root, 'src', 'protocol'), { recursive: true });
  const files = [
    'web/index.html',
    'web/vite.config.ts',
    'web/src/components/App.vue',
    'src/protocol/events.ts',
  ];
  for (const file of files) {
    writeFileSync(join(root, file), '');
    utimesSync(join(root, file), sourcesAt, sourcesAt);
  }
  return root;
}

function build(root: string, at: number): void {
  mkdirSync(join(root, 'web', 'dist'), { recursive: true });
  writeFileSync(join(root, 'web', 'dist', 'index.html'), '');
  utimesSync(join(root, 'web', 'dist', 'index.html'), at, at);
}

describe('webBuildStatus', () => {
  it('finds this checkout by default, whatever the working directory', () => {
    expect(existsSync(join(projectRoot, 'web', 'vite.config.ts'))).toBe(true);
  });

  it('asks for a build when there is none', async () => {
    const status = await webBuildStatus(project(1_000));
    expect(status).toEqual({ stale: true, reason: expect.stringMatching(/^missing/) });
  });

  it('keeps a build that is newer than every source', async () => {
    const root = project(1_000);
    build(root, 2_000);
    expect(await webBuildStatus(root)).toEqual({ stale: false, reason: 'up to date' });
  });

  it('names the source that changed after the build, in the web client or the protocol', async () => {
    const root = project(1_000);
    build(root, 2_000);
    utimesSync(join(root, 'web/src/components/App.vue'), 3_000, 3_000);
    expect((await webBuildStatus(root)).reason).toBe(
      'stale: web/src/components/App.vue changed after the last build',
    );
    utimesSync(join(root, 'web/src/components/App.vue'), 1_000, 1_000);
    utimesSync(join(root, 'src/protocol/events.ts'), 3_000, 3_000);
    expect(await webBuildStatus(root)).toEqual({
      stale: true,
      reason: 'stale: src/protocol/events.ts changed after the last build',
    });
  });
});

describe('ensureWebBuild', () => {
  /** A tiny web client: an index.html loading one script, and an empty Vite config. */
  function tinyClient(script: string): string {
    const root = project(1_000_000);
    writeFileSync(join(root, 'web', 'vite.config.ts'), 'export default {};\n');
    writeFileSync(
      join(root, 'web', 'index.html'),
      '<!doctype html><html><body><script type="module" src="./src/main.js"></script></body></html>\n',
    );
    writeFileSync(join(root, 'web', 'src', 'main.js'), script);
    return root;
  }

  it('builds the client into web/dist', async () => {
    const root = tinyClient('document.body.textContent = "hello from the tiny client";\n');
    const result = await ensureWebBuild({ root, logger: silentLogger() });
    expect(result.built).toBe(true);
    expect(readFileSync(join(root, 'web', 'dist', 'index.html'), 'utf8')).toContain('<script');
    expect((await webBuildStatus(root)).stale).toBe(false);
  }, 60_000);

  it('keeps the previous build and says why when Vite fails', async () => {
    const root = tinyClient('this is not javascript (\n');
    build(root, 1);
    const result = await ensureWebBuild({ root, logger: silentLogger() });
    expect(result.built).toBe(false);
    expect(result.reason).toMatch(/^build failed, previous build kept: vite exited with 1: .+/);
    expect(existsSync(join(root, 'web', 'dist', 'index.html'))).toBe(true);
  }, 60_000);

  it('fails with the command to run when there is no build to fall back on', async () => {
    const root = tinyClient('this is not javascript (\n');
    await expect(ensureWebBuild({ root, logger: silentLogger() })).rejects.toThrow(
      /The web client could not be built \(vite exited with 1: .+\)\. Run "npm run build:web"/,
    );
  }, 60_000);
});
