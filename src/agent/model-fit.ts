/**
 * Fitting each LLM call to the model that answers it (docs/local-models.md): which backend and
 * model (decided anew at every call, since the default backend can change while Navi runs), what
 * the model can do, the context window it really has, the tools it is offered and the images it
 * may see. What the person should know about it goes out as a `notice`, once per run and code.
 */
import type { Settings } from '../config/settings.js';
import { effectiveContext } from '../llm/capabilities.js';
import { resolveModel } from '../llm/model-choice.js';
import type { BackendRegistry } from '../llm/registry.js';
import type { ChatMessage, LlmBackend, ModelCapabilities, ToolSpec } from '../llm/types.js';
import type { NoticeCode } from '../protocol/events.js';
import type { StoredMessage } from '../store/types.js';
import type { ToolExecutor } from '../tools/executor.js';
import { policyFor, toolBudgetRatioFor } from '../tools/policy.js';
import { type BudgetConversation, selectTools } from '../tools/tool-budget.js';
import type { RunState } from './run-state.js';

/** Asks what a model can do; never rejects (see `CapabilityCache.get`). */
export type CapabilityLookup = (
  backend: LlmBackend,
  model: string,
  signal: AbortSignal,
) => Promise<ModelCapabilities>;

export interface ModelFitDeps {
  models: BackendRegistry;
  /** Absent: every capability is assumed, as for a backend that cannot tell. */
  capabilities?: CapabilityLookup;
  settings: Pick<Settings, 'TOOL_BUDGET_RATIO'>;
}

/** The backend and model of one call, what the model can do, and the window the call uses. */
export interface ModelCall {
  backend: LlmBackend;
  model: string;
  caps: ModelCapabilities;
  /** The backend's window, never more than the model takes. */
  window: number;
}

/** The setting that sets each backend's context window, for messages. */
const WINDOW_SETTING: Record<string, string> = {
  ollama: 'OLLAMA_NUM_CTX',
  openai: 'OPENAI_NUM_CTX',
  llamacpp: 'LLAMACPP_NUM_CTX',
};

/**
 * The model of the run's next call: the session's choice, else the profile's, else the live
 * default (`resolveModel`), with its capabilities and window. Throws, like `resolveModel`, with a
 * sentence saying what to configure when the backend is unavailable. Emits CONTEXT_CLAMPED when
 * the model takes less context than its backend is set to.
 */
export async function modelCall(state: RunState, deps: ModelFitDeps): Promise<ModelCall> {
  const { backend, model } = resolveModel(deps.models, state.profile, state.modelOverride);
  const caps = deps.capabilities
    ? await deps.capabilities(backend, model, state.signal)
    : { source: 'capabilities not asked' };
  const window = effectiveContext(backend, caps);
  if (window < backend.contextWindow)
    notice(
      state,
      'CONTEXT_CLAMPED',
      `${model} takes at most ${window} tokens of context, less than the ${backend.contextWindow} ` +
        `set for ${backend.id} (${WINDOW_SETTING[backend.id] ?? 'its context setting'}), so Navi uses ${window}.`,
    );
  return { backend, model, caps, window };
}

/** The model of the run's next call, or undefined when its backend is unavailable. */
export async function modelCallOrNone(state: RunState, deps: ModelFitDeps): Promise<ModelCall | undefined> {
  try {
    return await modelCall(state, deps);
  } catch {
    return undefined;
  }
}

/**
 * The tools offered on `call`: none when the model cannot call tools; else those the effective
 * policy (the profile with its section for this backend) allows, within the tool budget.
 */
export function offeredTools(
  state: RunState,
  call: ModelCall,
  executor: Pick<ToolExecutor, 'specsFor'>,
  deps: ModelFitDeps,
): ToolSpec[] {
  if (call.caps.tools === false) {
    notice(
      state,
      'TOOLS_UNSUPPORTED',
      `${call.model} cannot call tools, so it answers without them; choose a model with tool calling to let Navi act.`,
    );
    return [];
  }
  const specs = executor.specsFor(policyFor(state.profile, call.backend.id));
  if (specs.length === 0) return specs;
  const ratio = toolBudgetRatioFor(state.profile, call.backend.id, deps.settings.TOOL_BUDGET_RATIO);
  const budgetTokens = Math.floor(ratio * call.window);
  const selection = selectTools(specs, {
    budgetTokens,
    conversation: conversationOf(state.context),
    keep: calledTools(state.context),
  });
  if (selection.trimmed)
    notice(
      state,
      'TOOLS_TRIMMED',
      `Offered ${selection.specs.length} of ${selection.total} tools to ${call.model}: all of them would take about ` +
        `${selection.allTokens} tokens, more than its tool budget of ${budgetTokens} (${ratio} of a ${call.window}-token context). ` +
        'The most relevant were offered; the model can still reach the others through list_tools and tool_manual. ' +
        'A model with a larger context, or tool_budget_ratio in the profile, offers more.',
    );
  return selection.specs;
}

/**
 * `messages` for a model that reads text only: each image becomes a line saying it was not
 * shown. The message intake refuses the user's images for such a model; this covers images a
 * tool loaded, and a session whose model was changed after images were sent.
 */
export function textOnly(messages: ChatMessage[], call: ModelCall): ChatMessage[] {
  if (call.caps.vision !== false) return messages;
  return messages.map((m) => {
    if (!m.images || m.images.length === 0) return m;
    const { images, ...rest } = m;
    const marker =
      images.length === 1
        ? `[An image is not shown here: ${call.model} reads text only.]`
        : `[${images.length} images are not shown here: ${call.model} reads text only.]`;
    return { ...rest, content: m.content ? `${m.content}\n${marker}` : marker };
  });
}

/** Sends `notice` once per run and code (a subagent shares its parent's set). */
export function notice(state: RunState, code: NoticeCode, message: string): void {
  if (state.notices.has(code)) return;
  state.notices.add(code);
  state.emit({ type: 'notice', code, message });
}

/** The conversation the tool ranking reads: the latest user message, and recent text before it. */
function conversationOf(context: readonly StoredMessage[]): BudgetConversation {
  let latest = -1;
  for (let i = context.length - 1; i >= 0; i--) {
    const m = context[i]!;
    if (m.role === 'user' && m.kind !== 'injected_image' && m.kind !== 'summary') {
      latest = i;
      break;
    }
  }
  const earlier: string[] = [];
  for (let i = Math.max(0, latest - 6); i < latest; i++) {
    const m = context[i]!;
    if ((m.role === 'user' || m.role === 'assistant') && m.content) earlier.push(m.content);
  }
  return { latest: latest >= 0 ? (context[latest]!.content ?? '') : '', earlier };
}

/** Tools the context already called, the latest first. */
function calledTools(context: readonly StoredMessage[]): string[] {
  const names = new Set<string>();
  for (let i = context.length - 1; i >= 0; i--) {
    for (const call of context[i]!.tool_calls ?? []) names.add(call.name);
  }
  return [...names];
}
