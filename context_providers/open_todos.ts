/**
 * Context provider: the session's open todo items, so a long run keeps its plan in view even
 * after older turns were compressed. Empty (section left out) when nothing is open.
 */
import type { KvStore } from '../src/store/types.js';
import { isOpen, readTodos } from '../src/tools/builtin/todo.js';

export const name = 'Open todo items';

export async function provide(ctx: { sessionId: string; kv: KvStore }): Promise<string> {
  const items = await readTodos(ctx.kv, ctx.sessionId);
  const open = items.filter(isOpen);
  if (open.length === 0) return '';
  const lines = open.map((i) => `${i.id}. ${i.task} (${i.status})`);
  return `${lines.join('\n')}\n(${items.length - open.length} of ${items.length} items closed; update them with the todo tool.)`;
}
