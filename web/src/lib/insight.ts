/**
 * What the settings' insight pages (memory, tools, MCP servers) show, as words and checks that
 * need no page: a fact edit reduced to what changed and checked before it is sent, paging and
 * categories of the fact list, and labels for tool sources, tool policies and server states.
 */
// Relative rather than `@protocol`: the unit tests in test/web compile this file with the
// server's configuration, which has no such alias.
import type {
  McpServerInfo,
  MemoryFactRecord,
  ToolLoadErrorInfo,
  ToolPolicyInfo,
  ToolSummary,
} from '../../../src/protocol/rest.js';

/** The longest category, key and value the server takes (`PATCH /memory/facts/{id}`). */
export const FACT_LIMITS = { category: 40, key: 80, value: 2000 } as const;

export type FactField = keyof typeof FACT_LIMITS;
export type FactDraft = Record<FactField, string>;

/** The editable fields of a fact, as the edit form starts. */
export function factDraft(fact: MemoryFactRecord): FactDraft {
  return { category: fact.category, key: fact.key, value: fact.value };
}

/**
 * The fields the draft changes (trimmed), and what is wrong with them in words. An edit that
 * changes nothing is a problem too, so the form never sends an empty patch.
 */
export function factEdit(
  fact: MemoryFactRecord,
  draft: FactDraft,
): { patch: Partial<FactDraft>; problems: string[] } {
  const patch: Partial<FactDraft> = {};
  const problems: string[] = [];
  for (const field of Object.keys(FACT_LIMITS) as FactField[]) {
    // The server normalises category and key (lower case, `_` for spaces); it is the one place that does.
    const value = draft[field].trim();
    const limit = FACT_LIMITS[field];
    if (value === '') problems.push(`The ${field} cannot be empty.`);
    else if ([...value].length > limit)
      problems.push(`The ${field} is ${[...value].length} characters long; at most ${limit} are kept.`);
    else if (value !== fact[field]) patch[field] = value;
  }
  if (problems.length === 0 && Object.keys(patch).length === 0)
    problems.push('Nothing was changed: edit the category, key or value, or cancel.');
  return { patch, problems };
}

/** "51–100 of 230" for a page of the fact list; "No facts" for none. */
export function pageRange(offset: number, shown: number, total: number): string {
  if (total === 0 || shown === 0) return 'No facts';
  return `${offset + 1}–${offset + shown} of ${total}`;
}

/** The categories among `facts`, with how many facts each holds, most facts first then by name. */
export function categoryCounts(facts: readonly MemoryFactRecord[]): { category: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const fact of facts) counts.set(fact.category, (counts.get(fact.category) ?? 0) + 1);
  return [...counts]
    .map(([category, count]) => ({ category, count }))
    .sort((a, b) => b.count - a.count || a.category.localeCompare(b.category));
}

/** Facts grouped by category in the order they come (the server's: most recently updated first). */
export function groupByCategory(
  facts: readonly MemoryFactRecord[],
): { category: string; facts: MemoryFactRecord[] }[] {
  const groups = new Map<string, MemoryFactRecord[]>();
  for (const fact of facts) {
    const group = groups.get(fact.category);
    if (group) group.push(fact);
    else groups.set(fact.category, [fact]);
  }
  return [...groups].map(([category, list]) => ({ category, facts: list }));
}

/** Where a tool comes from: "Built-in", "Your tools folder", "MCP server <name>". */
export function sourceLabel(tool: Pick<ToolSummary, 'source' | 'server'>): string {
  if (tool.source === 'builtin') return 'Built-in';
  if (tool.source === 'user') return 'Your tools folder';
  return tool.server ? `MCP server ${tool.server}` : 'MCP server';
}

export const CONFIRM_LABELS: Record<ToolPolicyInfo['confirm'], string> = {
  never: 'Does not ask',
  always: 'Asks you before every call',
  per_call: 'Asks you before some calls',
};

/** What a load error's source is, in words. */
export function loadErrorKind(error: Pick<ToolLoadErrorInfo, 'source'>): string {
  switch (error.source) {
    case 'user':
      return 'Tool file';
    case 'context_provider':
      return 'Context provider';
    case 'mcp':
      return 'MCP server';
    default:
      return 'Built-in tool';
  }
}

/** Filters tools by words in their name, description or server, and by source. */
export function filterTools(
  tools: readonly ToolSummary[],
  text: string,
  source: '' | ToolSummary['source'],
): ToolSummary[] {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  return tools.filter((tool) => {
    if (source && tool.source !== source) return false;
    const haystack = `${tool.name} ${tool.description} ${tool.server ?? ''}`.toLowerCase();
    return words.every((w) => haystack.includes(w));
  });
}

export const MCP_STATE_LABELS: Record<McpServerInfo['state'], string> = {
  ready: 'Running',
  connecting: 'Starting',
  down: 'Down',
  stopped: 'Stopped',
  disabled: 'Disabled',
  awaiting_approval: 'Waiting for your approval',
  needs_auth: 'Needs authorisation',
};

/** Whether a restart may be asked for: approval and enabling are other steps. */
export function canRestart(server: Pick<McpServerInfo, 'state'>): boolean {
  return server.state !== 'awaiting_approval' && server.state !== 'disabled';
}

/** "3 h 12 min", "5 min", "40 s" for an uptime or a wait; null stays null. */
export function duration(ms: number | null): string | null {
  if (ms === null || !Number.isFinite(ms) || ms < 0) return null;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}
