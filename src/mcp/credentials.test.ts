/**
 * The credentials an MCP config carries are registered as secrets when the config is loaded, so
 * a server that echoes its API key or token has it masked like any of Navi's own secrets.
 */
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { testSettings } from '../config/settings.js';
import { ToolRegistry } from '../tools/registry.js';
import { SecretMasker } from '../util/secret-masker.js';
import { fastTiming, tempDir, writeConfig } from './fixtures/harness.js';
import { McpManager } from './manager.js';

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

it('registers env variables named like secrets and credential headers, and nothing else', async () => {
  const folder = tempDir('creds');
  dirs.push(folder);
  writeConfig(folder.dir, 'weather.json', {
    name: 'weather',
    command: process.execPath,
    args: ['-e', ''],
    env: { WEATHER_API_KEY: 'wk-123456789abc', UNITS: 'metric-units-long' },
  });
  writeConfig(folder.dir, 'remote.json', {
    name: 'remote',
    url: 'http://127.0.0.1:1/mcp',
    headers: { Authorization: 'Bearer tok-abcdefghijkl', 'X-Region': 'eu-west-region' },
  });
  const secrets = new SecretMasker();
  const manager = new McpManager({
    registry: new ToolRegistry(),
    settings: testSettings({ MCP_SERVERS_DIR: folder.dir }),
    logger: pino({ level: 'silent' }),
    timing: fastTiming,
    secrets,
  });
  try {
    await manager.reload();
    const masked = secrets.mask(
      'key=wk-123456789abc auth=Bearer tok-abcdefghijkl token=tok-abcdefghijkl units=metric-units-long region=eu-west-region',
    );
    expect(masked).not.toContain('wk-123456789abc');
    expect(masked).not.toContain('tok-abcdefghijkl');
    expect(masked).toContain('[secret hidden: weather.WEATHER_API_KEY]');
    expect(masked).toContain('units=metric-units-long');
    expect(masked).toContain('region=eu-west-region');
  } finally {
    await manager.close();
  }
});
