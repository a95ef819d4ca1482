/**
 * Context compression within a run (docs/memory.md#context-compression): before the run's first
 * call, and after its answer as post-turn work, the older context becomes one summary once the
 * session fills its window past the threshold. The algorithm is `compression.ts`; this applies it.
 */
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import type { SessionStore, StoredMessage } from '../store/types.js';
import { shouldCompress } from './compression.js';
import type { ContextCompressor } from './compressor.js';
import { type ModelFitDeps, modelCallOrNone } from './model-fit.js';
import type { RunState } from './run-state.js';
import { addUsage } from './run-usage.js';
import { estimateTokens } from './turn-records.js';

export interface RunCompressionDeps extends ModelFitDeps {
  compressor?: ContextCompressor;
  sessions: SessionStore;
  settings: ModelFitDeps['settings'] &
    Pick<
      Settings,
      | 'CONTEXT_COMPRESSION_ENABLED'
      | 'CONTEXT_COMPRESSION_THRESHOLD'
      | 'CONTEXT_KEEP_RECENT'
      | 'CONTEXT_SUMMARY_TEMPERATURE'
    >;
}

/**
 * Summarises the older context when the session is full enough, and tells the run's clients
 * (`context_compressed`). Never throws: a failed summary leaves the context as it was.
 */
export async function compressIfNeeded(
  state: RunState,
  deps: RunCompressionDeps,
  log: Logger,
): Promise<void> {
  const { compressor, settings } = deps;
  if (!compressor || !settings.CONTEXT_COMPRESSION_ENABLED || !state.transcript.persisted) return;
  // The window the model really has: a clamped one fills sooner than the backend's setting.
  const call = await modelCallOrNone(state, deps);
  if (!call || !shouldCompress(state.tokens, call.window, settings.CONTEXT_COMPRESSION_THRESHOLD)) return;
  try {
    const result = await compressor({
      context: state.context,
      keepRecent: settings.CONTEXT_KEEP_RECENT,
      backend: call.backend,
      model: call.model,
      contextWindow: call.window,
      temperature: settings.CONTEXT_SUMMARY_TEMPERATURE,
      signal: state.signal,
      // Counted as the call ends, so a summary that fails or is cut still adds to the run's usage.
      countCall: (usage) => addUsage(state.usage, usage),
    });
    if (!result) return;
    const before = state.context.length;
    await applySummary(deps.sessions, state, result.firstKeptId, result.summary);
    state.context = await state.transcript.loadContext();
    // The count was measured on the context before the summary: an estimate of what is left
    // stands in (stored, and sent, so GET agrees) until the next LLM call reports the real one.
    state.tokens = estimateTokens('', state.context, '');
    await state.transcript.setTokenCount(state.tokens);
    state.emit({
      type: 'context_compressed',
      messages_before: before,
      messages_after: state.context.length,
      context_tokens: state.tokens,
    });
  } catch (err) {
    log.error({ err }, 'context compression failed; the context was left as it was');
  }
}

/**
 * Puts a summary in place of the context before `firstKeptId`. A client's system messages
 * (`client_system`, docs/openai-api.md#sessions-and-history) are instructions, not conversation:
 * they stay before the summary as they were, so the client's next history still agrees with the
 * context. Any other system message there (an imported one) goes with the rest it summarises.
 */
async function applySummary(
  sessions: SessionStore,
  state: RunState,
  firstKeptId: string | null,
  summary: StoredMessage,
): Promise<void> {
  const sessionId = state.transcript.sessionId;
  const keptFrom =
    firstKeptId === null ? state.context.length : state.context.findIndex((m) => m.id === firstKeptId);
  const older = keptFrom < 0 ? [] : state.context.slice(0, keptFrom);
  const systems = older.filter((m) => m.role === 'system' && m.kind === 'client_system');
  if (systems.length === 0) return sessions.replaceContextPrefix(sessionId, firstKeptId, summary);
  await sessions.replaceContext(sessionId, [...systems, summary, ...state.context.slice(keptFrom)]);
}
