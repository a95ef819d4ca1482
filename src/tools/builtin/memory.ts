/**
 * `memory`: the agent's hands on long-term memory (DESIGN §11) — save a durable fact, search
 * what is known, forget a fact the user asks to forget. Usage rules: manuals/memory.md.
 */
import type { HybridMemorySearch } from '../../memory/search.js';
import { type MemoryStore, MemoryValidationError } from '../../memory/types.js';
import {
  fail,
  ok,
  type ToolContext,
  type ToolDefinition,
  type ToolParams,
  type ToolResult,
} from '../types.js';

export interface MemoryToolDeps {
  store: MemoryStore;
  search: HybridMemorySearch;
}

const parameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['save', 'search', 'forget'], description: 'What to do.' },
    category: {
      type: 'string',
      description:
        'save/forget: short group name such as personal, preference, work, project, environment, contact.',
    },
    key: {
      type: 'string',
      description: 'save/forget: short snake_case name of the fact, unique within its category.',
    },
    value: { type: 'string', description: 'save: the fact as one self-contained sentence.' },
    query: { type: 'string', description: 'search: words describing what you are looking for.' },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 50,
      description: 'search: how many facts at most (default 10).',
    },
    id: { type: 'integer', minimum: 1, description: 'forget: the fact id shown by search.' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;

function text(params: ToolParams, name: string): string | undefined {
  const v = params[name];
  return typeof v === 'string' && v.trim() ? v : undefined;
}

export function createMemoryTool(deps: MemoryToolDeps): ToolDefinition {
  return {
    name: 'memory',
    group: 'memory',
    description:
      'Long-term memory about the user, kept across sessions. action=save {category, key, value} stores or ' +
      'updates a durable fact; action=search {query, limit?} finds facts by words and meaning; action=forget ' +
      '{id} or {category, key} deletes a fact (only when the user asks). See tool_manual("memory").',
    parameters,
    async execute(params: ToolParams, ctx: ToolContext): Promise<ToolResult> {
      switch (params.action) {
        case 'save':
          return save(deps, params, ctx);
        case 'search':
          return search(deps, params, ctx);
        case 'forget':
          return forget(deps, params);
        default:
          return fail('Unknown action. Use "save", "search" or "forget".');
      }
    },
  };
}

async function save(deps: MemoryToolDeps, params: ToolParams, ctx: ToolContext): Promise<ToolResult> {
  const category = text(params, 'category');
  const key = text(params, 'key');
  const value = text(params, 'value');
  if (!category || !key || !value) {
    return fail(
      'save needs "category", "key" and "value", e.g. {"action":"save","category":"preference","key":"editor","value":"Uses Neovim"}.',
    );
  }
  try {
    const { fact, created } = await deps.store.upsert({
      category,
      key,
      value,
      source_session_id: ctx.isSubagent ? null : ctx.sessionId,
    });
    // Best effort: without a vector the fact is still found by its words.
    await deps.search.indexFact(fact, ctx.signal);
    return ok(
      `${created ? 'Saved' : 'Updated'} fact #${fact.id} [${fact.category}] ${fact.key}: ${fact.value}`,
      {
        fact_id: fact.id,
        created,
      },
    );
  } catch (err) {
    if (err instanceof MemoryValidationError) return fail(err.message);
    throw err;
  }
}

async function search(deps: MemoryToolDeps, params: ToolParams, ctx: ToolContext): Promise<ToolResult> {
  const query = text(params, 'query');
  if (!query)
    return fail('search needs a non-empty "query", e.g. {"action":"search","query":"home server"}.');
  const limit = typeof params.limit === 'number' ? params.limit : 10;
  const { hits, mode } = await deps.search.search(query, { limit, signal: ctx.signal });
  if (hits.length === 0) return ok(`No remembered facts match "${query.slice(0, 200)}".`, { count: 0, mode });
  const lines = hits.map(
    (h) =>
      `#${h.fact.id} [${h.fact.category}] ${h.fact.key}: ${h.fact.value} (updated ${h.fact.updated_at.slice(0, 10)})`,
  );
  return ok(`${hits.length} fact(s):\n${lines.join('\n')}`, { count: hits.length, mode });
}

async function forget(deps: MemoryToolDeps, params: ToolParams): Promise<ToolResult> {
  const id = typeof params.id === 'number' ? params.id : undefined;
  const category = text(params, 'category');
  const key = text(params, 'key');
  if (id === undefined && (!category || !key)) {
    return fail('forget needs "id" (from search) or both "category" and "key".');
  }
  const ref = id !== undefined ? { id } : { category: category!, key: key! };
  const fact = id !== undefined ? await deps.store.get(id) : await deps.store.getByKey(category!, key!);
  const removed = await deps.store.delete(ref);
  if (!removed || !fact) {
    const what = id !== undefined ? `#${id}` : `[${category}] ${key}`;
    return fail(`No fact ${what} is remembered. Search first to find the fact's id.`);
  }
  return ok(`Forgot fact #${fact.id} [${fact.category}] ${fact.key}: ${fact.value}`, { fact_id: fact.id });
}
