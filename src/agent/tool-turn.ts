/**
 * Runs the tool calls of one LLM turn concurrently through the executor, emits their events,
 * and turns the results into context messages in call order. An image a tool loaded goes into
 * the context only, as a synthetic user message (see docs/architecture.md#tool-calls), never into the display history.
 */
import type { Logger } from 'pino';
import type { ChatToolCall } from '../llm/types.js';
import { declinedByNavi } from '../mcp/client-requests.js';
import type { PublishedContent, UiComponent } from '../protocol/rest.js';
import type { BufferedMessage, StoredMessage } from '../store/types.js';
import type { ToolExecutor } from '../tools/executor.js';
import { toolOutcome } from '../tools/outcome.js';
import { policyFor } from '../tools/policy.js';
import type { AgentHandle, ElicitAnswer, ElicitRequest, ToolResult } from '../tools/types.js';
import { isRecord } from '../util/is-record.js';
import type { RunState } from './run-state.js';

export interface ToolTurnDeps {
  executor: ToolExecutor;
  logger: Logger;
  newId: () => string;
  now: () => Date;
  /** The agent as seen by the tool of call `callId` (a subagent it spawns nests under it). */
  handleFor: (state: RunState, callId: string) => AgentHandle;
}

/** Metadata safe to send to clients and to store: image bytes stay out of both. */
export function publicMetadata(
  metadata: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (!metadata) return undefined;
  const { base64: _omitted, more_images: _alsoOmitted, ...rest } = metadata;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

export async function runToolCalls(
  calls: ChatToolCall[],
  state: RunState,
  deps: ToolTurnDeps,
): Promise<BufferedMessage[]> {
  const results = await Promise.all(calls.map((call) => runOne(call, state, deps)));
  const entries: BufferedMessage[] = [];
  const images: string[] = [];
  results.forEach(({ result, shown }, i) => {
    const call = calls[i]!;
    const message: StoredMessage = {
      id: deps.newId(),
      role: 'tool',
      content: result.output,
      tool_call_id: call.id,
      name: call.name,
      created_at: deps.now().toISOString(),
      success: result.success,
      outcome: toolOutcome(result),
      ...resultFields(shown),
    };
    entries.push({ message, display: !state.isSubagent, context: true });
    const base64 = result.metadata?.base64;
    if (result.success && result.metadata?.is_image === true && typeof base64 === 'string') {
      images.push(base64);
      const more = result.metadata.more_images;
      if (Array.isArray(more)) images.push(...more.filter((m): m is string => typeof m === 'string'));
    }
  });
  if (images.length > 0) {
    const message: StoredMessage = {
      id: deps.newId(),
      role: 'user',
      content:
        images.length === 1
          ? 'Here is the image the tool loaded.'
          : `Here are the ${images.length} images the tools loaded.`,
      images,
      created_at: deps.now().toISOString(),
      kind: 'injected_image',
    };
    entries.push({ message, display: false, context: true });
  }
  return entries;
}

/**
 * The typed fields of a tool result message, from the metadata its `tool_call` event carried:
 * a well-formed UI component and published content get their own fields, the rest stays as
 * the tool reported it.
 */
export function resultFields(
  shown: Record<string, unknown> | undefined,
): Pick<StoredMessage, 'ui_component' | 'published' | 'tool_metadata'> {
  if (!shown) return {};
  const { ui_component, published, ...rest } = shown;
  // A malformed one is not dropped: it stays with the rest, as the event showed it.
  if (ui_component !== undefined && !isUiComponent(ui_component)) rest.ui_component = ui_component;
  if (published !== undefined && !isPublished(published)) rest.published = published;
  return {
    ...(isUiComponent(ui_component) ? { ui_component } : {}),
    ...(isPublished(published) ? { published } : {}),
    ...(Object.keys(rest).length > 0 ? { tool_metadata: rest } : {}),
  };
}

function isUiComponent(value: unknown): value is UiComponent {
  return isRecord(value) && typeof value.component === 'string' && isRecord(value.payload);
}

function isPublished(value: unknown): value is PublishedContent {
  return (
    isRecord(value) &&
    ['name', 'url', 'kind', 'mime_type', 'title'].every((key) => typeof value[key] === 'string')
  );
}

/** Runs one call and reports it; `shown` is the metadata the event carried, reused for storage. */
async function runOne(
  call: ChatToolCall,
  state: RunState,
  deps: ToolTurnDeps,
): Promise<{ result: ToolResult; shown: Record<string, unknown> | undefined }> {
  state.emit({
    type: 'tool_started',
    call_id: call.id,
    tool: call.name,
    args: call.arguments,
    is_subagent: state.isSubagent,
  });
  const log = deps.logger.child({ tool: call.name, call_id: call.id });
  const notes: FormNotes = { lines: [], more: 0 };
  const result = await deps.executor.execute(
    call,
    {
      sessionId: state.transcript.sessionId,
      runId: state.runId,
      callId: call.id,
      signal: state.signal,
      isSubagent: state.isSubagent,
      depth: state.depth,
      profileId: state.profile.id,
      emit: state.emit,
      confirm: (request) => {
        const ticket = state.ask(request);
        // Through the run's own stream, so it lands after `tool_started` and before `tool_call`.
        if (ticket.asked)
          state.emit({
            type: 'tool_confirm_request',
            call_id: request.callId,
            tool: request.tool,
            args: request.args,
          });
        return ticket.answer;
      },
      elicit: askForm(state, notes),
      log,
      agent: deps.handleFor(state, call.id),
      ...(state.recall ? { recall: state.recall } : {}),
    },
    // The policy of the backend whose model asked for the call: what it was not offered by its
    // policy, it may not call by name either.
    policyFor(state.profile, state.backendId),
  );
  // A form declined or cancelled without the person: the model learns why, to tell the person.
  if (notes.lines.length > 0) {
    const more = notes.more > 0 ? ` ${notes.more} more requests of the server ended the same way.` : '';
    result.output = `${result.output}\n\n[Navi: ${notes.lines.join(' ')}${more}]`;
  }
  state.calls.push({ name: call.name, success: result.success });
  const metadata = publicMetadata(result.metadata);
  state.emit({
    type: 'tool_call',
    call_id: call.id,
    tool: call.name,
    args: call.arguments,
    result: result.output,
    success: result.success,
    outcome: toolOutcome(result),
    is_subagent: state.isSubagent,
    ...(metadata ? { metadata } : {}),
  });
  return { result, shown: metadata };
}

/** The forms of one call Navi declined or cancelled on its own, for the call's result. */
interface FormNotes {
  lines: string[];
  /** Beyond `MAX_FORM_NOTES`: only counted, so a server asking in a loop cannot grow the result. */
  more: number;
}

export const MAX_FORM_NOTES = 3;

/** Why a form was declined when the run has no broker for forms at all. */
export const NO_FORM_BROKER = 'this run cannot show a form to anyone';

/**
 * An MCP server's form through the run's broker: announced in the run's own stream (after the
 * call's `tool_started`, before its `tool_call`), and its end too, however it ends. A decline or
 * cancel Navi made on its own is noted for the call's result.
 */
function askForm(state: RunState, notes: FormNotes): (request: ElicitRequest) => Promise<ElicitAnswer> {
  return async (request) => {
    // Declined by Navi before anyone was asked (docs/mcp.md#elicitation): only noted.
    const declined = declinedByNavi(request.signal);
    const ticket = (declined === undefined ? state.elicit?.(request) : undefined) ?? {
      asked: false,
      answer: Promise.resolve<ElicitAnswer>({ action: 'decline', reason: declined ?? NO_FORM_BROKER }),
    };
    const id = request.id;
    if (ticket.asked)
      state.emit({
        type: 'elicitation_request',
        elicitation_id: id,
        call_id: request.callId,
        server: request.server,
        message: request.message,
        form: request.form,
      });
    const answer = await ticket.answer;
    const reason = answer.action === 'accept' ? undefined : answer.reason;
    if (ticket.asked)
      state.emit({
        type: 'elicitation_resolved',
        elicitation_id: id,
        action: answer.action,
        ...(reason !== undefined ? { reason } : {}),
      });
    if (reason !== undefined && notes.lines.length >= MAX_FORM_NOTES) notes.more += 1;
    else if (reason !== undefined) {
      const asked = request.message.length > 200 ? `${request.message.slice(0, 199)}…` : request.message;
      const ended = answer.action === 'decline' ? 'declined' : 'cancelled';
      // No message: the question may have been another run's, so it is not passed on.
      const quoted = asked === '' ? '' : ` ("${asked}")`;
      notes.lines.push(
        `MCP server ${request.server} asked the person for input${quoted}; Navi ${ended} it because ${reason}.`,
      );
    }
    return answer;
  };
}

/** Gives every call of a turn a unique, non-empty id (some models repeat or omit them). */
export function normaliseCallIds(calls: ChatToolCall[], newId: () => string): ChatToolCall[] {
  const seen = new Set<string>();
  return calls.map((c) => {
    const id = c.id && !seen.has(c.id) ? c.id : `call_${newId()}`;
    seen.add(id);
    return { ...c, id, arguments: c.arguments && typeof c.arguments === 'object' ? c.arguments : {} };
  });
}
