/**
 * Manager behaviour against a fixture stdio server: pagination, the navi-ui envelope,
 * list_changed, size limits, time limits, crashes, kills, frozen servers and restarts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolRegistry } from '../tools/registry.js';
import {
  createManager,
  fixtureLaunch,
  pidAlive,
  tempDir,
  toolContext,
  waitFor,
  writeConfig,
} from './fixtures/harness.js';
import type { McpManager } from './manager.js';

function callTool(registry: ToolRegistry, name: string, params: Record<string, unknown> = {}) {
  const entry = registry.get(name);
  if (!entry) throw new Error(`${name} is not registered`);
  return entry.tool.execute(params, toolContext());
}

describe('a navi-ui style server with limits', () => {
  const tmp = tempDir('fixture');
  let manager: McpManager;
  let registry: ToolRegistry;

  beforeAll(async () => {
    writeConfig(tmp.dir, 'ui.json', {
      name: 'navi-ui',
      ...fixtureLaunch('fixture-server.ts'),
      max_message_bytes: 65_536,
      timeout_ms: 1_500,
    });
    ({ manager, registry } = createManager(tmp.dir, { maxOutputChars: 1_000 }));
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager.close();
    tmp.remove();
  });

  it('follows tools/list pagination', () => {
    const names = registry.list().map((t) => t.tool.name);
    expect(names.sort()).toEqual(
      ['crash', 'freeze', 'grow', 'huge', 'info', 'render_component', 'slow']
        .map((t) => `mcp__navi_ui__${t}`)
        .sort(),
    );
  });

  it('unwraps the navi-ui envelope into output and metadata.ui_component', async () => {
    const ok = await callTool(registry, 'mcp__navi_ui__render_component', {
      component_name: 'card_grid',
      payload: { cards: [{ title: 'A' }] },
    });
    expect(ok).toEqual({
      success: true,
      output: "Component 'card_grid' rendered",
      metadata: { ui_component: { component: 'card_grid', payload: { cards: [{ title: 'A' }] } } },
    });
    const bad = await callTool(registry, 'mcp__navi_ui__render_component', { component_name: 'nope' });
    expect(bad.success).toBe(false);
    expect(bad.output).toBe('Error: unknown component nope');
  });

  it('refreshes the registry on notifications/tools/list_changed', async () => {
    const result = await callTool(registry, 'mcp__navi_ui__grow');
    expect(result.output).toBe('added grown_7');
    await waitFor('grown_7 registered', () => registry.has('mcp__navi_ui__grown_7'));
    expect(manager.server('navi-ui')?.tool_count).toBe(8);
  });

  it('caps text at twice TOOL_MAX_OUTPUT_CHARS while converting', async () => {
    const result = await callTool(registry, 'mcp__navi_ui__huge', { chars: 40_000 });
    expect(result.success).toBe(true);
    expect(result.output.length).toBeLessThan(2_100);
    expect(result.output).toContain('38000 more characters of the MCP result were dropped');
  });

  it('drops a message over max_message_bytes and fails only that call', async () => {
    const pid = manager.server('navi-ui')?.pid;
    const result = await callTool(registry, 'mcp__navi_ui__huge', { chars: 500_000 });
    expect(result.success).toBe(false);
    expect(result.error).toContain('too large');
    expect(result.error).toContain('65536-byte limit');
    expect(manager.server('navi-ui')).toMatchObject({ state: 'ready', pid });
    expect((await callTool(registry, 'mcp__navi_ui__info')).output).toBe(String(pid));
  });

  it('applies the per-server timeout_ms to calls', async () => {
    const result = await callTool(registry, 'mcp__navi_ui__slow', { ms: 10_000 });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/timed out/i);
    expect(manager.server('navi-ui')?.state).toBe('ready');
  });
});

describe('a server that dies or stops answering', () => {
  const tmp = tempDir('crash');
  let manager: McpManager;
  let registry: ToolRegistry;

  beforeAll(async () => {
    writeConfig(tmp.dir, 'crashy.json', { name: 'crashy', ...fixtureLaunch('fixture-server.ts') });
    ({ manager, registry } = createManager(tmp.dir, {
      timing: { backoffInitialMs: 3_000, backoffMaxMs: 3_000, pingIntervalMs: 250, pingTimeoutMs: 750 },
    }));
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager.close();
    tmp.remove();
  });

  it('marks a killed server down, answers with the reason, and restarts it after back-off', async () => {
    const first = manager.server('crashy');
    expect(first?.state).toBe('ready');
    const pid = first?.pid as number;
    process.kill(pid, 'SIGKILL');
    await waitFor('crashy down', () => manager.server('crashy')?.state === 'down');
    expect(pidAlive(pid)).toBe(false);
    const down = await callTool(registry, 'mcp__crashy__info');
    expect(down.success).toBe(false);
    expect(down.error).toMatch(
      /^MCP server crashy is down \(process killed by SIGKILL\); restarting in [1-3]s$/,
    );
    expect(registry.errors()).toEqual([expect.objectContaining({ origin: 'crashy', source: 'mcp' })]);
    await waitFor('crashy back', () => manager.server('crashy')?.state === 'ready');
    const back = manager.server('crashy');
    expect(back?.restarts).toBe(1);
    expect(back?.pid).not.toBe(pid);
    expect((await callTool(registry, 'mcp__crashy__info')).output).toBe(String(back?.pid));
    expect(registry.errors()).toEqual([]);
  });

  it('reports the exit code and stderr of a crash', async () => {
    await callTool(registry, 'mcp__crashy__crash');
    await waitFor('crashy down', () => manager.server('crashy')?.state === 'down');
    const status = manager.server('crashy');
    expect(status?.last_error).toContain('exited with code 3');
    expect(status?.last_error).toContain('fixture: crashing on request');
    await waitFor('crashy back', () => manager.server('crashy')?.state === 'ready');
  });

  it('marks a server that stops answering pings down and replaces its process', async () => {
    const pid = manager.server('crashy')?.pid as number;
    const frozen = callTool(registry, 'mcp__crashy__freeze');
    await waitFor('crashy down', () => manager.server('crashy')?.state === 'down');
    expect(manager.server('crashy')?.last_error).toMatch(/did not answer a ping within 750 ms/);
    const result = await frozen;
    expect(result.success).toBe(false);
    expect(result.error).toContain('went down during the call');
    await waitFor('frozen process gone', () => !pidAlive(pid));
    await waitFor('crashy back', () => manager.server('crashy')?.state === 'ready');
  });

  it('close() leaves no child behind', async () => {
    const pid = manager.server('crashy')?.pid as number;
    expect(pidAlive(pid)).toBe(true);
    await manager.close();
    expect(pidAlive(pid)).toBe(false);
  });
});
