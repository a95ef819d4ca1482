/**
 * `memory`: the agent's hands on long-term memory — save a durable fact, search
 * what is known, forget a fact the user asks to forget. Usage rules: manuals/memory.md.
 */

import { z } from 'zod';
import type { HybridMemorySearch } from '../../memory/search.js';
import { type MemoryStore, MemoryValidationError } from '../../memory/types.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok, type ToolContext, type ToolResult } from '../types.js';

export interface MemoryToolDeps {
  store: MemoryStore;
  search: HybridMemorySearch;
}

const parameters = z.strictObject({
  action: z.enum(['save', 'search', 'forget']).describe('What to do.'),
  category: z
    .string()
    .optional()
    .describe(
      'save/forget: short group name such as personal, preference, work, project, environment, contact.',
    ),
  key: z
    .string()
    .optional()
    .describe('save/forget: short snake_case name of the fact, unique within its category.'),
  value: z.string().optional().describe('save: the fact as one self-contained sentence.'),
  query: z.string().optional().describe('search: words describing what you are looking for.'),
  limit: z.int().min(1).max(50).optional().describe('search: how many facts at most (default 10).'),
  id: z.int().min(1).optional().describe('forget: the fact id shown by search.'),
});

type Params = z.output<typeof parameters>;

/** The value when it has more than blanks. */
function text(value: string | undefined): string | undefined {
  return value?.trim() ? value : undefined;
}

export function createMemoryTool(deps: MemoryToolDeps): TypedTool<typeof parameters> {
  return defineTool({
    name: 'memory',
    group: 'memory',
    risk: { reads: true, writes: true },
    description:
      'Long-term memory about the user, kept across sessions. action=save {category, key, value} stores or ' +
      'updates a durable fact; action=search {query, limit?} finds facts by words and meaning; action=forget ' +
      '{id} or {category, key} deletes a fact (only when the user asks). See tool_manual("memory").',
    parameters,
    async execute(params, ctx) {
      switch (params.action) {
        case 'save':
          return save(deps, params, ctx);
        case 'search':
          return search(deps, params, ctx);
        case 'forget':
          return forget(deps, params);
      }
    },
  });
}

async function save(deps: MemoryToolDeps, params: Params, ctx: ToolContext): Promise<ToolResult> {
  const category = text(params.category);
  const key = text(params.key);
  const value = text(params.value);
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

async function search(deps: MemoryToolDeps, params: Params, ctx: ToolContext): Promise<ToolResult> {
  const query = text(params.query);
  if (!query)
    return fail('search needs a non-empty "query", e.g. {"action":"search","query":"home server"}.');
  const limit = params.limit ?? 10;
  const { hits, mode } = await deps.search.search(query, { limit, signal: ctx.signal });
  if (hits.length === 0) return ok(`No remembered facts match "${query.slice(0, 200)}".`, { count: 0, mode });
  const lines = hits.map(
    (h) =>
      `#${h.fact.id} [${h.fact.category}] ${h.fact.key}: ${h.fact.value} (updated ${h.fact.updated_at.slice(0, 10)})`,
  );
  return ok(`${hits.length} fact(s):\n${lines.join('\n')}`, { count: hits.length, mode });
}

async function forget(deps: MemoryToolDeps, params: Params): Promise<ToolResult> {
  const { id } = params;
  const category = text(params.category);
  const key = text(params.key);
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
