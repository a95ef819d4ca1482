/**
 * `navi service install`: the systemd user unit it prints and writes, under a temporary HOME and
 * XDG_CONFIG_HOME. When `systemd-analyze` is installed it checks each unit as systemd would
 * read it (it refuses a command that is not an executable, so a path mangled by quoting fails).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serviceUnit } from '../../src/cli/service.js';
import { expectCliRefusal } from '../support/cli-refusal.js';
import { repoRoot, tempDir } from '../support/navi.js';
import { type NaviRun, runNavi } from '../support/navi-process.js';
import { needsProgram } from '../support/requirements.js';

// Without it the units' fields are still checked; the skipped part is said, and CI requires it.
const hasAnalyze = needsProgram('systemd-analyze', 'checking the unit as systemd reads it (package systemd)');

/** `systemd-analyze verify` on `unit` saved as navi.service; '' when it finds nothing wrong. */
function verify(unit: string): string {
  const dir = tempDir('navi-unit-');
  const file = join(dir, 'navi.service');
  writeFileSync(file, unit);
  const run = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
  return run.status === 0 ? '' : `${run.stderr}${run.stdout}`.trim() || `exit ${run.status}`;
}

function field(unit: string, name: string): string[] {
  return unit
    .split('\n')
    .filter((line) => line.startsWith(`${name}=`))
    .map((line) => line.slice(name.length + 1));
}

const expectRefusal = (run: NaviRun, ...parts: string[]) => expectCliRefusal(run, 'service', ...parts);

describe('navi service install', () => {
  const home = tempDir('navi-service-home-');
  const config = join(home, 'xdg-config');
  const work = tempDir('navi-service-work-');
  const env = { HOME: home, XDG_CONFIG_HOME: config };
  const unitFile = join(config, 'systemd', 'user', 'navi.service');

  it('prints a unit that runs this node on bin/navi.js from the working folder, and writes nothing', async () => {
    const run = await runNavi(['service', 'install'], env, work);
    expect(run.code, run.stderr).toBe(0);
    const unit = run.stdout;
    expect(field(unit, 'ExecStart')).toEqual([
      `"${process.execPath}" "${join(repoRoot, 'bin', 'navi.js')}" serve`,
    ]);
    // The build is brought up to date before each start; a failed build does not stop the start.
    expect(field(unit, 'ExecStartPre')).toEqual([
      `-"${process.execPath}" "${join(repoRoot, 'bin', 'navi-build.js')}" --if-stale`,
    ]);
    expect(field(unit, 'WorkingDirectory')).toEqual([work]);
    expect(field(unit, 'Restart')).toEqual(['on-failure']);
    expect(field(unit, 'EnvironmentFile')).toEqual([`-${join(config, 'navi', 'env')}`]);
    expect(field(unit, 'Environment')).toContain(`"NAVI_DATA_DIR=${work}"`);
    expect(field(unit, 'WantedBy')).toEqual(['default.target']);
    expect(unit).toContain('npx navi service install --write');
    expect(existsSync(unitFile)).toBe(false);
    if (hasAnalyze) expect(verify(unit.replace(/^# .*$/m, ''))).toBe('');
  }, 60_000);

  it('--write saves it under XDG_CONFIG_HOME and prints how to enable it; again, it is already there', async () => {
    const run = await runNavi(['service', 'install', '--write'], env, work);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Wrote ${unitFile}`);
    expect(run.stdout).toContain('systemctl --user daemon-reload && systemctl --user enable --now navi');
    expect(run.stdout).toContain('loginctl enable-linger');
    const written = readFileSync(unitFile, 'utf8');
    expect(field(written, 'WorkingDirectory')).toEqual([work]);
    if (hasAnalyze) expect(verify(written)).toBe('');

    const again = await runNavi(['service', 'install', '--write'], env, work);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Already installed ${unitFile}`);
  }, 60_000);

  it('refuses to replace a different unit without --force, and replaces it with', async () => {
    const other = tempDir('navi-service-other-');
    const refused = await runNavi(['service', 'install', '--write'], env, other);
    expectRefusal(refused, `${unitFile} exists and differs`, '--force');
    expect(field(readFileSync(unitFile, 'utf8'), 'WorkingDirectory')).toEqual([work]);
    const forced = await runNavi(['service', 'install', '--write', '--force'], env, other);
    expect(forced.code, forced.stderr).toBe(0);
    expect(field(readFileSync(unitFile, 'utf8'), 'WorkingDirectory')).toEqual([other]);
  }, 60_000);

  it('falls back to ~/.config without XDG_CONFIG_HOME', async () => {
    const run = await runNavi(['service', 'install', '--write'], { HOME: home }, work);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(home, '.config', 'systemd', 'user', 'navi.service'))).toBe(true);
  }, 60_000);

  it('refuses unknown commands and flags, and explains itself', async () => {
    const help = await runNavi(['service', 'help'], env, work);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: navi service install');
    expect((await runNavi(['service'], env, work)).code).toBe(1);
    expectRefusal(await runNavi(['service', 'uninstall'], env, work), 'unknown command "uninstall"');
    expectRefusal(await runNavi(['service', 'install', '--wirte'], env, work), 'not --wirte');
    expect((await runNavi(['help'], env, work)).stdout).toContain('service');
  }, 60_000);
});

describe('the unit file', () => {
  it('keeps paths with spaces, quotes, percent signs and dollars as they are', () => {
    const base = tempDir('navi-odd-');
    // systemd takes spaces, `%` and `$` in a program's path (not quotes or backslashes).
    const programs = join(base, 'node 100% $HOME');
    mkdirSync(programs);
    const node = join(programs, 'node');
    symlinkSync(process.execPath, node);
    const odd = join(base, 'my "navi" 100% $HOME \\ here');
    mkdirSync(odd);
    const unit = serviceUnit({
      node,
      entry: join(odd, 'bin', 'navi.js'),
      workingDirectory: odd,
      configHome: join(odd, 'config'),
      dataDir: join(odd, 'data'),
      path: '/usr/bin:/bin',
    });
    const [exec] = field(unit, 'ExecStart');
    expect(exec).toBe(
      `"${programs.replace('%', '%%')}/node" "${base}/my \\"navi\\" 100%% $$HOME \\\\ here/bin/navi.js" serve`,
    );
    expect(field(unit, 'WorkingDirectory')).toEqual([odd.replace('%', '%%')]);
    // systemd finds the program only if it reads the quoted path back exactly.
    if (hasAnalyze) expect(verify(unit)).toBe('');
  });

  it('refuses a node whose path systemd cannot run', () => {
    expect(() =>
      serviceUnit({
        node: "/opt/it's/node",
        entry: '/x/bin/navi.js',
        workingDirectory: '/tmp',
        configHome: '/tmp/c',
        dataDir: '/tmp/d',
        path: '/usr/bin',
      }),
    ).toThrow(/holds a quote or a backslash, which systemd refuses/);
  });

  it('refuses a path with a line break, which would end the setting', () => {
    expect(() =>
      serviceUnit({
        node: process.execPath,
        entry: '/x/bin/navi.js',
        workingDirectory: '/tmp/a\nExecStartPre=/bin/rm -rf /',
        configHome: '/tmp/c',
        dataDir: '/tmp/d',
        path: '/usr/bin',
      }),
    ).toThrow(/holds a line break; a unit file cannot name it/);
  });
});
