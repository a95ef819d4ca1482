/**
 * The tools that read what Navi knows and change nothing: `search_memory` (long-term memory),
 * `list_sessions` and `get_session` (its conversations, as the web client shows them). Tool
 * traffic inside a session is summarised to a line per call: a host wants the conversation, not
 * every file a tool read.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { SessionMessage } from '../../protocol/rest.js';
import { isUuid } from '../session-lookup.js';
import { dataResult, toolError } from './results.js';
import type { NaviMcpDeps } from './server.js';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** Longest message text `get_session` shows whole; beyond it, the start and how much is left out. */
const MESSAGE_CHARS_SHOWN = 20_000;
const SUMMARY_CHARS = 200;

const limit = (max: number, fallback: number) =>
  z
    .number()
    .int()
    .min(1, 'limit must be at least 1')
    .max(max, `limit must be at most ${max}`)
    .optional()
    .describe(`How many to return (1–${max}, default ${fallback}).`);

const factSchema = z.object({
  category: z.string(),
  key: z.string(),
  value: z.string(),
  updated_at: z.string(),
  source_session_id: z.string().nullable(),
  score: z.number(),
});

const sessionSummarySchema = z.object({
  id: z.string(),
  title: z.string(),
  profile: z.string(),
  last_active: z.string(),
  pinned: z.boolean(),
});

const messageSchema = z.object({
  role: z.enum(['user', 'assistant', 'tool', 'system']),
  content: z.string().nullable(),
  created_at: z.string(),
  tool_calls: z.array(z.string()).optional(),
});

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

/** One line per tool call: its name and arguments, shortened. */
function callLine(name: string, args: Record<string, unknown>): string {
  return `${name} ${cut(JSON.stringify(args), SUMMARY_CHARS)}`;
}

/** A stored message as `get_session` shows it. */
function shown(message: SessionMessage): z.infer<typeof messageSchema> {
  const base = { role: message.role, created_at: message.created_at };
  if (message.role === 'tool') {
    const firstLine = (message.content ?? '').split('\n', 1)[0] ?? '';
    const mark = message.success === false ? '✗' : '✓';
    return { ...base, content: `${mark} ${message.name ?? 'tool'}: ${cut(firstLine, SUMMARY_CHARS)}` };
  }
  return {
    ...base,
    content: message.content === null ? null : cut(message.content, MESSAGE_CHARS_SHOWN),
    ...(message.tool_calls?.length
      ? { tool_calls: message.tool_calls.map((call) => callLine(call.name, call.arguments)) }
      : {}),
  };
}

async function searchMemory(
  deps: NaviMcpDeps,
  query: string,
  max: number | undefined,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const memory = deps.services.memory;
  if (!memory)
    return toolError(
      "Long-term memory is off in this Navi, so there is nothing to search. It is on in Navi as `navi serve` and `navi mcp` start it (docs/memory.md); ask Navi's operator to run one of those.",
    );
  // The signal ends embedding the query (and backfilling facts) when the host cancels the call.
  const { hits, mode } = await memory.search.search(query, {
    ...(max !== undefined ? { limit: max } : {}),
    signal,
  });
  return dataResult({
    mode,
    facts: hits.map(({ fact, score }) => ({
      category: fact.category,
      key: fact.key,
      value: fact.value,
      updated_at: fact.updated_at,
      source_session_id: fact.source_session_id,
      score,
    })),
  });
}

async function listSessions(deps: NaviMcpDeps, max = 20): Promise<CallToolResult> {
  const sessions = await deps.services.sessions.list();
  return dataResult({
    sessions: sessions.slice(0, max).map((s) => ({
      id: s.id,
      title: s.title,
      profile: s.profile_id,
      last_active: s.last_active,
      pinned: s.pinned,
    })),
    total: sessions.length,
  });
}

async function getSession(deps: NaviMcpDeps, id: string, max = 50): Promise<CallToolResult> {
  if (!isUuid(id))
    return toolError(
      `"${cut(id, 100)}" is not a Navi session id (a UUID); use an id from list_sessions or from an ask_navi answer.`,
    );
  const sessions = deps.services.sessions;
  const session = await sessions.get(id);
  const page = session && (await sessions.getMessagePage(id, { limit: max }));
  if (!session || !page)
    return toolError(
      `There is no session ${id}: it may have been deleted. Use list_sessions to see the sessions there are.`,
    );
  return dataResult({
    id: session.id,
    title: session.title,
    profile: session.profile_id,
    last_active: session.last_active,
    messages: page.messages.map(shown),
    earlier_messages: page.next_before !== null,
  });
}

export function registerReadTools(server: McpServer, deps: NaviMcpDeps): void {
  server.registerTool(
    'search_memory',
    {
      title: "Search Navi's memory",
      description:
        "Searches Navi's long-term memory: the facts it learnt about the user and their world (preferences, " +
        'people, projects…), best matches first.',
      inputSchema: {
        query: z
          .string()
          .max(2000, 'query is longer than 2000 characters: use a few words')
          .describe('Words to look for.'),
        limit: limit(50, 10),
      },
      outputSchema: { mode: z.enum(['hybrid', 'fts']), facts: z.array(factSchema) },
      annotations: READ_ONLY,
    },
    ({ query, limit: max }, extra) => searchMemory(deps, query, max, extra.signal),
  );
  server.registerTool(
    'list_sessions',
    {
      title: "List Navi's sessions",
      description: "Navi's conversations, pinned first, then the most recently active: id, title, profile.",
      inputSchema: { limit: limit(200, 20) },
      outputSchema: { sessions: z.array(sessionSummarySchema), total: z.number().int() },
      annotations: READ_ONLY,
    },
    ({ limit: max }) => listSessions(deps, max),
  );
  server.registerTool(
    'get_session',
    {
      title: 'Read a Navi session',
      description:
        "The newest messages of one of Navi's sessions, oldest first (role, content, created_at); tool calls " +
        'and their results are summarised to one line each.',
      inputSchema: {
        id: z.string().max(200).describe('The session id (from list_sessions or an ask_navi answer).'),
        limit: limit(500, 50),
      },
      outputSchema: {
        id: z.string(),
        title: z.string(),
        profile: z.string(),
        last_active: z.string(),
        messages: z.array(messageSchema),
        earlier_messages: z.boolean(),
      },
      annotations: READ_ONLY,
    },
    ({ id, limit: max }) => getSession(deps, id, max),
  );
}
