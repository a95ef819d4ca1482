/**
 * Runs for clients other than Navi's own web client: the OpenAI-compatible API and Navi's MCP
 * server. They start a run like the REST route does and follow its events as an `internal`
 * subscriber; the run's `source` makes it refuse tool confirmations, since nobody on those
 * clients can answer one. The words they use for tool activity are chosen here, once.
 */
import { randomUUID } from 'node:crypto';
import type { RunInput } from '../agent/types.js';
import type { RunUsage, ServerEvent } from '../protocol/events.js';
import type { SessionRecord } from '../store/types.js';
import type { AgentRun } from './agent-run.js';
import type { RunRegistry } from './run-registry.js';
import type { NaviServices } from './services.js';

/** A new session of `profileId`, announced as `POST /sessions` announces one. */
export async function createSession(services: NaviServices, profileId: string): Promise<SessionRecord> {
  const session = await services.sessions.create({ id: randomUUID(), profile_id: profileId });
  services.onSessionCreated?.(session.id);
  return session;
}

/**
 * Removes a session a request created for a run that then could not start, so a refusal leaves
 * no empty session behind: only when no run uses it and it holds no message. The removal is
 * announced as `DELETE /sessions/{id}` announces one (`onSessionDeleted`), which also forgets
 * what pointed at it (an OpenAI conversation key). Resolves to whether it was removed.
 */
export async function discardEmptySession(
  services: NaviServices,
  runs: Pick<RunRegistry, 'busy'>,
  sessionId: string,
): Promise<boolean> {
  if (await runs.busy(sessionId)) return false;
  const page = await services.sessions.getMessagePage(sessionId, { limit: 1 });
  if (!page || page.messages.length > 0) return false;
  if (!(await services.sessions.delete(sessionId))) return false;
  await services.onSessionDeleted?.(sessionId);
  return true;
}

/**
 * Starts a run in `sessionId` and hands every event to `onEvent`, from the first (the run's
 * replay covers what came before the subscription). Throws RUN_ACTIVE when the session is
 * already answering, SHUTTING_DOWN while the server closes.
 */
export async function startHeadlessRun(
  runs: RunRegistry,
  sessionId: string,
  input: RunInput,
  onEvent: (event: ServerEvent) => void,
): Promise<AgentRun> {
  const run = await runs.start(sessionId, input);
  run.subscribe({
    kind: 'internal',
    deliver: (event) => {
      onEvent(event);
      return true;
    },
  });
  return run;
}

/** The run's usage from its terminal event; zero for a run that failed before any LLM call. */
export function usageOf(terminal: ServerEvent): RunUsage {
  if ((terminal.type === 'stream_end' || terminal.type === 'stream_stopped') && terminal.usage)
    return terminal.usage;
  return { prompt_tokens: 0, completion_tokens: 0 };
}

/** Longest argument or result summary shown in an activity line. */
const ARGS_SHOWN = 200;

function brief(text: string): string {
  return text.length > ARGS_SHOWN ? `${text.slice(0, ARGS_SHOWN)}…` : text;
}

/**
 * One line saying what the agent does, for events a headless client shows as progress (the
 * OpenAI API's reasoning text, the MCP server's progress notifications); undefined for the rest.
 * A subagent's calls are indented under its `spawn_agent`.
 */
export function activityLine(event: ServerEvent): string | undefined {
  const indent = 'is_subagent' in event && event.is_subagent ? '  ' : '';
  switch (event.type) {
    case 'tool_started':
      return `${indent}→ ${event.tool} ${brief(JSON.stringify(event.args))}`;
    case 'tool_call': {
      const summary = brief(event.result.split('\n', 1)[0] ?? '');
      return `${indent}${event.success ? '✓' : '✗'} ${event.tool}${summary ? `: ${summary}` : ''}`;
    }
    case 'plan_ready':
      return `Plan:\n${event.plan}`;
    case 'context_compressed':
      return `(the conversation was summarised: ${event.messages_before} → ${event.messages_after} messages)`;
    case 'error':
      return event.recoverable ? `(${event.message})` : undefined;
    default:
      return undefined;
  }
}
