import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needsProgram } from '../../../test/support/requirements.js';
import { testSettings } from '../../config/settings.js';
import { ScratchDirs } from '../../machine/sandbox/scratch-dirs.js';
import { type CodeExecToolDeps, createCodeExecTool } from './code-exec.js';
import { makeCtx } from './test-support.js';

const scratch = new ScratchDirs();
afterAll(() => scratch.clear());
const ctx = makeCtx();
const tool = (mode: 'off' | 'required' = 'off', extra: Partial<CodeExecToolDeps> = {}) =>
  createCodeExecTool({ settings: testSettings({ NAVI_SANDBOX: mode }), scratch, ...extra });

describe('code_exec without Python', () => {
  it('says Python is missing instead of crashing', async () => {
    const r = await tool('off', { python: 'python3-that-does-not-exist' }).execute({ code: 'print(1)' }, ctx);
    expect(r.success).toBe(false);
    expect(r.output).toBe(
      'Python 3 is not installed ("python3-that-does-not-exist" was not found on PATH); code_exec cannot run. Install python3 or use another tool.',
    );
  });

  it('refuses with NAVI_SANDBOX=required when bwrap is missing', async () => {
    const r = await tool('required', { bwrapPath: '/nonexistent/bwrap' }).execute({ code: 'print(1)' }, ctx);
    expect(r.output).toContain('Refused: NAVI_SANDBOX=required but the bubblewrap sandbox is unavailable');
  });
});

describe.skipIf(!needsProgram('python3', 'code_exec tests'))('code_exec', () => {
  it('runs Python and returns stdout, stderr and the exit code', async () => {
    const r = await tool().execute(
      { code: 'import sys\nprint("hello")\nprint("oops", file=sys.stderr)\nsys.exit(2)' },
      ctx,
    );
    expect(r.success).toBe(false);
    expect(r.output).toBe('exit code 2\n--- stdout ---\nhello\n\n--- stderr ---\noops\n');
    const good = await tool().execute({ code: 'print(6*7)' }, ctx);
    expect(good).toMatchObject({ success: true, output: 'exit code 0\n--- stdout ---\n42\n' });
  });

  it('lists the files the program wrote with absolute paths, kept for share_file', async () => {
    const r = await tool().execute(
      {
        code: 'open("out.csv","w").write("a,b\\n")\nimport os\nos.mkdir("d")\nopen("d/x.txt","w").write("x")',
      },
      ctx,
    );
    const meta = r.metadata as { work_dir: string; files: Array<{ path: string; size: number }> };
    expect(meta.files).toEqual([
      { path: `${meta.work_dir}/out.csv`, size: 4 },
      { path: `${meta.work_dir}/d/x.txt`, size: 1 },
    ]);
    expect(r.output).toContain(`- ${meta.work_dir}/out.csv (4 bytes)`);
    expect(readFileSync(`${meta.work_dir}/out.csv`, 'utf8')).toBe('a,b\n');
    expect(scratch.contains(`${meta.work_dir}/out.csv`)).toBe(true);
  });

  it('runs each program in a fresh folder', async () => {
    const a = await tool().execute({ code: 'open("f","w").write("1")' }, ctx);
    const b = await tool().execute({ code: 'import os; print(os.listdir("."))' }, ctx);
    expect((a.metadata as { work_dir: string }).work_dir).not.toBe(
      (b.metadata as { work_dir: string }).work_dir,
    );
    expect(b.output).toContain("['main.py']");
  });

  it('stops a program that allocates without bound', async () => {
    const r = await tool('off', { memoryMb: 256 }).execute(
      { code: 'x = []\nwhile True:\n    x.append(bytearray(10**7))' },
      ctx,
    );
    expect(r.success).toBe(false);
    expect(r.output).toContain('The program ran out of memory (limit 256 MB).');
    expect(r.output).toContain('MemoryError');
  });

  it('kills a program that prints forever', async () => {
    const r = await tool('off', { maxOutputBytes: 10_000 }).execute(
      { code: 'while True:\n    print("spam" * 100)' },
      ctx,
    );
    expect(r.success).toBe(false);
    expect(r.output).toContain('Output exceeded 10000 bytes; the program was killed.');
    expect(r.output).toContain('more bytes not shown');
  });

  it('kills a program that runs past its timeout', async () => {
    const r = await tool().execute({ code: 'import time\ntime.sleep(300)', timeout_seconds: 1 }, ctx);
    expect(r.output).toContain('Timed out after 1 s; the program was killed.');
    expect(r.metadata).toMatchObject({ timed_out: true });
  });

  it('does not see Navi secrets in its environment', async () => {
    const r = await tool('off', { env: { ...process.env, OPENAI_API_KEY: 'sk-zzz' } }).execute(
      { code: 'import os; print(sorted(os.environ))' },
      ctx,
    );
    expect(r.output).not.toContain('OPENAI_API_KEY');
  });
});

describe.skipIf(
  !needsProgram('python3', 'code_exec sandbox tests') || !needsProgram('bwrap', 'code_exec sandbox tests'),
)('code_exec in bubblewrap', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('can write only its own folder', async () => {
    const r = await tool('required').execute(
      {
        code: [
          'open("mine.txt","w").write("ok")',
          'for p in ["/tmp/navi-escape.txt", "/usr/navi-escape.txt"]:',
          '    try:',
          '        open(p, "w").write("x"); print("WROTE", p)',
          '    except OSError as e:',
          '        print("DENIED", p)',
        ].join('\n'),
      },
      ctx,
    );
    expect(r.metadata).toMatchObject({ sandboxed: true });
    expect(r.output).toContain('DENIED /tmp/navi-escape.txt');
    expect(r.output).toContain('DENIED /usr/navi-escape.txt');
    expect(existsSync('/tmp/navi-escape.txt')).toBe(false);
    expect((r.metadata as { files: unknown[] }).files).toHaveLength(1);
  });

  it("never reaches the host's loopback, whatever the profile says", async () => {
    const code = `import socket\ntry:\n    socket.create_connection(("127.0.0.1", ${port}), 2).close(); print("CONNECTED")\nexcept OSError:\n    print("NO-NETWORK")`;
    for (const allowed of [false, true]) {
      const r = await tool('required', { networkAllowed: () => allowed }).execute({ code }, ctx);
      expect(r.output, `network_access ${allowed}`).toContain('NO-NETWORK');
    }
  });
});
