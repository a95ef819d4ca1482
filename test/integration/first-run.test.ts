/**
 * The first run from a terminal: `navi serve` as a real process with no model reachable starts
 * anyway and logs one message with the ways forward; with a model reachable it logs none.
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

describe('navi serve on a first run', () => {
  it('with no model reachable, serves anyway and logs one message with the three ways forward', async () => {
    const nowhere = await closedPortUrl();
    const started = await serve(nowhere);
    child = started.child;
    const advice = await waitForLine(started.lines, (l) => l.msg.includes('No language model is ready'));
    expect(advice.level).toBe(WARN);
    expect(advice.msg).toContain(nowhere);
    expect(advice.msg).toContain('ollama pull test-model');
    expect(advice.msg).toMatch(/OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL/);
    expect(advice.msg).toContain(`navi llamacpp install\`, then \`navi model pull ${CATALOG[0]?.alias}\``);
    expect(advice.msg).toContain(`Or open ${started.url} in a browser`);
    expect(started.lines().filter((l) => l.msg.includes('No language model is ready'))).toHaveLength(1);
    // It is serving: the setup screen's status says what is missing.
    const status = (await (await fetch(`${started.url}/llm/status`)).json()) as { needs_setup: boolean };
    expect(status.needs_setup).toBe(true);
  });

  it('with a model reachable, logs no such message', async () => {
    fake = await startFakeLlm();
    const started = await serve(fake.ollamaUrl);
    child = started.child;
    await waitForLine(started.lines, (l) =>
      l.msg.includes('first-run check: the default LLM backend is ready'),
    );
    expect(started.lines().some((l) => l.msg.includes('No language model is ready'))).toBe(false);
  });
});
