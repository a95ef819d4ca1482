/**
 * `reflect`: one LLM call without tools that steps back from the work — it reads the session's
 * todo list, scratchpad and latest context and says what is done, what is missing and what to
 * do next. Useful in long tasks before answering or when the agent is going in circles.
 */

import { z } from 'zod';
import type { Profile, ProfileRegistry } from '../../config/profiles.js';
import type { LlmBackend } from '../../llm/types.js';
import type { KvStore, SessionStore, StoredMessage } from '../../store/types.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok } from '../types.js';

export interface ReflectDeps {
  sessions: SessionStore;
  kv: KvStore;
  profiles: ProfileRegistry;
  /** The backend serving a profile (the agent's own choice); may throw when unavailable. */
  backendFor: (profile: Profile) => LlmBackend;
  /** KvStore keys used by the todo and scratchpad tools. */
  todoKey?: string;
  scratchpadKey?: string;
}

export const REFLECT_RECENT_MESSAGES = 20;
const MESSAGE_CHARS = 600;
const STATE_CHARS = 6_000;

const INSTRUCTIONS = `You review an AI assistant's progress on the user's current task. You get its todo list,
its scratchpad notes and the latest messages. Be honest and specific. Answer in three short sections:
Done: what is finished, with evidence from the messages or notes.
Missing: what the user asked for that is not done, unverified, or went wrong.
Next: the concrete next steps, in order (or "answer the user" if the task is complete).`;

/** Any JSON-ish value as readable text: strings as they are, lists one item a line, objects by key. */
export function describeState(value: unknown, depth = 0): string {
  if (value === undefined || value === null) return '(empty)';
  if (typeof value === 'string') return value.trim() || '(empty)';
  if (typeof value !== 'object') return String(value);
  if (depth > 2) return JSON.stringify(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '(empty)';
    return value.map((item) => `- ${describeItem(item, depth)}`).join('\n');
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '(empty)';
  return entries.map(([k, v]) => `${k}:\n${describeState(v, depth + 1)}`).join('\n');
}

/** A todo item such as {text, status} reads as "[status] text". */
function describeItem(item: unknown, depth: number): string {
  if (item && typeof item === 'object' && !Array.isArray(item)) {
    const o = item as Record<string, unknown>;
    const label = o.text ?? o.title ?? o.task ?? o.content ?? o.description;
    const status = o.status ?? (o.done === true ? 'done' : o.done === false ? 'open' : undefined);
    if (typeof label === 'string') return status !== undefined ? `[${String(status)}] ${label}` : label;
  }
  return describeState(item, depth + 1).replace(/\n/g, ' ');
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function messageLine(m: StoredMessage): string {
  const content = cut((m.content ?? '').trim(), MESSAGE_CHARS);
  if (m.role === 'tool') return `Result of ${m.name ?? 'tool'}: ${content}`;
  const calls = (m.tool_calls ?? []).map((c) => `${c.name}(${cut(JSON.stringify(c.arguments), 160)})`);
  const who =
    m.role === 'user'
      ? m.kind === 'summary'
        ? 'Summary'
        : 'User'
      : m.role === 'assistant'
        ? 'Assistant'
        : 'System';
  return `${who}: ${content}${calls.length ? `${content ? ' ' : ''}[calls ${calls.join(', ')}]` : ''}`;
}

const parameters = z.strictObject({
  focus: z.string().optional().describe('Optional question to concentrate the review on.'),
});

export function createReflectTool(deps: ReflectDeps): TypedTool<typeof parameters> {
  const todoKey = deps.todoKey ?? 'todo';
  const scratchpadKey = deps.scratchpadKey ?? 'scratchpad';
  return defineTool({
    name: 'reflect',
    group: 'agents',
    risk: { reads: true },
    description:
      'Steps back and reviews the current task from your todo list, scratchpad and the latest messages: what is ' +
      'done, what is missing, what to do next. Use it in long tasks before answering, or when stuck.',
    parameters,
    async execute(params, ctx) {
      const profileId = ctx.agent?.currentProfileId() ?? ctx.profileId;
      const profile = deps.profiles.get(profileId) ?? deps.profiles.getDefault();
      // The running agent's own context when there is one: a subagent's is not in the store.
      const live = ctx.agent?.context?.();
      const [todo, scratchpad, context] = await Promise.all([
        deps.kv.get(ctx.sessionId, todoKey),
        deps.kv.get(ctx.sessionId, scratchpadKey),
        live ?? deps.sessions.getContext(ctx.sessionId),
      ]);
      const recent = context.slice(-REFLECT_RECENT_MESSAGES).map(messageLine).join('\n') || '(no messages)';
      const asked = params.focus?.trim();
      const focus = asked ? `\n\nFocus on: ${asked}` : '';
      const input =
        `Todo list:\n${cut(describeState(todo), STATE_CHARS)}\n\n` +
        `Scratchpad:\n${cut(describeState(scratchpad), STATE_CHARS)}\n\n` +
        `Latest messages:\n${recent}${focus}`;
      let backend: LlmBackend;
      try {
        backend = deps.backendFor(profile);
      } catch (err) {
        return fail(`reflect has no LLM to ask: ${err instanceof Error ? err.message : String(err)}`);
      }
      try {
        const result = await backend.complete({
          messages: [
            { role: 'system', content: INSTRUCTIONS },
            { role: 'user', content: input },
          ],
          model: profile.model ?? backend.defaultModel,
          temperature: 0.2,
          think: false,
          signal: ctx.signal,
        });
        const text = result.content.trim();
        if (!text) return fail('The review came back empty; carry on with your todo list.');
        return ok(text);
      } catch (err) {
        return fail(
          `reflect could not get a review from the LLM: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    },
  });
}
