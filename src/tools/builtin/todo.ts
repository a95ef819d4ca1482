/**
 * `todo`: the session's checklist for multi-step work. The agent sets the plan as a list,
 * moves items through their statuses as it goes, and reads it back; the `open_todos` context
 * provider shows the open items in every system prompt so the plan survives long runs.
 * Stored per session in the KvStore, so it survives restarts; subagents have their own.
 */

import { z } from 'zod';
import type { KvStore } from '../../store/types.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

/** KvStore key of the list (read by `context_providers/open_todos.ts`). */
export const TODO_KV_KEY = 'todo';
export const TODO_STATUSES = ['pending', 'in_progress', 'done', 'failed', 'skipped'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

export interface TodoItem {
  id: number;
  task: string;
  status: TodoStatus;
  note?: string;
}

const MARK: Record<TodoStatus, string> = {
  pending: '[ ]',
  in_progress: '[~]',
  done: '[x]',
  failed: '[!]',
  skipped: '[-]',
};
const MAX_ITEMS = 100;

/** The session's items; anything unreadable in the store counts as no list. */
export async function readTodos(kv: KvStore, sessionId: string): Promise<TodoItem[]> {
  const value = await kv.get<unknown>(sessionId, TODO_KV_KEY);
  return Array.isArray(value) ? (value as TodoItem[]) : [];
}

/** Whether an item still needs work. */
export function isOpen(item: TodoItem): boolean {
  return item.status === 'pending' || item.status === 'in_progress';
}

export function formatTodos(items: readonly TodoItem[]): string {
  if (items.length === 0) return 'The todo list is empty.';
  const done = items.filter((i) => i.status === 'done').length;
  const lines = items.map(
    (i) => `${i.id}. ${MARK[i.status]} ${i.task}${i.note ? ` — ${i.note}` : ''} (${i.status})`,
  );
  return `${lines.join('\n')}\n${done}/${items.length} done.`;
}

const parameters = z.strictObject({
  action: z.enum(['set', 'update', 'read']),
  tasks: z
    .array(z.string().min(1))
    .max(MAX_ITEMS)
    .optional()
    .describe('For set: the steps in order; replaces the whole list.'),
  id: z.int().min(1).optional().describe('For update: the item number.'),
  status: z.enum(TODO_STATUSES).optional().describe('For update: the new status.'),
  note: z.string().optional().describe('For update: optional short note (why it failed, what was found).'),
});

export function createTodoTool(kv: KvStore): TypedTool<typeof parameters> {
  return defineTool({
    name: 'todo',
    group: 'session',
    // Only the session's own checklist.
    risk: {},
    description:
      'Your checklist for this session. Use it for any task of three or more steps: ' +
      '"set" the steps as a list before starting, "update" one item (by id) to in_progress when you ' +
      'start it and to done, failed or skipped when it ends, "read" to see the list. ' +
      'Statuses: pending, in_progress, done, failed, skipped.',
    parameters,
    async execute(params, ctx) {
      const { action } = params;
      if (action === 'read') return ok(formatTodos(await readTodos(kv, ctx.sessionId)));
      if (action === 'set') {
        if (!params.tasks) return fail('"set" needs "tasks": the list of steps, in order.');
        const items: TodoItem[] = params.tasks.map((task, i) => ({
          id: i + 1,
          task: task.trim(),
          status: 'pending',
        }));
        await kv.set(ctx.sessionId, TODO_KV_KEY, items);
        return ok(formatTodos(items));
      }
      const { id, status } = params;
      if (id === undefined || !status) return fail('"update" needs "id" (the item number) and "status".');
      const items = await readTodos(kv, ctx.sessionId);
      const item = items.find((i) => i.id === id);
      if (!item) {
        return fail(`There is no item ${id}; the list has ${items.length} item(s). Use "read" to see them.`);
      }
      item.status = status;
      const note = params.note?.trim();
      if (note) item.note = note;
      await kv.set(ctx.sessionId, TODO_KV_KEY, items);
      return ok(formatTodos(items));
    },
  });
}
