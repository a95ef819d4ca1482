/**
 * `ask_navi`: runs the agent for an MCP host, in a session of its choosing or a new one, and
 * answers with the final text and the session id to continue with. While the agent works, a host
 * that asked for progress (a `progressToken`) gets a notification per tool activity and now and
 * then while the answer is written. Nobody on an MCP host can approve a tool, so the run's
 * `source: 'mcp'` refuses every confirmation (the answer then says what was refused).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ServerEvent } from '../../protocol/events.js';
import type { AgentRun } from '../agent-run.js';
import { ApiError } from '../errors.js';
import { activityLine, createSession, discardEmptySession, startHeadlessRun } from '../headless-run.js';
import { isUuid } from '../session-lookup.js';
import { toolError } from './results.js';
import type { NaviMcpDeps } from './server.js';

/** Longest message accepted, in characters: a task, not a data dump. */
export const MAX_MESSAGE_CHARS = 1_000_000;
/** Answer text streamed between two "still writing" progress notifications, at the least. */
const WRITING_PROGRESS_MS = 3000;

const inputSchema = {
  message: z
    .string()
    .min(1, 'message is empty: say what Navi should do')
    .max(
      MAX_MESSAGE_CHARS,
      `message is longer than ${MAX_MESSAGE_CHARS} characters: send a shorter one, or a path to a file Navi can read`,
    )
    .describe('What Navi should do or answer, in plain words.'),
  session_id: z
    .string()
    .max(100)
    .optional()
    .describe('Continue this Navi session (the session_id of an earlier answer). Omit to start a new one.'),
  profile: z
    .string()
    .max(200)
    .optional()
    .describe("The agent profile of a new session (default: Navi's default profile)."),
};

const outputSchema = {
  answer: z.string().describe("Navi's final answer (the partial one when the run was stopped)."),
  session_id: z.string().describe('The session the answer is in: pass it back to continue.'),
  stopped: z.boolean().describe('True when the run was stopped before it finished.'),
};

interface ProgressSender {
  (message: string): void;
  /** Resolves once every notification so far is sent: the result must not overtake them. */
  flushed(): Promise<void>;
}

/** Sends `notifications/progress` with increasing `progress`, when the call asked for it. */
function progressSender(
  token: string | number | undefined,
  send: (notification: ServerNotification) => Promise<void>,
): ProgressSender {
  let progress = 0;
  let sent = Promise.resolve();
  const sender = (message: string) => {
    if (token === undefined) return;
    progress += 1;
    const params = { progressToken: token, progress, message };
    // In order, one after the other; a host that went away cannot be told, and the run goes on
    // (or is stopped by the abort signal).
    sent = sent.then(() => send({ method: 'notifications/progress', params })).catch(() => {});
  };
  return Object.assign(sender, { flushed: () => sent });
}

/** The session to run in, or the error a tool call answers with. */
async function sessionFor(
  deps: NaviMcpDeps,
  sessionId: string | undefined,
  profile: string | undefined,
): Promise<{ id: string; created: boolean } | { error: string }> {
  const { services } = deps;
  if (profile !== undefined && !services.profiles.has(profile)) {
    const known = services.profiles
      .list()
      .map((p) => p.id)
      .join(', ');
    return { error: `There is no agent profile "${profile}". Profiles: ${known}.` };
  }
  if (sessionId === undefined) {
    const session = await createSession(services, profile ?? services.profiles.getDefault().id);
    return { id: session.id, created: true };
  }
  if (!isUuid(sessionId))
    return {
      error: `session_id "${sessionId}" is not a Navi session id (a UUID such as 0b6f…-…); use one from an earlier answer or list_sessions, or omit it to start a new session.`,
    };
  const session = await services.sessions.get(sessionId);
  if (!session)
    return {
      error: `There is no session ${sessionId}: it may have been deleted. Use list_sessions to find one, or omit session_id to start a new session.`,
    };
  if (profile !== undefined && profile !== session.profile_id)
    return {
      error: `Session ${sessionId} uses the profile "${session.profile_id}", not "${profile}": omit profile to continue it, or omit session_id to start a new session with "${profile}".`,
    };
  return { id: session.id, created: false };
}

/** Follows a run to its end, reporting activity as progress. */
function follow(progress: ProgressSender, now: () => number) {
  let lastWriting = now();
  let written = 0;
  return (event: ServerEvent) => {
    if (event.type === 'stream_start') {
      progress('Navi is working on it…');
      return;
    }
    if (event.type === 'stream_delta') {
      written += event.delta.length;
      if (now() - lastWriting >= WRITING_PROGRESS_MS) {
        lastWriting = now();
        progress(`Writing the answer… (${written} characters so far)`);
      }
      return;
    }
    const line = activityLine(event);
    if (line !== undefined) {
      lastWriting = now();
      progress(line);
    }
  };
}

async function askNavi(
  deps: NaviMcpDeps,
  args: { message: string; session_id?: string | undefined; profile?: string | undefined },
  signal: AbortSignal,
  progress: ProgressSender,
): Promise<CallToolResult> {
  const target = await sessionFor(deps, args.session_id, args.profile);
  if ('error' in target) return toolError(target.error);
  const sessionId = target.id;
  let run: AgentRun;
  try {
    run = await startHeadlessRun(
      deps.runs,
      sessionId,
      { content: args.message, trigger: 'user', source: 'mcp' },
      follow(progress, Date.now),
    );
  } catch (err) {
    // A refused call leaves no empty session behind; best effort: the call answers with why the
    // run did not start whatever happens here, and an empty session left can be deleted as any.
    if (target.created) await discardEmptySession(deps.services, deps.runs, sessionId).catch(() => false);
    if (err instanceof ApiError && err.code === 'RUN_ACTIVE')
      return toolError(
        `${err.message}. Session ${sessionId} is answering another message right now: wait until that answer is done, or ask in a new session (omit session_id).`,
      );
    if (err instanceof ApiError) return toolError(`${err.message}. Try again in a moment.`);
    throw err;
  }
  // The host cancelled the call (or went away): the run stops and keeps what it had written.
  const stop = () => run.stop();
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  let terminal: ServerEvent;
  try {
    terminal = await run.done;
  } finally {
    signal.removeEventListener('abort', stop);
  }
  await progress.flushed();
  if (terminal.type === 'stream_end' || terminal.type === 'stream_stopped') {
    const stopped = terminal.type === 'stream_stopped';
    const answer = terminal.content;
    const shown =
      answer || (stopped ? '(The run was stopped before Navi wrote an answer.)' : '(Navi gave no answer.)');
    return {
      content: [
        { type: 'text', text: shown },
        { type: 'text', text: `session_id: ${sessionId}` },
      ],
      structuredContent: { answer, session_id: sessionId, stopped },
    };
  }
  const why = terminal.type === 'error' ? terminal.message : 'the run ended unexpectedly';
  return toolError(
    `Navi could not answer: ${why}. The session is ${sessionId}; ask again there (session_id) once the cause is fixed.`,
  );
}

export function registerAskNavi(server: McpServer, deps: NaviMcpDeps): void {
  server.registerTool(
    'ask_navi',
    {
      title: 'Ask Navi',
      description:
        "Gives Navi, the user's personal AI agent, a task or question and waits for its answer. Navi uses its " +
        'own tools (files, shell, web, memory…) as its profile allows; tools that need the user to approve ' +
        'them are refused here. Returns the answer and the session_id: pass it back to continue the same ' +
        'conversation. Progress notifications report what Navi does meanwhile.',
      inputSchema,
      outputSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    (args, extra) =>
      askNavi(
        deps,
        args,
        extra.signal,
        progressSender(extra._meta?.progressToken, (n) => extra.sendNotification(n)),
      ),
  );
}
