/**
 * `navi service install [--write] [--force]`: a systemd user unit that runs `navi serve` at
 * login (or at boot, with lingering), restarts it when it fails, and reads an optional
 * environment file. Printed by default, so the person sees what would run; `--write` puts it
 * where `systemctl --user` looks (docs/running.md#running-navi-as-a-service).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Settings } from '../config/settings.js';
import { type CliIo, CliRefusal, exitOnRefusal, isHelp } from './cli-io.js';

export const SERVICE_USAGE = `Usage: navi service install [--write] [--force]

Prints a systemd user unit that runs navi serve from this folder. With --write it is saved as
$XDG_CONFIG_HOME/systemd/user/navi.service (~/.config/...); a different file already there is
kept unless --force is given. Settings go in the optional environment file
$XDG_CONFIG_HOME/navi/env (KEY=value lines), or in .env in this folder.`;

export interface ServicePaths {
  /** The node binary, absolute. */
  node: string;
  /** bin/navi.js, absolute. */
  entry: string;
  /** The folder Navi runs in: `.env`, profiles/, tools/… are read from there. */
  workingDirectory: string;
  /** The folder holding systemd/user and navi/env ($XDG_CONFIG_HOME, else ~/.config). */
  configHome: string;
  /** The data folder the unit pins, so the service finds what the command line found. */
  dataDir: string;
  /** PATH for the service: the programs Navi and its tools start are found as in the shell. */
  path: string;
}

/** `$XDG_CONFIG_HOME`, else `~/.config` (HOME from `env`). */
export function configHome(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  if (xdg) return resolve(xdg);
  return join(env.HOME?.trim() || homedir(), '.config');
}

export const unitPath = (paths: Pick<ServicePaths, 'configHome'>) =>
  join(paths.configHome, 'systemd', 'user', 'navi.service');
export const environmentFile = (paths: Pick<ServicePaths, 'configHome'>) =>
  join(paths.configHome, 'navi', 'env');

/**
 * A value for a unit file line. systemd expands `%` specifiers everywhere and `$` variables in
 * ExecStart; a line break would end the line, and so the setting.
 */
function unitValue(value: string, what: string): string {
  if (/[\n\r]/.test(value))
    throw new CliRefusal(`${what} (${JSON.stringify(value)}) holds a line break; a unit file cannot name it`);
  return value.replace(/%/g, '%%');
}

/**
 * The program of ExecStart, quoted so spaces survive. systemd neither expands `$` there nor
 * accepts quotes or backslashes in it at all.
 */
function execProgram(value: string, what: string): string {
  if (/["'\\]/.test(value))
    throw new CliRefusal(
      `${what} (${value}) holds a quote or a backslash, which systemd refuses in a program's path; link it from a plain path and run this command with that node`,
    );
  return `"${unitValue(value, what)}"`;
}

/** One ExecStart argument: quoted, with `\`, `"` and `$` escaped, so spaces and dollars survive. */
function execArgument(value: string, what: string): string {
  return `"${unitValue(value, what).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '$$$$')}"`;
}

/** One `Environment=` assignment, quoted as a whole. */
function environmentLine(name: string, value: string): string {
  return `Environment="${unitValue(`${name}=${value}`, name).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The unit file's text. */
export function serviceUnit(paths: ServicePaths): string {
  return [
    '[Unit]',
    'Description=Navi, a self-hosted personal AI agent',
    `Documentation=file://${unitValue(resolve(dirname(paths.entry), '../docs/running.md'), 'the docs folder').replace(/ /g, '%%20')}`,
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `WorkingDirectory=${unitValue(paths.workingDirectory, 'the working folder')}`,
    // Compiles src/ when it changed since the last build (an update), so the server runs
    // compiled; "-": a failed build only means the server runs its TypeScript through tsx.
    `ExecStartPre=-${execProgram(paths.node, 'the node binary')} ${execArgument(join(dirname(paths.entry), 'navi-build.js'), 'bin/navi-build.js')} --if-stale`,
    `ExecStart=${execProgram(paths.node, 'the node binary')} ${execArgument(paths.entry, 'bin/navi.js')} serve`,
    environmentLine('PATH', paths.path),
    environmentLine('NAVI_DATA_DIR', paths.dataDir),
    // Settings of the person's own (NAVI_HOST, NAVI_API_TOKEN…); "-": the file is optional.
    // Values read from it override the Environment= lines above.
    `EnvironmentFile=-${unitValue(environmentFile(paths), 'the environment file')}`,
    'Restart=on-failure',
    'RestartSec=5',
    // Navi stops its runs and closes its databases on SIGTERM.
    'KillSignal=SIGTERM',
    'TimeoutStopSec=30',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

/** The paths of this Navi: this node, this checkout's bin/navi.js, the current folder. */
export function currentServicePaths(
  settings: Pick<Settings, 'NAVI_DATA_DIR'>,
  env: Readonly<Record<string, string | undefined>>,
): ServicePaths {
  return {
    node: process.execPath,
    entry: resolve(import.meta.dirname, '../../bin/navi.js'),
    workingDirectory: process.cwd(),
    configHome: configHome(env),
    dataDir: resolve(settings.NAVI_DATA_DIR),
    path: env.PATH?.trim() || '/usr/local/bin:/usr/bin:/bin',
  };
}

/** Runs `navi service`; 0 when done, 1 when refused. */
export async function runService(
  settings: Settings,
  args: string[],
  env: Readonly<Record<string, string | undefined>>,
  io: CliIo,
): Promise<number> {
  const [command, ...flags] = args;
  return exitOnRefusal('service', io, async () => {
    if (command === undefined || isHelp(command)) {
      io.stdout.write(`${SERVICE_USAGE}\n`);
      return command === undefined ? 1 : 0;
    }
    if (command !== 'install') throw new CliRefusal(`unknown command "${command}"; run navi service help`);
    const unknown = flags.filter((f) => f !== '--write' && f !== '--force');
    if (unknown.length > 0)
      throw new CliRefusal(`navi service install takes --write and --force only, not ${unknown.join(' ')}`);
    const paths = currentServicePaths(settings, env);
    const unit = serviceUnit(paths);
    if (!flags.includes('--write')) {
      io.stdout.write(unit);
      io.stdout.write(`\n# Save it with: npx navi service install --write\n`);
      return 0;
    }
    const file = unitPath(paths);
    const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    if (current !== undefined && current !== unit && !flags.includes('--force'))
      throw new CliRefusal(
        `${file} exists and differs from this unit (another checkout or an edited copy); run npx navi service install to see the new one, and add --force to replace it`,
      );
    if (current !== unit) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, unit);
    }
    io.stdout.write(
      `${current === unit ? 'Already installed' : 'Wrote'} ${file}\n` +
        `Settings: put KEY=value lines in ${environmentFile(paths)} (optional; chmod 600 it when it holds NAVI_API_TOKEN or a key), or in .env in ${paths.workingDirectory}.\n` +
        'Start it now and at every login:\n' +
        '  systemctl --user daemon-reload && systemctl --user enable --now navi\n' +
        'Keep it running when you are logged out (and start it at boot):\n' +
        '  loginctl enable-linger "$USER"\n' +
        'Its log: journalctl --user -u navi -f\n',
    );
    return 0;
  });
}
