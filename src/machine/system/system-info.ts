/**
 * A description of the machine Navi runs on: operating system, kernel, CPU, memory, disk space
 * where Navi keeps its data and where its file tools may work, uptime and load. Only facts about
 * the machine: no environment variables, no user accounts, no home folders, nothing a process
 * keeps in memory.
 */
import { readFile, stat, statfs } from 'node:fs/promises';
import os from 'node:os';
import { dirname, resolve } from 'node:path';

export interface DiskUsage {
  /** The folders on this file system, as asked for (one line per file system). */
  folders: { label: string; path: string }[];
  totalBytes: number;
  /** Free for an unprivileged user (`df`'s "Avail"). */
  availableBytes: number;
  usedBytes: number;
  usedPercent: number;
}

export interface SystemInfo {
  os: { name: string; type: string; platform: string; arch: string };
  kernel: { release: string; version: string };
  hostname: string;
  cpu: { model: string; count: number };
  /** `availableBytes`: what new programs can still get, reclaimable caches included. */
  memory: { totalBytes: number; availableBytes: number };
  disks: DiskUsage[];
  /** Folders whose file system could not be read, with why. */
  diskErrors: { label: string; path: string; error: string }[];
  uptimeSeconds: number;
  /** 1, 5 and 15 minutes (all 0 where the system keeps none). */
  loadAverage: [number, number, number];
  node: { version: string; naviUptimeSeconds: number };
}

/** Gathers the facts; `folders` are the places whose disk space matters (each may not exist yet). */
export async function systemInfo(folders: readonly { label: string; path: string }[]): Promise<SystemInfo> {
  const cpus = os.cpus();
  const [load1 = 0, load5 = 0, load15 = 0] = os.loadavg();
  const [name, available, disks] = await Promise.all([osName(), memAvailable(), diskUsage(folders)]);
  return {
    os: { name, type: os.type(), platform: os.platform(), arch: os.arch() },
    kernel: { release: os.release(), version: os.version() },
    hostname: os.hostname(),
    cpu: {
      model: cpus[0]?.model.trim() || 'unknown',
      count: os.availableParallelism?.() ?? cpus.length,
    },
    memory: { totalBytes: os.totalmem(), availableBytes: available ?? os.freemem() },
    disks: disks.usage,
    diskErrors: disks.errors,
    uptimeSeconds: Math.round(os.uptime()),
    loadAverage: [load1, load5, load15],
    node: { version: process.version, naviUptimeSeconds: Math.round(process.uptime()) },
  };
}

/** The distribution's own name (`/etc/os-release`), or the kernel's type where there is none. */
async function osName(): Promise<string> {
  try {
    const text = await readFile('/etc/os-release', 'utf8');
    const match = /^PRETTY_NAME=(.*)$/m.exec(text);
    const value = match?.[1]?.trim().replace(/^"(.*)"$/, '$1');
    if (value) return value;
  } catch {
    // not Linux, or a minimal system
  }
  return `${os.type()} ${os.release()}`;
}

/** Linux's estimate of memory available to new programs (free alone ignores reclaimable caches). */
async function memAvailable(): Promise<number | undefined> {
  try {
    const match = /^MemAvailable:\s+(\d+) kB$/m.exec(await readFile('/proc/meminfo', 'utf8'));
    return match?.[1] ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** One entry per file system holding the folders; a missing folder counts where it would be created. */
async function diskUsage(folders: readonly { label: string; path: string }[]): Promise<{
  usage: DiskUsage[];
  errors: SystemInfo['diskErrors'];
}> {
  const byDevice = new Map<number, DiskUsage>();
  const errors: SystemInfo['diskErrors'] = [];
  for (const folder of folders) {
    const path = resolve(folder.path);
    try {
      const existing = await nearestExisting(path);
      const device = (await stat(existing)).dev;
      const known = byDevice.get(device);
      if (known) {
        known.folders.push({ label: folder.label, path });
        continue;
      }
      const fs = await statfs(existing);
      const total = fs.blocks * fs.bsize;
      const used = (fs.blocks - fs.bfree) * fs.bsize;
      const available = fs.bavail * fs.bsize;
      byDevice.set(device, {
        folders: [{ label: folder.label, path }],
        totalBytes: total,
        availableBytes: available,
        usedBytes: used,
        // As df computes it: used against what users could have (used + available).
        usedPercent: used + available > 0 ? Math.round((used / (used + available)) * 100) : 0,
      });
    } catch (err) {
      errors.push({ label: folder.label, path, error: (err as Error).message });
    }
  }
  return { usage: [...byDevice.values()], errors };
}

async function nearestExisting(path: string): Promise<string> {
  for (let at = path; ; at = dirname(at)) {
    try {
      await stat(at);
      return at;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || at === dirname(at)) throw err;
    }
  }
}
