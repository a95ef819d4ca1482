/**
 * The LLM line of `navi serve`, run as a real process: with no model reachable it starts anyway
 * and logs one line saying which backend and model did not answer and why, with the ways
 * forward; with a model reachable the one line says it is ready.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CATALOG } from '../../src/llm/models/catalog.js';
import { closedPortUrl, type FakeLlm, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { spawnNavi } from '../support/navi-process.js';

interface LogLine {
  level: number;
  msg: string;
}

const WARN = 40;

/** Starts `navi serve` and collects its JSON log lines. */
async function serve(
  ollamaUrl: string,
): Promise<{ child: ChildProcess; lines: () => LogLine[]; url: string }> {
  const dir = tempDir('navi-first-run-');
  dirs.push(dir);
  const port = Number(new URL(await closedPortUrl()).port);
  let output = '';
  const child = await spawnNavi({
    dir,
    port,
    ollamaUrl,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Never the person's own data folder (its settings file would choose the backend).
    extra: { LOG_LEVEL: 'DEBUG', NAVI_DATA_DIR: join(dir, 'data') },
  });
  const collect = (d: Buffer) => {
    output += d.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const lines = () =>
    output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);
  return { child, lines, url: `http://127.0.0.1:${port}` };
}

/** Resolves with the first line `test` accepts; gives up (failing) after 20 s. */
async function waitForLine(lines: () => LogLine[], test: (l: LogLine) => boolean): Promise<LogLine> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const found = lines().find(test);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `no such log line; got:\n${lines()
      .map((l) => l.msg)
      .join('\n')}`,
  );
}

let child: ChildProcess | undefined;
let fake: FakeLlm | undefined;
const dirs: string[] = [];
afterEach(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  child = undefined;
  await fake?.close();
  fake = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// Starting a server may take up to spawnNavi's own 60 s on a loaded machine.
describe('navi serve on a first run', { timeout: 90_000 }, () => {
  it('with no model reachable, serves anyway and logs one line saying why, with the three ways forward', async () => {
    const nowhere = await closedPortUrl();
    const started = await serve(nowhere);
    child = started.child;
    const advice = await waitForLine(started.lines, (l) => l.msg.startsWith('LLM: '));
    expect(advice.level).toBe(WARN);
    const [first = '', ...rest] = advice.msg.split('\n');
    expect(first).toMatch(/^LLM: ollama test-model — not ready: Cannot reach the Ollama server at /);
    expect(first).toContain(nowhere);
    expect(first).toMatch(/Run npx navi doctor to check every part of Navi\.$/);
    const ways = rest.join('\n');
    expect(ways).toContain('No language model is ready');
    expect(ways).toContain('ollama pull test-model');
    expect(ways).toMatch(/OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL/);
    expect(ways).toContain(`npx navi llamacpp install, then npx navi model pull ${CATALOG[0]?.alias}`);
    expect(ways).toContain(`Or open ${started.url} in a browser`);
    // Plain text a person reads in a terminal: commands are not wrapped in backticks.
    expect(advice.msg).not.toContain('`');
    expect(started.lines().filter((l) => l.msg.startsWith('LLM: '))).toHaveLength(1);
    // It is serving: the setup screen's status says what is missing.
    const status = (await (await fetch(`${started.url}/llm/status`)).json()) as { needs_setup: boolean };
    expect(status.needs_setup).toBe(true);
  });

  it('with a model reachable, logs one line saying it is ready, and no first-run advice', async () => {
    fake = await startFakeLlm();
    const started = await serve(fake.ollamaUrl);
    child = started.child;
    const line = await waitForLine(started.lines, (l) => l.msg.startsWith('LLM: '));
    expect(line.msg).toMatch(
      /^LLM: ollama test-model — ready \(ollama at http:\/\/127\.0\.0\.1:\d+: model test-model is available\); /,
    );
    expect(started.lines().some((l) => l.msg.includes('No language model is ready'))).toBe(false);
    expect(started.lines().filter((l) => l.msg.startsWith('LLM: '))).toHaveLength(1);
  });
});
