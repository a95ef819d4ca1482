/**
 * Writes a new MCP server for `create_mcp_server`: MCP_SCAFFOLD_DIR/<name>/ (see
 * scaffold-templates.ts) and MCP_SERVERS_DIR/<name>.json, disabled and marked
 * `"created_by": "agent"` so it cannot start before the user approves its launch line.
 */
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { launchLine, parseServerConfig } from './config.js';
import {
  handlersDts,
  handlersJs,
  indexTs,
  packageJson,
  readme,
  type ScaffoldSpec,
  serverTs,
  testTs,
  toolsJson,
  tsconfigJson,
} from './scaffold-templates.js';
import type { McpServerConfig } from './types.js';

export type { ScaffoldSpec, ScaffoldTool } from './scaffold-templates.js';

const SERVER_NAME = /^[a-z][a-z0-9-]{1,39}$/;
const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,47}$/;
const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
  ...args: string[]
) => unknown;

/** Everything wrong with a spec, as sentences for the LLM; empty when it can be written. */
export function validateScaffoldSpec(spec: ScaffoldSpec): string[] {
  const problems: string[] = [];
  if (!SERVER_NAME.test(spec.name)) {
    problems.push(
      `name "${spec.name}" must be 2-40 characters of lower-case letters, digits and "-", starting with a letter`,
    );
  }
  if (!spec.description.trim()) problems.push('description must not be empty');
  if (spec.tools.length === 0) problems.push('tools must list at least one tool');
  const seen = new Set<string>();
  for (const tool of spec.tools) {
    if (!TOOL_NAME.test(tool.name)) problems.push(`tool name "${tool.name}" must match ${TOOL_NAME.source}`);
    if (seen.has(tool.name)) problems.push(`tool name "${tool.name}" is used twice`);
    seen.add(tool.name);
    if (!tool.description.trim()) problems.push(`tool ${tool.name}: description must not be empty`);
    if (tool.parameters.type !== 'object')
      problems.push(`tool ${tool.name}: parameters must be a JSON Schema with "type": "object"`);
    if (!tool.implementation.trim()) {
      // A server whose tool does nothing would be offered to the model as if it worked.
      problems.push(`tool ${tool.name}: implementation is required (the body of async (args) => { ... })`);
      continue;
    }
    try {
      // Parsing only: the constructed function is never called.
      new AsyncFunction('args', tool.implementation);
    } catch (err) {
      problems.push(`tool ${tool.name}: implementation is not valid JavaScript: ${(err as Error).message}`);
    }
  }
  return problems;
}

/** Navi's own node_modules (where the SDK and tsx are installed). */
export function naviNodeModules(): string {
  const sdk = createRequire(import.meta.url).resolve('@modelcontextprotocol/sdk/server/index.js');
  const marker = `${sep}node_modules${sep}`;
  return sdk.slice(0, sdk.indexOf(marker) + marker.length - 1);
}

function resolvesFrom(dir: string, specifier: string): boolean {
  try {
    createRequire(join(dir, 'package.json')).resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

export interface ScaffoldResult {
  dir: string;
  configFile: string;
  config: McpServerConfig;
  /** The exact launch line the user must approve. */
  command: string;
  files: string[];
}

/**
 * Writes the server and its disabled config. Refuses to overwrite an existing folder or config.
 * When the folder lies outside any tree that can resolve the SDK and tsx (e.g. a scaffold dir
 * outside the Navi checkout), it links `node_modules` to Navi's.
 */
export async function writeScaffold(
  spec: ScaffoldSpec,
  scaffoldRoot: string,
  serversDir: string,
): Promise<ScaffoldResult> {
  const problems = validateScaffoldSpec(spec);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const dir = resolve(scaffoldRoot, spec.name);
  const configFile = resolve(serversDir, `${spec.name}.json`);
  if (existsSync(dir)) throw new Error(`${dir} already exists; choose another name or remove it first`);
  if (existsSync(configFile)) throw new Error(`${configFile} already exists; choose another name`);
  const raw = {
    name: spec.name,
    description: spec.description,
    command: process.execPath,
    args: ['--import', 'tsx', 'src/index.ts'],
    cwd: dir,
    enabled: false,
    created_by: 'agent',
  };
  const config = parseServerConfig(JSON.stringify(raw), configFile);
  const command = launchLine(config);
  const files: Record<string, string> = {
    'package.json': packageJson(spec),
    'tsconfig.json': tsconfigJson,
    'README.md': readme(spec, command),
    'src/tools.json': toolsJson(spec),
    'src/handlers.js': handlersJs(spec),
    'src/handlers.d.ts': handlersDts,
    'src/server.ts': serverTs(spec),
    'src/index.ts': indexTs,
    'src/server.test.ts': testTs(spec),
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  if (!resolvesFrom(dir, '@modelcontextprotocol/sdk/server/index.js') || !resolvesFrom(dir, 'tsx')) {
    await symlink(naviNodeModules(), join(dir, 'node_modules'), 'dir');
  }
  await mkdir(serversDir, { recursive: true });
  await writeFile(configFile, `${JSON.stringify(raw, null, 2)}\n`);
  return { dir, configFile, config, command, files: Object.keys(files).map((f) => join(dir, f)) };
}
