/**
 * navi-3d as a process, started the way Navi starts it (in the program folder, with NAVI_CWD
 * naming Navi's working folder), spoken to over MCP: its tools, the files in its results with
 * their names in `_meta`, the session id Navi sends, and its Xvfb going with it.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, EmbeddedResource, ImageContent } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processGone } from '../../../test/support/processes.js';
import { needsProgram } from '../../../test/support/requirements.js';
import { FILE_NAME_META_KEY, SESSION_META_KEY } from '../../protocol/mcp-meta.js';

const repoRoot = resolve(import.meta.dirname, '../../..');
const MAIN = ['--import', 'tsx', join('src', 'servers', 'navi-3d', 'main.ts')];
const SESSION = '0d9c7f4e-2b1a-4c3d-9e8f-7a6b5c4d3e2f';

let naviCwd: string;
beforeAll(() => {
  naviCwd = mkdtempSync(join(tmpdir(), 'navi-3d-main-'));
  // SESSION_FILES_DIR is relative: it must mean Navi's folder, not the program folder.
  mkdirSync(join(naviCwd, 'files', SESSION), { recursive: true });
  writeFileSync(join(naviCwd, 'files', SESSION, 'parts.scad'), 'module plate() { cube([30, 20, 2]); }\n');
});
afterAll(() => rmSync(naviCwd, { recursive: true, force: true }));

async function connect(env: Record<string, string> = {}): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: MAIN,
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NAVI_CWD: naviCwd,
      SESSION_FILES_DIR: 'files',
      ...env,
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(transport);
  return { client, pid: transport.pid! };
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** The processes whose parent is `pid`, with their command names. */
function children(pid: number): Array<{ pid: number; name: string }> {
  const found: Array<{ pid: number; name: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const match = /^\d+ \((.*)\) (\S) (\d+)/.exec(stat);
      if (match && Number(match[3]) === pid && match[2] !== 'Z')
        found.push({ pid: Number(entry), name: match[1]! });
    } catch {
      // The process ended while the list was read.
    }
  }
  return found;
}

const call = (name: string, args: Record<string, unknown>, session: string | null = SESSION) => ({
  name,
  arguments: args,
  ...(session ? { _meta: { [SESSION_META_KEY]: session } } : {}),
});

describe('navi-3d as a process', () => {
  it('starts without OpenSCAD or Xvfb, offers its three tools, and says what to install', async () => {
    const { client } = await connect({ OPENSCAD_PATH: '/nowhere/openscad', XVFB_PATH: '/nowhere/Xvfb' });
    try {
      expect(client.getServerVersion()?.name).toBe('navi-3d');
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['compile_scad', 'lint_scad', 'render_stl']);
      for (const tool of tools) expect(tool.description).toMatch(/lint|compile|render/i);
      const compiled = (await client.callTool(call('compile_scad', { code: 'cube(1);' }))) as CallToolResult;
      expect(compiled.isError).toBe(true);
      expect(text(compiled)).toMatch(/OpenSCAD is not installed here .*apt-get install openscad xvfb xauth/);
      const linted = (await client.callTool(
        call('lint_scad', { code: 'cube(1)\nsphere(1);' }),
      )) as CallToolResult;
      expect(text(linted)).toContain("code.scad line 1: missing ';' after `cube(…)`");
    } finally {
      await client.close();
    }
  });

  it("finds a program named by a relative path in Navi's folder, not its own", async () => {
    // A stand-in OpenSCAD that only says it ran; the server's own folder has no bin/ of that name.
    mkdirSync(join(naviCwd, 'bin'), { recursive: true });
    writeFileSync(
      join(naviCwd, 'bin', 'stand-in-openscad'),
      '#!/bin/sh\necho "ERROR: the stand-in ran" >&2\nexit 1\n',
    );
    chmodSync(join(naviCwd, 'bin', 'stand-in-openscad'), 0o755);
    const { client } = await connect({ OPENSCAD_PATH: 'bin/stand-in-openscad' });
    try {
      const compiled = (await client.callTool(call('compile_scad', { code: 'cube(1);' }))) as CallToolResult;
      expect(compiled.isError).toBe(true);
      expect(text(compiled)).toContain('ERROR: the stand-in ran');
    } finally {
      await client.close();
    }
  });

  it('refuses arguments its schema does not allow', async () => {
    const { client } = await connect();
    try {
      const result = (await client.callTool(
        call('render_stl', { path: 'x.stl', views: ['front', 'back', 'left', 'right'] }),
      )) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/views/);
      const wrongType = (await client.callTool(call('lint_scad', { code: 42 }))) as CallToolResult;
      expect(wrongType.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe.skipIf(!(needsProgram('openscad', 'navi-3d over MCP') && needsProgram('Xvfb', 'navi-3d over MCP')))(
  'navi-3d over MCP with OpenSCAD and Xvfb',
  () => {
    it('compiles session code into an STL resource, renders it into named images, and stops its Xvfb on close', async () => {
      const { client, pid } = await connect();
      try {
        const compiled = (await client.callTool(
          call('compile_scad', { code: 'include <parts.scad>\nplate();', name: 'plate' }),
        )) as CallToolResult;
        expect(compiled.isError, text(compiled)).toBeFalsy();
        expect(text(compiled)).toContain('Compiled code.scad into plate.stl: 12 triangles.');
        const resource = compiled.content.find((c) => c.type === 'resource') as EmbeddedResource;
        expect(resource._meta).toEqual({ [FILE_NAME_META_KEY]: 'plate.stl' });
        expect(resource.resource).toMatchObject({ uri: 'navi-3d://files/plate.stl', mimeType: 'model/stl' });
        // What Navi does with it: save it among the session's files.
        const blob = 'blob' in resource.resource ? resource.resource.blob : '';
        writeFileSync(join(naviCwd, 'files', SESSION, 'plate.stl'), Buffer.from(blob, 'base64'));

        const rendered = (await client.callTool(
          call('render_stl', { path: 'plate.stl', views: ['top', 'isometric'] }),
        )) as CallToolResult;
        expect(rendered.isError, text(rendered)).toBeFalsy();
        const images = rendered.content.filter((c): c is ImageContent => c.type === 'image');
        expect(images.map((i) => [i.mimeType, i._meta?.[FILE_NAME_META_KEY]])).toEqual([
          ['image/png', 'plate-top.png'],
          ['image/png', 'plate-isometric.png'],
        ]);
        expect(children(pid).filter((c) => c.name === 'Xvfb')).toHaveLength(1);

        const noSession = (await client.callTool(
          call('render_stl', { path: 'plate.stl' }, null),
        )) as CallToolResult;
        expect(text(noSession)).toMatch(/without a session id/);
      } finally {
        const xvfb = children(pid).filter((c) => c.name === 'Xvfb');
        await client.close();
        expect(xvfb).toHaveLength(1);
        await expect.poll(() => stillRunning(xvfb)).toBe(false);
      }
    });
  },
);

/** Whether any of `processes` still runs (a zombie counts as ended). */
function stillRunning(processes: Array<{ pid: number }>): boolean {
  return processes.some(({ pid }) => !processGone(pid));
}
