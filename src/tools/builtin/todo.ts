/**
 * `todo`: the session's checklist for multi-step work. The agent sets the plan as a list,
 * moves items through their statuses as it goes, and reads it back; the `open_todos` context
 * provider shows the open items in every system prompt so the plan survives long runs.
 * Stored per session in the KvStore, so it survives restarts; subagents have their own.
 */
import type { KvStore } from '../../store/types.js';
import { fail, ok, type ToolDefinition, type ToolParams, type ToolResult } from '../types.js';

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

export function createTodoTool(kv: KvStore): ToolDefinition {
  return {
    name: 'todo',
    group: 'session',
    description:
      'Your checklist for this session. Use it for any task of three or more steps: ' +
      '"set" the steps as a list before starting, "update" one item (by id) to in_progress when you ' +
      'start it and to done, failed or skipped when it ends, "read" to see the list. ' +
      'Statuses: pending, in_progress, done, failed, skipped.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['set', 'update', 'read'] },
        tasks: {
          type: 'array',
          description: 'For set: the steps in order; replaces the whole list.',
          items: { type: 'string', minLength: 1 },
          maxItems: MAX_ITEMS,
        },
        id: { type: 'integer', minimum: 1, description: 'For update: the item number.' },
        status: { type: 'string', enum: [...TODO_STATUSES], description: 'For update: the new status.' },
        note: {
          type: 'string',
          description: 'For update: optional short note (why it failed, what was found).',
        },
      },
      required: ['action'],
      additionalProperties: false,
    },
    async execute(params: ToolParams, ctx): Promise<ToolResult> {
      const action = params.action as 'set' | 'update' | 'read';
      if (action === 'read') return ok(formatTodos(await readTodos(kv, ctx.sessionId)));
      if (action === 'set') {
        if (!Array.isArray(params.tasks)) return fail('"set" needs "tasks": the list of steps, in order.');
        const items: TodoItem[] = (params.tasks as string[]).map((task, i) => ({
          id: i + 1,
          task: task.trim(),
          status: 'pending',
        }));
        await kv.set(ctx.sessionId, TODO_KV_KEY, items);
        return ok(formatTodos(items));
      }
      const id = params.id;
      const status = params.status as TodoStatus | undefined;
      if (typeof id !== 'number' || !status)
        return fail('"update" needs "id" (the item number) and "status".');
      const items = await readTodos(kv, ctx.sessionId);
      const item = items.find((i) => i.id === id);
      if (!item) {
        return fail(`There is no item ${id}; the list has ${items.length} item(s). Use "read" to see them.`);
      }
      item.status = status;
      if (typeof params.note === 'string' && params.note.trim() !== '') item.note = params.note.trim();
      await kv.set(ctx.sessionId, TODO_KV_KEY, items);
      return ok(formatTodos(items));
    },
  };
}
