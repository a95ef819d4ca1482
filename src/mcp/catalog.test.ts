/**
 * Resources, resource templates, prompts and roots on a real McpManager with real servers: the
 * catalog fixture (pages, list_changed, a listing that fails), the tools-only fixture and the
 * reference server `@modelcontextprotocol/server-everything`.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSettings } from '../config/settings.js';
import { MCP_LIST_LIMIT } from '../protocol/rest.js';
import { ToolRegistry } from '../tools/registry.js';
import {
  type CatalogHolder,
  MAX_CATALOG_PAGES,
  MAX_URI_CHARS,
  refreshCatalog,
  watchCatalog,
} from './catalog.js';
import {
  bin,
  fastTiming,
  fixtureLaunch,
  tempDir,
  toolContext,
  waitFor,
  writeConfig,
} from './fixtures/harness.js';
import { McpManager } from './manager.js';
import { rootsOfAllowedPaths } from './roots.js';
import { createMcpStatusTool } from './tools/mcp-status.js';

const catalogLaunch = (env: Record<string, string> = {}) => ({ ...fixtureLaunch('catalog-server.ts'), env });

function managerFor(dir: string, roots?: () => ReturnType<typeof rootsOfAllowedPaths>) {
  const registry = new ToolRegistry();
  const manager = new McpManager({
    registry,
    settings: testSettings({ MCP_SERVERS_DIR: dir, MCP_SCAFFOLD_DIR: join(dir, 'scaffold') }),
    logger: pino({ level: 'silent' }),
    timing: fastTiming,
    ...(roots && { roots }),
  });
  return { manager, registry };
}

async function callTool(registry: ToolRegistry, name: string) {
  const entry = registry.get(name);
  if (!entry) throw new Error(`${name} is not registered`);
  return entry.tool.execute({}, toolContext());
}

describe('the catalog of MCP servers', () => {
  const tmp = tempDir('catalog');
  const allowed = join(tmp.dir, 'projects');
  let manager: McpManager;
  let registry: ToolRegistry;

  beforeAll(async () => {
    writeConfig(tmp.dir, 'catalog.json', { name: 'catalog', ...catalogLaunch() });
    writeConfig(tmp.dir, 'many.json', {
      name: 'many',
      ...catalogLaunch({ CATALOG_NOTES: String(MCP_LIST_LIMIT + 46), CATALOG_PAGE: '25' }),
    });
    writeConfig(tmp.dir, 'broken.json', { name: 'broken', ...catalogLaunch({ CATALOG_BROKEN: '1' }) });
    writeConfig(tmp.dir, 'tools-only.json', { name: 'tools-only', ...fixtureLaunch('fixture-server.ts') });
    mkdirSync(allowed);
    mkdirSync(join(tmp.dir, 'started-on'));
    writeConfig(tmp.dir, 'files.json', {
      name: 'files',
      command: bin('mcp-server-filesystem'),
      args: [join(tmp.dir, 'started-on')],
    });
    writeConfig(tmp.dir, 'everything.json', {
      name: 'everything',
      command: bin('mcp-server-everything'),
      args: ['stdio'],
    });
    ({ manager, registry } = managerFor(tmp.dir, () => rootsOfAllowedPaths([allowed, '/srv/shared'])));
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager?.close();
    tmp.remove();
  });

  it('lists every page of resources and prompts, with their fields', () => {
    const s = manager.server('catalog');
    expect(s?.state).toBe('ready');
    // 4 files and 4 notes over pages of 3; prompts one per page.
    expect(s?.resource_count).toBe(8);
    expect(s?.resources.map((r) => r.uri)).toEqual([
      'note://files/pixel.png',
      'note://files/data.bin',
      'note://files/config.json',
      'note://files/big.txt',
      'note://notes/1',
      'note://notes/2',
      'note://notes/3',
      'note://notes/4',
    ]);
    expect(s?.resources[0]).toEqual({
      uri: 'note://files/pixel.png',
      name: 'pixel.png',
      description: 'A tiny picture.',
      mime_type: 'image/png',
    });
    expect(s?.resources[3]).toMatchObject({ title: 'A large text' });
    expect(s?.prompt_count).toBe(2);
    expect(s?.prompts).toEqual([
      {
        name: 'summarise',
        title: 'Summarise a text',
        description: 'Asks for a summary.',
        arguments: [
          { name: 'text', description: 'What to summarise.', required: true },
          { name: 'style', description: 'How.', required: false },
        ],
      },
      { name: 'greet', description: 'Says hello.', arguments: [] },
    ]);
    expect(manager.resourceTemplates('catalog')).toEqual({
      templates: [
        {
          uri_template: 'note://notes/{id}',
          name: 'Any note',
          description: 'A note by its id, listed or not.',
          mime_type: 'text/plain',
        },
      ],
      count: 1,
    });
  });

  it(`keeps at most ${MCP_LIST_LIMIT} of a long list and counts them all`, () => {
    const s = manager.server('many');
    expect(s?.resource_count).toBe(MCP_LIST_LIMIT + 50);
    expect(s?.resources).toHaveLength(MCP_LIST_LIMIT);
    expect(s?.resources.at(-1)?.uri).toBe(`note://notes/${MCP_LIST_LIMIT - 4}`);
  });

  it('follows list_changed for resources and prompts', async () => {
    await callTool(registry, 'mcp__catalog__add_resource');
    await waitFor('the new resource', () => manager.server('catalog')?.resource_count === 9);
    expect(manager.server('catalog')?.resources.at(-1)).toEqual({
      uri: 'note://notes/added-9',
      name: 'Added 9',
    });
    await callTool(registry, 'mcp__catalog__add_prompt');
    await waitFor('the new prompt', () => manager.server('catalog')?.prompt_count === 3);
    expect(manager.server('catalog')?.prompts.at(-1)).toEqual({
      name: 'added_2',
      arguments: [{ name: 'topic', required: true }],
    });
  });

  it('keeps a server whose listing fails ready, its tools working and the failure shown', async () => {
    const s = manager.server('broken');
    expect(s?.state).toBe('ready');
    expect(s?.resource_count).toBe(0);
    expect(s?.last_error).toBe('could not list its prompts: MCP error -32603: the prompt index is corrupt');
    expect((await callTool(registry, 'mcp__broken__add_prompt')).output).toBe('added a prompt');
  });

  it('lists nothing for a server without resources or prompts', () => {
    expect(manager.server('tools-only')).toMatchObject({
      state: 'ready',
      resources: [],
      resource_count: 0,
      prompts: [],
      prompt_count: 0,
      last_error: null,
    });
  });

  it('mcp_status shows the counts of every server, and one server in full', async () => {
    const status = createMcpStatusTool(manager);
    const all = await status.execute({}, toolContext());
    expect(all.output).toMatch(
      /^- catalog \[stdio\] ready, 3 tools, 9 resources, 3 prompts, up \d+s, pid \d+, last error: none$/m,
    );
    expect(all.output).toMatch(
      /^- broken \[stdio\] ready, 3 tools, .*last error: could not list its prompts: MCP error -32603: the prompt index is corrupt$/m,
    );
    const one = await status.execute({ server: 'catalog' }, toolContext());
    const lines = one.output.split('\n');
    expect(lines.slice(1)).toEqual([
      '  tools: mcp__catalog__add_resource, mcp__catalog__add_prompt, mcp__catalog__list_roots',
      '  resources (9):',
      '    - note://files/pixel.png — pixel.png: A tiny picture. [image/png]',
      '    - note://files/data.bin — data.bin [application/octet-stream]',
      '    - note://files/config.json — config.json [application/json]',
      '    - note://files/big.txt — A large text [text/plain]',
      '    - note://notes/1 — Note 1 [text/plain]',
      '    - note://notes/2 — Note 2 [text/plain]',
      '    - note://notes/3 — Note 3 [text/plain]',
      '    - note://notes/4 — Note 4 [text/plain]',
      '    - note://notes/added-9 — Added 9',
      '  resource templates (1):',
      '    - note://notes/{id} — Any note: A note by its id, listed or not. [text/plain]',
      '  prompts (3):',
      '    - summarise(text, style?) — Summarise a text: Asks for a summary.',
      '    - greet() — Says hello.',
      '    - added_2(topic)',
      '  read_mcp_resource reads a listed URI, or one made from a template.',
    ]);
    expect(one.metadata?.resource_templates).toHaveLength(1);
    const many = await status.execute({ server: 'many' }, toolContext());
    expect(many.output).toContain(`    … ${MCP_LIST_LIMIT + 50 - 100} more not shown`);
  });

  it('answers roots/list with the allowed folders as file:// URIs', async () => {
    const result = await callTool(registry, 'mcp__catalog__list_roots');
    expect(JSON.parse(result.output)).toEqual([
      { uri: pathToFileURL(allowed).href, name: 'projects' },
      { uri: 'file:///srv/shared', name: 'shared' },
    ]);
  });

  it('narrows a file server that honours roots to the allowed folders', async () => {
    // The server asks for the roots once it is initialised, in the background.
    const root = realpathSync(allowed);
    let answer = '';
    for (let tries = 0; tries < 400 && !answer.includes(root); tries++) {
      if (tries > 0) await new Promise((r) => setTimeout(r, 25));
      answer = (await callTool(registry, 'mcp__files__list_allowed_directories')).output;
    }
    expect(answer).toContain(root);
    expect(answer).not.toContain('started-on');
  });

  it('lists the resources and prompts of server-everything, and gives it the roots', async () => {
    const s = manager.server('everything');
    expect(s?.state).toBe('ready');
    expect(s?.resource_count).toBeGreaterThan(0);
    expect(s?.resources.every((r) => r.uri.startsWith('demo://resource/static/document/'))).toBe(true);
    expect(s?.prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt']));
    expect(s?.prompts.find((p) => p.name === 'args-prompt')?.arguments).toMatchObject([
      { name: 'city', description: 'Name of the city', required: true },
      { name: 'state', required: false },
    ]);
    const templates = manager.resourceTemplates('everything').templates.map((t) => t.uri_template);
    expect(templates).toEqual(
      expect.arrayContaining([
        'demo://resource/dynamic/text/{resourceId}',
        'demo://resource/dynamic/blob/{resourceId}',
      ]),
    );
    // The reference server offers its roots tool only to a client that declares roots.
    const roots = await callTool(registry, 'mcp__everything__get-roots-list');
    expect(roots.output).toContain(pathToFileURL(allowed).href);
    expect(roots.output).toContain('file:///srv/shared');
  });
});

describe('roots without a source', () => {
  const tmp = tempDir('no-roots');
  let manager: McpManager;
  let registry: ToolRegistry;

  beforeAll(async () => {
    writeConfig(tmp.dir, 'catalog.json', { name: 'catalog', ...catalogLaunch() });
    ({ manager, registry } = managerFor(tmp.dir));
    manager.start();
    await manager.ready();
  });

  afterAll(async () => {
    await manager?.close();
    tmp.remove();
  });

  it('answers roots/list with no roots', async () => {
    expect(JSON.parse((await callTool(registry, 'mcp__catalog__list_roots')).output)).toEqual([]);
  });
});

describe('what a hostile server cannot make the catalog do', () => {
  type Page = { items: Record<string, unknown>[]; nextCursor?: string };
  /** A client whose lists answer `page(cursor, list)`, counting the pages asked for. */
  function fakeClient(page: (cursor: string | undefined, list: 'resources' | 'prompts') => Page) {
    const asked: (string | undefined)[] = [];
    const handlers: (() => unknown)[] = [];
    const answer = (key: 'resources' | 'prompts') => async (params?: { cursor?: string }) => {
      asked.push(params?.cursor);
      const p = page(params?.cursor, key);
      return { [key]: p.items, ...(p.nextCursor !== undefined && { nextCursor: p.nextCursor }) };
    };
    const client = {
      getServerCapabilities: () => ({ resources: {}, prompts: {} }),
      listResources: answer('resources'),
      listResourceTemplates: async () => ({ resourceTemplates: [] }),
      listPrompts: answer('prompts'),
      setNotificationHandler: (_: unknown, handler: () => unknown) => handlers.push(handler),
    } as unknown as Client;
    return { client, asked, handlers };
  }
  const holder = (): CatalogHolder => ({
    offersResources: false,
    resources: [],
    resourceCount: 0,
    resourceTemplates: [],
    resourceTemplateCount: 0,
    prompts: [],
    promptCount: 0,
    lastError: null,
  });
  const options = { timeoutMs: 1_000, log: pino({ level: 'silent' }), current: () => true };

  it('ends a list at a cursor it has seen before', async () => {
    const { client, asked } = fakeClient(() => ({
      items: [{ uri: 'x://1', name: 'one' }],
      nextCursor: 'again',
    }));
    const h = holder();
    await refreshCatalog(client, h, ['resources'], options);
    expect(asked).toEqual([undefined, 'again']);
    expect(h.resourceCount).toBe(2);
  });

  it(`reads at most ${MAX_CATALOG_PAGES} pages of a list whose cursor never ends`, async () => {
    let n = 0;
    const { client, asked } = fakeClient(() => ({
      items: [{ uri: `x://${n}`, name: 'n' }],
      nextCursor: String(++n),
    }));
    const h = holder();
    await refreshCatalog(client, h, ['resources'], options);
    expect(asked).toHaveLength(MAX_CATALOG_PAGES);
    expect(h.resourceCount).toBe(MAX_CATALOG_PAGES);
  });

  it('cuts long names and descriptions, leaves out an overlong URI and lists at most 50 arguments', async () => {
    const long = 'n'.repeat(5_000);
    const { client } = fakeClient((_, list) => ({
      items:
        list === 'resources'
          ? [
              { uri: `x://${'u'.repeat(MAX_URI_CHARS)}`, name: 'too long an address' },
              { uri: 'x://ok', name: long, title: long, description: long, mimeType: long },
            ]
          : [
              {
                name: long,
                description: long,
                arguments: Array.from({ length: 80 }, (_, i) => ({ name: `a${i}` })),
              },
            ],
    }));
    const h = holder();
    await refreshCatalog(client, h, ['resources', 'prompts'], options);
    expect(h.resourceCount).toBe(1);
    const [resource] = h.resources;
    expect(resource?.uri).toBe('x://ok');
    expect(resource?.name).toHaveLength(200);
    expect(resource?.name.endsWith('…')).toBe(true);
    expect(resource?.title).toHaveLength(200);
    expect(resource?.mime_type).toHaveLength(200);
    expect(resource?.description).toHaveLength(1_000);
    const [prompt] = h.prompts;
    expect(prompt?.description).toHaveLength(1_000);
    expect(prompt?.name).toHaveLength(200);
    expect(prompt?.arguments).toHaveLength(50);
  });

  it('folds a storm of list_changed into at most one more listing of each part', async () => {
    const { client, handlers } = fakeClient(() => ({ items: [] }));
    const listed: string[] = [];
    let finish: () => void = () => undefined;
    watchCatalog(client, (part) => {
      listed.push(part);
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    });
    const [resourcesChanged] = handlers;
    if (!resourcesChanged) throw new Error('no handler for resources/list_changed');
    const storm = Array.from({ length: 1_000 }, () => resourcesChanged());
    expect(listed).toEqual(['resources']);
    finish();
    await waitFor('the second listing', () => listed.length === 2);
    finish();
    await Promise.all(storm);
    expect(listed).toEqual(['resources', 'resources']);
    // Once quiet, the next announcement lists again.
    const later = resourcesChanged();
    expect(listed).toHaveLength(3);
    finish();
    await later;
  });
});
