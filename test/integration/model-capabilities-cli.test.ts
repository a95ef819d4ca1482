/**
 * The default model's capabilities as a person sees them: `navi doctor` prints them (warning
 * when the model cannot call tools), and `navi serve` logs them once it listens, run as real
 * child processes against the fake LLM server.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, type FakeLlm, type FakeModelInfo, startFakeLlm } from '../fake-llm/index.js';
import { tempDir } from '../support/navi.js';
import { naviProcessEnv, runNavi, spawnNavi } from '../support/navi-process.js';
import { plainProfile, profilesDir } from '../support/profiles.js';

const showing = (capabilities: string[], contextLength: number): FakeModelInfo => ({
  show: {
    capabilities,
    model_info: { 'general.architecture': 'llama', 'llama.context_length': contextLength },
  },
});

describe('the default model in navi doctor and navi serve', () => {
  let fake: FakeLlm;
  const dir = tempDir('navi-cli-model-');
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    fake = await startFakeLlm();
    env = {
      DB_PATH: join(dir, 'navi.db'),
      NAVI_DATA_DIR: join(dir, 'data'),
      SESSION_FILES_DIR: join(dir, 'files'),
      TOOLS_DIR: join(dir, 'tools'),
      CONTEXT_PROVIDERS_DIR: join(dir, 'providers'),
      MCP_SERVERS_DIR: join(dir, 'mcp'),
      OLLAMA_HOST: fake.ollamaUrl,
      OLLAMA_DEFAULT_MODEL: 'test-model',
      PROFILES_DIR: profilesDir([plainProfile]),
      DEFAULT_PROFILE: 'plain',
      MCP_SHIPPED_SERVERS: 'false',
    };
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await fake?.close();
  });

  it('doctor prints what the model can do', async () => {
    fake.setModelInfo('test-model', showing(['completion', 'tools', 'thinking'], 40960));
    const run = await runNavi(['doctor'], env, dir);
    expect(run.stdout).toContain(
      '[ok]   model test-model: tools yes, thinking yes, vision no, context 40960 (ollama /api/show)',
    );
    expect(run.code).toBe(0);
  });

  it('doctor warns, without failing, when the model cannot call tools', async () => {
    fake.setModelInfo('test-model', showing(['completion'], 8192));
    const run = await runNavi(['doctor'], env, dir);
    expect(run.stdout).toMatch(
      /\[warn\] model test-model: tools no, thinking no, vision no, context 8192 \(ollama \/api\/show\); it cannot call tools.*choose a model with tool support/,
    );
    expect(run.code).toBe(0);
  });

  it('doctor says why it could not tell', async () => {
    const run = await runNavi(['doctor'], { ...env, OLLAMA_HOST: await closedPortUrl() }, dir);
    expect(run.stdout).toMatch(
      /model test-model: capabilities unknown \(ollama \/api\/show could not tell: Cannot reach the Ollama server/,
    );
  });

  it('serve logs the default model once it listens, warning when it cannot call tools', async () => {
    fake.setModelInfo('test-model', showing(['completion', 'vision'], 8192));
    const port = Number(new URL(await closedPortUrl()).port);
    const serveDir = tempDir('navi-cli-model-serve-');
    const options = { dir: serveDir, port, ollamaUrl: fake.ollamaUrl, extra: { LOG_LEVEL: 'INFO' } };
    const child = await spawnNavi(
      { ...options, stdio: ['ignore', 'pipe', 'pipe'] },
      { ...naviProcessEnv(options), NAVI_DATA_DIR: join(serveDir, 'data') },
    );
    try {
      let output = '';
      child.stdout?.on('data', (d: Buffer) => {
        output += d.toString();
      });
      const wanted = 'ready (ollama at http://127.0.0.1:';
      const caps = 'tools no, thinking no, vision yes, context 8192 (ollama /api/show)';
      const deadline = Date.now() + 20_000;
      while (!output.includes(caps) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const line = output.split('\n').find((l) => l.includes(caps));
      expect(line, output).toBeDefined();
      expect(line).toContain(`"msg":"LLM: ollama test-model — ${wanted}`);
      expect(JSON.parse(line ?? '{}')).toMatchObject({ level: 40, backend: 'ollama' });
      expect(line).toContain('it cannot call tools');
      expect(fake.requests.filter((r) => r.kind === 'show').map((r) => r.body.model)).toEqual(['test-model']);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
