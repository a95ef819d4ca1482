/**
 * `read_mcp_resource`: reads one resource of a ready MCP server (`resources/read`), for the
 * agent to use what a server offers as data rather than as a tool (docs/mcp.md#roots-resources-and-prompts).
 * Its contents take the road of an MCP tool's result: text is capped at the output limit,
 * pictures reach the model as images, and pictures and other binary contents are kept as
 * session files, so the person can open them and the agent can hand them on.
 */
import type { CallToolResult, ContentBlock, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { FILE_NAME_META_KEY } from '../../protocol/mcp-meta.js';
import { defineTool, type TypedTool } from '../../tools/define-tool.js';
import { checkPolicy } from '../../tools/policy.js';
import type { RegisteredTool } from '../../tools/registry.js';
import { fail, ok, type ToolContext } from '../../tools/types.js';
import { MAX_URI_CHARS } from '../catalog.js';
import type { McpManager } from '../manager.js';
import { convertCallResult, DEFAULT_MAX_IMAGE_CHARS } from '../result.js';
import { keepResultFiles } from '../result-files.js';
import type { TestMcpToolOptions } from './test-mcp-tool.js';

const TOOL = 'read_mcp_resource';
const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const CONTROL = /[\u0000-\u001f\u007f]/;
/** Types whose bytes are text, so a blob of one is shown as text when it decodes as UTF-8. */
const TEXT_TYPE = /^(text\/|application\/(json|xml|javascript|yaml|x-yaml|toml)\b)|\+(json|xml)\b/i;

const parameters = z.strictObject({
  server: z.string().min(1).max(200).describe('Server name as mcp_status shows it.'),
  uri: z
    .string()
    .min(1)
    .max(MAX_URI_CHARS)
    .describe('URI of the resource: one mcp_status lists, or one made from a listed template.'),
});

/** What is wrong with `uri` before anything is asked of the server, or undefined. */
function uriProblem(uri: string): string | undefined {
  if (CONTROL.test(uri)) return 'it holds a control character (a line break, a tab…); percent-encode it';
  if (!SCHEME.test(uri))
    return 'it has no scheme; a resource URI starts with one, like file:///… or note://…';
  return undefined;
}

function textOfBlob(blob: string, mimeType: string | undefined): string | undefined {
  if (!mimeType || !TEXT_TYPE.test(mimeType)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(blob, 'base64'));
  } catch {
    return undefined;
  }
}

function lastSegment(uri: string): string | undefined {
  const last = uri.split(/[/\\]/).pop() ?? '';
  if (!last) return undefined;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/**
 * Why the caller's profile may not read `server`'s resources, or undefined when it may. A
 * profile may read them when it may call at least one of the server's tools: read_mcp_resource
 * is a meta tool, and must not open a server the profile's policy keeps it away from. A server
 * with no tools registered (one that offers only resources, or one still starting) counts as
 * its tools' name, `mcp__<key>__*`, so only a pattern naming that (`mcp__*`, `*`) lets it be read.
 * An unknown server is left to the manager, whose refusal names the known ones.
 */
function policyRefusal(
  manager: McpManager,
  options: TestMcpToolOptions,
  server: string,
  ctx: ToolContext,
): string | undefined {
  const status = options.profileFor && manager.server(server);
  if (!options.profileFor || !status) return undefined;
  const profile = options.profileFor(ctx.profileId);
  if (!profile) return `the profile "${ctx.profileId}" is unknown, so its policy cannot be checked`;
  const pattern = `mcp__${status.key}__*`;
  const registered = status.tools
    .map((name) => manager.registeredTool(server, name))
    .filter((entry): entry is RegisteredTool => entry !== undefined);
  const entries: RegisteredTool[] =
    registered.length > 0
      ? registered
      : [
          {
            tool: { name: pattern, description: '', parameters: {}, execute: async () => fail('') },
            source: 'mcp',
            server: status.name,
          },
        ];
  const rules = new Set<string>();
  for (const entry of entries) {
    const decision = checkPolicy(profile, entry);
    if (decision.allowed) return undefined;
    rules.add(decision.rule);
  }
  const which = registered.length > 0 ? `none of ${status.name}'s tools` : `no tool of ${status.name}`;
  return (
    `profile "${profile.id}" may call ${which} (${[...rules].join('; ')}), and a server's resources ` +
    `are read only under a profile that may use the server. To read them, let the profile use it: add ` +
    `"${pattern}" (or one of its tools) to the profile's enabled_tools, and take out of its denied_tools ` +
    'the patterns that deny them'
  );
}

/** The contents as an MCP tool result, so they are converted and kept as a tool's would be. */
function asCallResult(result: ReadResourceResult): CallToolResult {
  const content = result.contents.map((c): ContentBlock => {
    const header = `[resource ${c.uri}${c.mimeType ? ` (${c.mimeType})` : ''}]`;
    if ('text' in c && typeof c.text === 'string') return { type: 'text', text: `${header}\n${c.text}` };
    const blob = 'blob' in c && typeof c.blob === 'string' ? c.blob : '';
    const text = textOfBlob(blob, c.mimeType);
    if (text !== undefined) return { type: 'text', text: `${header}\n${text}` };
    if (c.mimeType?.toLowerCase().startsWith('image/')) {
      const name = lastSegment(c.uri);
      return {
        type: 'image',
        data: blob,
        mimeType: c.mimeType,
        ...(name !== undefined && { _meta: { [FILE_NAME_META_KEY]: name } }),
      };
    }
    return {
      type: 'resource',
      resource: { uri: c.uri, blob, ...(c.mimeType !== undefined && { mimeType: c.mimeType }) },
    };
  });
  return { content };
}

/** `options.profileFor` makes it follow the caller's policy for the server (always pass it in Navi). */
export function createReadMcpResourceTool(
  manager: McpManager,
  options: TestMcpToolOptions = {},
): TypedTool<typeof parameters> {
  return defineTool({
    name: TOOL,
    description:
      'Reads one resource of an MCP server: a file, a document or data the server offers by URI. mcp_status ' +
      "lists each server's resources and resource templates; a URI made from a template can be read too. " +
      'Text comes back as text, pictures as images; other binary contents are kept as session files.',
    group: 'meta',
    // It only reads, though from a server that may be on another machine.
    risk: { reads: true, network: true },
    parameters,
    async execute(params, ctx) {
      const { server, uri } = params;
      const problem = uriProblem(uri);
      if (problem) return fail(`"${uri.slice(0, 200)}" was not read: ${problem}.`);
      const refused = policyRefusal(manager, options, server, ctx);
      if (refused !== undefined) return fail(`${uri} was not read: ${refused}.`);
      let result: ReadResourceResult;
      try {
        result = await manager.readResource(server, uri, ctx.signal);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        return fail(
          `${uri} was not read: ${message}. mcp_status lists the servers, their resources and templates.`,
        );
      }
      if (result.contents.length === 0)
        return ok(`${server} answered for ${uri} with no contents: the resource is empty.`);
      const raw = asCallResult(result);
      const converted = convertCallResult(raw, {
        maxChars: manager.outputLimit * 2,
        maxImageChars: DEFAULT_MAX_IMAGE_CHARS,
        naviUi: false,
      });
      const files = manager.resultFiles;
      return files ? keepResultFiles(converted, raw, TOOL, files, ctx) : converted;
    },
  });
}
