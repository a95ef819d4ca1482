/**
 * What sandboxed `terminal` and `code_exec` see of the file system, with real bubblewrap: a fake
 * home full of credentials (outside /tmp, which the terminal replaces with an empty one) and an
 * allowed root elsewhere.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needsProgram } from '../../../test/support/requirements.js';
import { type SettingName, testSettings } from '../../config/settings.js';
import {
  credentialPaths,
  HOME_CREDENTIAL_PATHS,
  homeFolders,
} from '../../machine/sandbox/credential-paths.js';
import { ScratchDirs } from '../../machine/sandbox/scratch-dirs.js';
import { testGuard } from '../test-helpers.js';
import { createCodeExecTool } from './code-exec.js';
import { createTerminalTool } from './terminal.js';
import { makeCtx } from './test-support.js';

const planted: Record<string, string> = {
  '.ssh/id_ed25519': 'SSH-SECRET',
  '.aws/credentials': 'AWS-SECRET',
  '.netrc': 'NETRC-SECRET',
  '.git-credentials': 'GITCRED-SECRET',
  '.config/gh/hosts.yml': 'GH-SECRET',
  '.docker/config.json': 'DOCKER-SECRET',
  '.mozilla/firefox/p.default/key4.db': 'MOZILLA-SECRET',
  '.config/google-chrome/Default/Login Data': 'CHROME-SECRET',
};

/** The first line of the host's /etc/shadow when this user can read it (root), to prove it is hidden. */
function shadowLine(): string | undefined {
  try {
    return readFileSync('/etc/shadow', 'utf8').split('\n')[0] || undefined;
  } catch {
    return undefined;
  }
}

describe('credential paths', () => {
  it('lists the credentials of every home from passwd and of the extra home', () => {
    const dir = mkdtempSync(join('/tmp', 'navi-passwd-'));
    try {
      const passwd = join(dir, 'passwd');
      writeFileSync(
        passwd,
        'root:x:0:0:root:/root:/bin/bash\nsvc:x:9:9::/:/usr/sbin/nologin\nme:x:1000:1000::/home/me:/bin/bash\n',
      );
      const homes = homeFolders(['/srv/navi-home', undefined, 'relative'], passwd);
      expect(homes.sort()).toEqual(['/home/me', '/root', '/srv/navi-home']);
      const paths = credentialPaths(['/home/me']);
      expect(paths).toContain('/home/me/.ssh');
      expect(paths).toContain('/home/me/.config/gcloud');
      expect(paths).toContain('/etc/shadow');
      expect(paths.filter((p) => p.startsWith('/home/me/'))).toHaveLength(HOME_CREDENTIAL_PATHS.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(
  !needsProgram('bwrap', 'sandbox file system tests') ||
    !needsProgram('python3', 'sandbox file system tests'),
)('sandbox file system', () => {
  let home: string;
  let root: string;
  const scratch = new ScratchDirs();
  beforeAll(() => {
    // /var/tmp, not /tmp: the terminal's sandbox gets a fresh /tmp, which would hide them anyway.
    home = mkdtempSync('/var/tmp/navi-home-');
    root = mkdtempSync('/var/tmp/navi-root-');
    for (const [rel, content] of Object.entries(planted)) {
      mkdirSync(dirname(join(home, rel)), { recursive: true });
      writeFileSync(join(home, rel), content);
    }
    writeFileSync(join(home, 'notes.txt'), 'PLAIN-HOME');
    writeFileSync(join(root, 'data.txt'), 'ROOT-DATA');
  });
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
    scratch.clear();
  });

  const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home });
  const settings = (allowed: string, extra: Partial<Record<SettingName, string>> = {}) =>
    testSettings({
      NAVI_SANDBOX: 'required',
      FS_ALLOWED_PATHS: allowed,
      DB_PATH: join(root, 'navi.db'),
      SESSION_FILES_DIR: join(root, 'files'),
      ...extra,
    });
  const terminal = (allowed: string) =>
    createTerminalTool({ settings: settings(allowed), guard: testGuard(settings(allowed)), env: env() });
  const codeExec = (allowed: string) =>
    createCodeExecTool({ settings: settings(allowed), scratch, env: env() });

  const readAll = Object.keys(planted)
    .map((rel) => `cat "$HOME/${rel}" 2>&1`)
    .join('; ');
  const listAll = ['.ssh', '.aws', '.config/gh', '.mozilla', '.docker']
    .map((d) => `ls -A "$HOME/${d}" 2>&1`)
    .join('; ');

  function expectNoSecrets(output: string) {
    for (const secret of Object.values(planted)) expect(output).not.toContain(secret);
    for (const name of ['id_ed25519', 'credentials', 'hosts.yml', 'p.default', 'config.json'])
      expect(output).not.toMatch(new RegExp(`^${name.replace('.', '\\.')}$`, 'm'));
    const shadow = shadowLine();
    if (shadow) expect(output).not.toContain(shadow);
  }

  it('shows only the allowed root, not the home, with FS_ALLOWED_PATHS restricted (terminal)', async () => {
    const r = await terminal(root).execute(
      {
        command: `${readAll}; ${listAll}; cat "$HOME/notes.txt" /etc/shadow 2>&1; ls /root 2>&1; cat ${root}/data.txt; echo new > ${root}/new.txt; echo END`,
        cwd: root,
      },
      makeCtx(),
    );
    expect(r.metadata).toMatchObject({ sandboxed: true });
    expect(r.output).toContain('END');
    expectNoSecrets(r.output);
    expect(r.output).not.toContain('PLAIN-HOME');
    expect(r.output).toContain(`${home}/notes.txt: No such file or directory`);
    expect(r.output).toContain('ROOT-DATA');
    expect(readFileSync(join(root, 'new.txt'), 'utf8')).toBe('new\n');
  });

  it('still runs programs from the system folders (python, ls, ip) with the file system restricted', async () => {
    const r = await terminal(root).execute(
      { command: 'python3 -c "print(6*7)"; ls /usr/bin | head -1' },
      makeCtx(),
    );
    expect(r.success).toBe(true);
    expect(r.output).toContain('42');
  });

  it('hides the credentials of every home but shows the rest read-only with FS_ALLOWED_PATHS=* (terminal)', async () => {
    const r = await terminal('*').execute(
      {
        command: `${readAll}; ${listAll}; cat "$HOME/notes.txt" /etc/shadow; touch "$HOME/x" 2>&1; echo END`,
      },
      makeCtx(),
    );
    expect(r.output).toContain('END');
    expectNoSecrets(r.output);
    // The home itself is visible: only its credentials are hidden.
    expect(r.output).toContain('PLAIN-HOME');
    expect(r.output).toContain('Read-only file system');
    expect(existsSync(join(home, 'x'))).toBe(false);
  });

  it('hides credentials even when the home itself is the allowed root', async () => {
    const r = await terminal(home).execute(
      { command: `${readAll}; ${listAll}; cat "$HOME/notes.txt"` },
      makeCtx(),
    );
    expectNoSecrets(r.output);
    expect(r.output).toContain('PLAIN-HOME');
  });

  it("hides the vault's key file, database and audit log from terminal and code_exec", async () => {
    const vault = {
      GNEXUS_KEY_FILE: join(root, 'vault.key'),
      GNEXUS_VAULT_PATH: join(root, 'vault.db'),
      GNEXUS_AUDIT_LOG: join(root, 'vault-audit.jsonl'),
    };
    for (const [name, content] of [
      ['vault.key', 'VAULT-KEY-MATERIAL'],
      ['vault.key.new', 'VAULT-NEW-KEY'],
      ['vault.db', 'VAULT-DATABASE'],
      ['vault-audit.jsonl', 'VAULT-AUDIT'],
    ] as const)
      writeFileSync(join(root, name), content);
    const files = ['vault.key', 'vault.key.new', 'vault.db', 'vault-audit.jsonl'].map((n) => join(root, n));
    const s = settings(root, vault);
    const shell = await createTerminalTool({ settings: s, guard: testGuard(s), env: env() }).execute(
      { command: `cat ${files.join(' ')} 2>&1; echo END`, cwd: root },
      makeCtx(),
    );
    const python = await createCodeExecTool({ settings: s, scratch, env: env() }).execute(
      { code: pythonReads(files) },
      makeCtx(),
    );
    for (const r of [shell, python]) {
      expect(r.metadata).toMatchObject({ sandboxed: true });
      for (const secret of ['VAULT-KEY-MATERIAL', 'VAULT-NEW-KEY', 'VAULT-DATABASE', 'VAULT-AUDIT'])
        expect(r.output).not.toContain(secret);
    }
    expect(shell.output).toContain('END');
  });

  const pythonReads = (paths: string[]) =>
    [
      'import os',
      `for p in ${JSON.stringify(paths)}:`,
      '    try:',
      '        if os.path.isdir(p): print(p, "LIST", os.listdir(p))',
      '        else: print(p, "READ", open(p).read())',
      '    except OSError as e:',
      '        print(p, "ERROR", e.strerror)',
      `for p in ${JSON.stringify([join(root, 'py-new.txt'), '/tmp/navi-escape-probe', '/navi-escape-probe'])}:`,
      '    try:',
      '        open(p, "w").write("x"); print("WROTE", p)',
      '    except OSError as e:',
      '        print("READ-ONLY", p, e.strerror)',
    ].join('\n');
  const probePaths = () => [
    ...Object.keys(planted).map((rel) => join(home, rel)),
    join(home, '.ssh'),
    join(home, '.mozilla'),
    join(home, 'notes.txt'),
    join(root, 'data.txt'),
    '/etc/shadow',
  ];

  it('shows code_exec the allowed root read-only and nothing of the home', async () => {
    const r = await codeExec(root).execute({ code: pythonReads(probePaths()) }, makeCtx());
    expect(r.metadata).toMatchObject({ sandboxed: true });
    expectNoSecrets(r.output);
    expect(r.output).not.toContain('PLAIN-HOME');
    expect(r.output).toContain(`${join(root, 'data.txt')} READ ROOT-DATA`);
    // Nothing is writable but its own folder: not the root, not /tmp, not the sandbox's own /.
    expect(r.output).not.toContain('WROTE');
    expect(r.output).toContain(`READ-ONLY ${join(root, 'py-new.txt')}`);
    expect(r.output).toContain('READ-ONLY /tmp/navi-escape-probe');
    expect(r.output).toContain('READ-ONLY /navi-escape-probe');
    expect(existsSync(join(root, 'py-new.txt'))).toBe(false);
  });

  it('hides the credentials from code_exec with FS_ALLOWED_PATHS=*', async () => {
    const r = await codeExec('*').execute({ code: pythonReads(probePaths()) }, makeCtx());
    expectNoSecrets(r.output);
    expect(r.output).toContain(`${join(home, 'notes.txt')} READ PLAIN-HOME`);
    expect(r.output).toContain(`${join(home, '.ssh')} LIST []`);
  });
});
