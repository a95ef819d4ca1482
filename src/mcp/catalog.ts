/**
 * A server's resources, resource templates and prompts (docs/mcp.md#roots-resources-and-prompts):
 * listed after its tools when its capabilities name them, page by page, and again when it
 * announces a change. At most MCP_LIST_LIMIT of each are kept, with the true count; every text
 * a server sends is clipped, so a server cannot make a status (the MCP page, `mcp_status`) huge.
 * A listing that fails is logged and becomes the connection's last error; the server stays
 * ready, since its tools do not depend on it.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { MCP_LIST_LIMIT } from '../protocol/rest.js';
import type { McpPromptInfo, McpResourceInfo } from './types.js';

/** Pages read of one list at most: a server whose cursor never ends cannot hold Navi. */
export const MAX_CATALOG_PAGES = 50;
/** Longest name, title or MIME type kept; longer ones are cut. */
const MAX_NAME_CHARS = 200;
const MAX_DESCRIPTION_CHARS = 1_000;
/** Longest URI kept whole; a longer one could not be read back correctly, so it is left out. */
export const MAX_URI_CHARS = 4_096;
/** Arguments of one prompt listed at most. */
const MAX_PROMPT_ARGUMENTS = 50;

/** A resource template: the server builds a resource for any URI that matches `uri_template`. */
export interface McpResourceTemplateInfo {
  uri_template: string;
  name: string;
  title?: string;
  description?: string;
  mime_type?: string;
}

/** What a connection keeps of its server's catalog; `McpConnection` is one. */
export interface CatalogHolder {
  /** Whether the server's capabilities name resources (so `resources/read` may be asked). */
  offersResources: boolean;
  resources: McpResourceInfo[];
  resourceCount: number;
  resourceTemplates: McpResourceTemplateInfo[];
  resourceTemplateCount: number;
  prompts: McpPromptInfo[];
  promptCount: number;
  lastError: string | null;
}

export type CatalogPart = 'resources' | 'prompts';

export interface CatalogOptions {
  /** Limit of each page's request. */
  timeoutMs: number;
  log: Logger;
  /** False once the connection moved on (closed, restarted): what was listed is dropped. */
  current(): boolean;
}

interface Listed<T> {
  items: T[];
  count: number;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `{key: clipped}` when `value` is a string, `{}` otherwise. */
function optional<K extends string>(key: K, value: unknown, max: number): { [P in K]?: string } {
  return typeof value === 'string' ? ({ [key]: clip(value, max) } as { [P in K]?: string }) : {};
}

/**
 * Reads every page of a list (up to MAX_CATALOG_PAGES), keeping the first MCP_LIST_LIMIT items
 * and counting all. A cursor seen before ends it: a server that loops must not loop Navi.
 */
async function everyPage<T, R>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
  convert: (item: T) => R | undefined,
): Promise<Listed<R>> {
  const items: R[] = [];
  let count = 0;
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let n = 0; n < MAX_CATALOG_PAGES; n++) {
    const result = await page(cursor);
    for (const item of result.items) {
      const converted = convert(item);
      if (converted === undefined) continue;
      count++;
      if (items.length < MCP_LIST_LIMIT) items.push(converted);
    }
    cursor = result.nextCursor;
    if (cursor === undefined || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return { items, count };
}

const cursorParams = (cursor: string | undefined) => (cursor === undefined ? undefined : { cursor });

/** What resources and templates share: a name, and an optional title, description and MIME type. */
interface Described {
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

function described(d: Described): Omit<McpResourceTemplateInfo, 'uri_template'> {
  return {
    name: clip(d.name, MAX_NAME_CHARS),
    ...optional('title', d.title, MAX_NAME_CHARS),
    ...optional('description', d.description, MAX_DESCRIPTION_CHARS),
    ...optional('mime_type', d.mimeType, MAX_NAME_CHARS),
  };
}

function resourceInfo(r: Described & { uri: string }): McpResourceInfo | undefined {
  return r.uri.length > MAX_URI_CHARS ? undefined : { uri: r.uri, ...described(r) };
}

function templateInfo(t: Described & { uriTemplate: string }): McpResourceTemplateInfo | undefined {
  return t.uriTemplate.length > MAX_URI_CHARS ? undefined : { uri_template: t.uriTemplate, ...described(t) };
}

function promptInfo(p: {
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
}): McpPromptInfo {
  return {
    name: clip(p.name, MAX_NAME_CHARS),
    ...optional('title', p.title, MAX_NAME_CHARS),
    ...optional('description', p.description, MAX_DESCRIPTION_CHARS),
    arguments: (p.arguments ?? []).slice(0, MAX_PROMPT_ARGUMENTS).map((a) => ({
      name: clip(a.name, MAX_NAME_CHARS),
      ...optional('description', a.description, MAX_DESCRIPTION_CHARS),
      required: a.required === true,
    })),
  };
}

async function listResources(client: Client, timeout: number): Promise<Listed<McpResourceInfo>> {
  return everyPage(async (cursor) => {
    const r = await client.listResources(cursorParams(cursor), { timeout });
    return { items: r.resources, nextCursor: r.nextCursor };
  }, resourceInfo);
}

async function listTemplates(client: Client, timeout: number): Promise<Listed<McpResourceTemplateInfo>> {
  return everyPage(async (cursor) => {
    const r = await client.listResourceTemplates(cursorParams(cursor), { timeout });
    return { items: r.resourceTemplates, nextCursor: r.nextCursor };
  }, templateInfo);
}

async function listPrompts(client: Client, timeout: number): Promise<Listed<McpPromptInfo>> {
  return everyPage(async (cursor) => {
    const r = await client.listPrompts(cursorParams(cursor), { timeout });
    return { items: r.prompts, nextCursor: r.nextCursor };
  }, promptInfo);
}

function reason(err: unknown): string {
  return clip(err instanceof Error ? err.message : String(err), 500);
}

/**
 * Lists `parts` of the server's catalog into `holder`, leaving out what its capabilities do not
 * name. Never throws: a failed list is logged, recorded as the last error and leaves the
 * previous list in place.
 */
export async function refreshCatalog(
  client: Client,
  holder: CatalogHolder,
  parts: readonly CatalogPart[],
  options: CatalogOptions,
): Promise<void> {
  const capabilities = client.getServerCapabilities();
  const timeout = options.timeoutMs;
  const failed = (what: string, err: unknown) => {
    if (!options.current()) return;
    const why = reason(err);
    options.log.warn({ err: why }, `could not list the MCP server's ${what}`);
    holder.lastError = `could not list its ${what}: ${why}`;
  };
  holder.offersResources = capabilities?.resources !== undefined;
  // A server restarted without a capability it had must not keep showing the old list.
  if (!capabilities?.resources)
    Object.assign(holder, {
      resources: [],
      resourceCount: 0,
      resourceTemplates: [],
      resourceTemplateCount: 0,
    });
  if (!capabilities?.prompts) Object.assign(holder, { prompts: [], promptCount: 0 });
  if (parts.includes('resources') && capabilities?.resources) {
    try {
      const resources = await listResources(client, timeout);
      if (!options.current()) return;
      holder.resources = resources.items;
      holder.resourceCount = resources.count;
    } catch (err) {
      failed('resources', err);
    }
    // Templates are optional in the protocol: a server without them answers "method not found".
    try {
      const templates = await listTemplates(client, timeout);
      if (!options.current()) return;
      holder.resourceTemplates = templates.items;
      holder.resourceTemplateCount = templates.count;
    } catch (err) {
      if (options.current()) options.log.debug({ err: reason(err) }, 'no MCP resource templates');
    }
  }
  if (parts.includes('prompts') && capabilities?.prompts) {
    try {
      const prompts = await listPrompts(client, timeout);
      if (!options.current()) return;
      holder.prompts = prompts.items;
      holder.promptCount = prompts.count;
    } catch (err) {
      failed('prompts', err);
    }
  }
}

/**
 * Calls `changed` with the part a server announces as changed (`list_changed`). Announcements
 * that arrive while a part is being listed again are folded into one more listing after it, so a
 * server sending thousands of them costs at most two listings of each part, not a queue of
 * thousands.
 */
export function watchCatalog(client: Client, changed: (part: CatalogPart) => Promise<void>): void {
  const listing = new Map<CatalogPart, 'running' | 'again'>();
  const announce = async (part: CatalogPart) => {
    if (listing.has(part)) {
      listing.set(part, 'again');
      return;
    }
    try {
      do {
        listing.set(part, 'running');
        await changed(part);
      } while (listing.get(part) === 'again');
    } finally {
      listing.delete(part);
    }
  };
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => announce('resources'));
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => announce('prompts'));
}
