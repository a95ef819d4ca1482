/**
 * `system_info`: what the machine Navi runs on is and how it is doing (OS, kernel, CPU, memory,
 * disk space, uptime, load, Node.js), so the agent can answer "how much space is left?" or plan
 * a build without running commands. It reads nothing the agent names and reveals no secrets.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Settings } from '../../config/settings.js';
import { type SystemInfo, systemInfo } from '../../machine/system/system-info.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { ok } from '../types.js';

export interface SystemInfoToolDeps {
  settings: Pick<Settings, 'DB_PATH' | 'SESSION_FILES_DIR' | 'FS_ALLOWED_PATHS'>;
  /** Base of relative settings paths (Navi's working folder). */
  cwd?: string;
}

/** Allowed folders whose disk space is listed, at most. */
const MAX_ROOTS = 20;

const parameters = z.strictObject({});

export function createSystemInfoTool(deps: SystemInfoToolDeps): TypedTool<typeof parameters> {
  const cwd = deps.cwd ?? process.cwd();
  const { settings } = deps;
  const roots = settings.FS_ALLOWED_PATHS.includes('*')
    ? ['/']
    : settings.FS_ALLOWED_PATHS.slice(0, MAX_ROOTS);
  const folders = [
    { label: 'data folder', path: resolve(cwd, settings.DB_PATH, '..') },
    { label: 'shared files', path: resolve(cwd, settings.SESSION_FILES_DIR) },
    ...roots.map((root) => ({
      label: root === '/' ? 'allowed folders (*)' : 'allowed folder',
      path: resolve(cwd, root),
    })),
  ];

  return defineTool({
    name: 'system_info',
    group: 'meta',
    risk: { reads: true },
    description:
      'Describe the machine Navi runs on: OS and kernel, hostname, CPU model and count, memory, ' +
      'disk space of the data folder and the allowed folders, uptime, load averages and the Node.js version. ' +
      'No parameters.',
    parameters,
    async execute() {
      const info = await systemInfo(folders);
      return ok(describe(info), { ...info });
    },
  });
}

function describe(info: SystemInfo): string {
  const { memory } = info;
  const lines = [
    `OS: ${info.os.name} (${info.os.platform}, ${info.os.arch})`,
    `Kernel: ${info.os.type} ${info.kernel.release} (${info.kernel.version})`,
    `Hostname: ${info.hostname}`,
    `CPU: ${info.cpu.count} × ${info.cpu.model}`,
    `Memory: ${bytes(memory.totalBytes)} total, ${bytes(memory.availableBytes)} available`,
    'Disk space:',
    ...info.disks.map(
      (d) =>
        `  ${d.folders.map((f) => `${f.label} ${f.path}`).join(', ')}: ${bytes(d.totalBytes)} total, ` +
        `${bytes(d.availableBytes)} available (${d.usedPercent}% used)`,
    ),
    ...info.diskErrors.map((e) => `  ${e.label} ${e.path}: not readable (${e.error})`),
    `Uptime: ${duration(info.uptimeSeconds)}`,
    `Load average: ${info.loadAverage.map((n) => n.toFixed(2)).join(', ')} (1, 5, 15 min; ${info.cpu.count} CPUs)`,
    `Node.js: ${info.node.version}; Navi running for ${duration(info.node.naviUptimeSeconds)}`,
  ];
  return lines.join('\n');
}

/** Binary units, as `df -h` and `free -h` show them. */
function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

function duration(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days > 0) return `${days} d ${hours} h ${minutes} min`;
  if (hours > 0) return `${hours} h ${minutes} min`;
  return minutes > 0 ? `${minutes} min ${seconds % 60} s` : `${seconds} s`;
}
