/**
 * The agent (docs/architecture.md#run-lifecycle): `runStream` for persisted runs, and subagents in memory only for
 * the `spawn_agent` tool. One loop serves both: plan, then stream the LLM, run the tool calls it
 * asks for, and repeat until it answers without tools.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Profile, ProfileRegistry } from '../config/profiles.js';
import type { Settings } from '../config/settings.js';
import { failureErrorCode } from '../llm/failures.js';
import type { BackendRegistry } from '../llm/registry.js';
import { type AgentEvent, isAfterRunEvent } from '../protocol/events.js';
import type { KvStore, SessionPatch, SessionStore, StoredMessage } from '../store/types.js';
import type { ToolExecutor } from '../tools/executor.js';
import type { AgentHandle } from '../tools/types.js';
import { AsyncQueue } from '../util/async-queue.js';
import { findUnverifiedClaims } from './claims.js';
import { adoptHistory } from './client-history.js';
import type { ContextCompressor } from './compressor.js';
import { toChatMessages } from './context-view.js';
import { streamTurn } from './llm-turn.js';
import {
  type CapabilityLookup,
  type ModelCall,
  modelCall,
  modelCallOrNone,
  offeredTools,
  textOnly,
} from './model-fit.js';
import { runPlanning } from './planning.js';
import { compressIfNeeded } from './run-compression.js';
import type { LoopOutcome, RunState } from './run-state.js';
import { addUsage, emptyUsage, estimateCall } from './run-usage.js';
import { buildSystemPrompt, type PromptSection } from './system-prompt.js';
import { normaliseCallIds, runToolCalls } from './tool-turn.js';
import { type AnswerEnd, type AnswerWriter, MemoryTranscript, SessionTranscript } from './transcript.js';
import {
  estimateTokens,
  openTurn,
  recallStamp,
  recordFailure,
  rewoundEvent,
  type TurnRecordDeps,
  turnMessageId,
} from './turn-records.js';
import type { AgentApi, RunInput, RunOptions } from './types.js';

export interface AgentDeps {
  settings: Settings;
  logger: Logger;
  sessions: SessionStore;
  kv: KvStore;
  profiles: ProfileRegistry;
  executor: ToolExecutor;
  /**
   * The LLM backends: every LLM call picks its backend and model with `resolveModel` (the
   * session's choice, the profile's, the live default), since the default can change while
   * Navi runs.
   */
  models: BackendRegistry;
  /** What a model can do (`CapabilityCache.get`); absent, every capability is assumed. */
  capabilities?: CapabilityLookup;
  persona: string;
  memoryBlock?: () => Promise<string | null>;
  /** The context providers' sections; `signal` is the run's stop. Called once per run. */
  contextSections?: (ctx: {
    sessionId: string;
    profileId: string;
    signal: AbortSignal;
  }) => Promise<PromptSection[]>;
  compressor?: ContextCompressor;
  newId?: () => string;
  now?: () => Date;
  /** How often a streaming answer is persisted (ms). */
  saveIntervalMs?: number;
}

export class Agent implements AgentApi {
  private readonly newId: () => string;
  /** Post-turn work still running, per session: the session's next run waits for it. */
  private readonly postTurn = new Map<string, Promise<void>>();
  private readonly now: () => Date;
  private readonly records: TurnRecordDeps;

  constructor(private readonly deps: AgentDeps) {
    this.newId = deps.newId ?? randomUUID;
    this.now = deps.now ?? (() => new Date());
    this.records = { sessions: deps.sessions, newId: this.newId, now: this.now };
  }

  runStream(sessionId: string, input: RunInput, options: RunOptions): AsyncIterable<AgentEvent> {
    const queue = new AsyncQueue<AgentEvent>();
    const log = this.deps.logger.child({ session_id: sessionId, run_id: options.runId });
    let ended = false;
    const emit = (event: AgentEvent) => {
      if (ended && !isAfterRunEvent(event)) return;
      queue.push(event);
    };
    const end = (event: AgentEvent) => {
      emit(event);
      ended = true;
    };
    // Set once the turn's user message is stored: from then on a failure is saved with the turn.
    const opened: { transcript?: SessionTranscript } = {};
    this.persistedRun(sessionId, input, options, emit, end, log, opened)
      .catch(async (err: unknown) => {
        log.error({ err }, 'run failed unexpectedly');
        const message = `Navi hit an internal error: ${(err as Error).message}`;
        if (opened.transcript && !ended)
          await recordFailure(this.records, opened.transcript, { message, code: 'INTERNAL' }, log);
        end({ type: 'error', message, recoverable: false, code: 'INTERNAL' });
      })
      .finally(() => {
        if (!ended)
          end({
            type: 'error',
            message: 'The run ended without an answer.',
            recoverable: false,
            code: 'INTERNAL',
          });
        queue.close();
      });
    return queue;
  }

  private async persistedRun(
    sessionId: string,
    input: RunInput,
    options: RunOptions,
    emit: (e: AgentEvent) => void,
    end: (e: AgentEvent) => void,
    log: Logger,
    opened: { transcript?: SessionTranscript },
  ): Promise<void> {
    const { sessions } = this.deps;
    // Named at the start, so a client gives its bubble the stored id without reading the session.
    const userMessageId = turnMessageId(this.records, input);
    emit({
      type: 'stream_start',
      trigger: input.trigger,
      user_message_id: userMessageId,
      ...(input.recall ? { ...recallStamp(input.recall), prompt: input.content } : {}),
    });
    // The previous run's post-turn compression may still rewrite this session's context.
    await this.postTurn.get(sessionId);
    const session = await sessions.get(sessionId);
    if (!session) {
      end({
        type: 'error',
        message: `Session ${sessionId} does not exist.`,
        recoverable: false,
        code: 'SESSION_NOT_FOUND',
      });
      return;
    }
    const profile = this.deps.profiles.get(session.profile_id) ?? this.deps.profiles.getDefault();
    const transcript = new SessionTranscript(sessionId, sessions, log, this.deps.saveIntervalMs);
    const rerun = input.rewind?.rerun === true;
    const patch: SessionPatch = { last_active: this.now().toISOString() };
    if (!session.title && !input.contextOnly && !rerun && input.content.trim())
      patch.title = titleFrom(input.content);
    // A rewind names messages of the stored context, which a client's history would replace.
    const replaced =
      input.history && !input.rewind ? await adoptHistory(this.records, sessionId, input.history) : false;
    if (replaced) patch.context_token_count = replaced.tokens;
    // A new message carries the session's patch into its own write; a rewind's comes below.
    const opening = await openTurn(
      this.records,
      transcript,
      input,
      userMessageId,
      input.rewind ? undefined : patch,
    );
    if (!opening.ok) {
      end({ type: 'error', message: opening.message, recoverable: false, code: opening.code });
      return;
    }
    opened.transcript = transcript;
    const context = await transcript.loadContext();
    // The count read for the removed turns would be stale: an estimate of what is left stands in
    // until the run's first LLM call reports the real figure.
    const tokens = input.rewind
      ? estimateTokens('', context, '')
      : replaced
        ? replaced.tokens
        : session.context_token_count;
    if (input.rewind) await sessions.update(sessionId, { ...patch, context_token_count: tokens });
    // Sent once the session is as the rest of the run finds it, so a client reading it now agrees.
    const rewound = rewoundEvent(opening.rewound);
    if (rewound) emit(rewound);

    const state: RunState = {
      runId: options.runId,
      transcript,
      context,
      profile,
      signal: options.signal,
      ask: options.confirm,
      ...(options.elicit && { elicit: options.elicit }),
      emit,
      isSubagent: false,
      depth: 0,
      tokens,
      ...(input.recall ? { recall: { id: input.recall.recall_id, chain: input.recall.chain } } : {}),
      ...(session.model_override ? { modelOverride: session.model_override } : {}),
      notices: new Set(),
      calls: [],
      usage: emptyUsage(),
    };

    await compressIfNeeded(state, this.deps, log);
    if (profile.planning_enabled && !options.signal.aborted) await this.plan(state, log);
    const outcome = await this.loop(state, log);
    // The figures the session row now holds, so the event and `GET /sessions/{id}` agree.
    const figures = async () => ({
      context_tokens: state.tokens,
      max_context_tokens: state.window ?? (await modelCallOrNone(state, this.deps))?.window ?? 0,
    });
    const answerId = (id: string | undefined) => (id === undefined ? {} : { message_id: id });
    if (outcome.kind === 'end') {
      end({
        type: 'stream_end',
        content: outcome.content,
        ...answerId(outcome.messageId),
        ...(await figures()),
        usage: { ...state.usage },
      });
      // Post-turn worker, after stream_end so the user is not kept waiting for the summary.
      // The next run of the session waits for it before it reads the context.
      const work = compressIfNeeded(state, this.deps, log);
      this.postTurn.set(sessionId, work);
      try {
        await work;
      } finally {
        if (this.postTurn.get(sessionId) === work) this.postTurn.delete(sessionId);
      }
    } else if (outcome.kind === 'stopped') {
      end({
        type: 'stream_stopped',
        content: outcome.content,
        ...answerId(outcome.messageId),
        ...(await figures()),
        usage: { ...state.usage },
      });
    } else {
      // Saved before the event goes out, so a client that reloads on the error finds it.
      await recordFailure(this.records, transcript, outcome, log);
      end({ type: 'error', message: outcome.message, recoverable: false, code: outcome.code });
    }
  }

  /** The tool loop: at most `max_iterations` LLM calls. */
  private async loop(state: RunState, log: Logger): Promise<LoopOutcome> {
    for (let iteration = 0; iteration < state.profile.max_iterations; iteration++) {
      if (state.signal.aborted) return { kind: 'stopped', content: '' };
      let call: ModelCall;
      try {
        call = await modelCall(state, this.deps);
      } catch (err) {
        return { kind: 'error', message: (err as Error).message, code: 'LLM_UNAVAILABLE' };
      }
      if (state.signal.aborted) return { kind: 'stopped', content: '' };
      const { backend, model } = call;
      state.backendId = backend.id;
      state.window = call.window;
      const system = await this.systemPrompt(state, log);
      const tools = offeredTools(state, call, this.deps.executor, this.deps);

      const answer: StoredMessage = {
        id: this.newId(),
        role: 'assistant',
        content: '',
        created_at: this.now().toISOString(),
      };
      let writer: AnswerWriter | undefined;
      const messages = textOnly(
        [{ role: 'system', content: system }, ...toChatMessages(state.context)],
        call,
      );
      const turn = await streamTurn(
        backend,
        {
          model,
          messages,
          ...(tools.length > 0 ? { tools } : {}),
          temperature: state.profile.temperature,
          contextWindow: call.window,
          signal: state.signal,
        },
        {
          emit: state.emit,
          relayDeltas: !state.isSubagent,
          turn: iteration,
          onText: (text, thinking) => {
            writer ??= state.transcript.beginAnswer(answer);
            writer.progress(text, thinking);
          },
        },
      );
      state.tokens = turn.usage
        ? turn.usage.promptTokens + turn.usage.completionTokens
        : estimateTokens(system, state.context, turn.text);
      addUsage(
        state.usage,
        turn.usage ??
          estimateCall({
            messages,
            tools,
            text: turn.text,
            thinking: turn.thinking,
            toolCalls: turn.toolCalls,
          }),
      );

      // The answer's id when it is stored; an empty answer nobody saw begin is not. The token
      // count goes with the answer's write, or on its own when there is no answer.
      const finishAnswer = async (end: AnswerEnd): Promise<{ messageId?: string }> => {
        if (!writer && turn.text === '') {
          await state.transcript.setTokenCount(state.tokens);
          return {};
        }
        writer ??= state.transcript.beginAnswer(answer);
        await writer.finish(turn.text, turn.thinking, { ...end, tokens: state.tokens });
        state.context.push({
          ...answer,
          content: turn.text,
          ...(turn.thinking ? { thinking: turn.thinking } : {}),
          ...(end.unverifiedClaims ? { unverified_claims: end.unverifiedClaims } : {}),
        });
        return { messageId: answer.id };
      };

      if (turn.reason === 'aborted') {
        const saved = await finishAnswer({ interrupted: true, stopped: true });
        return { kind: 'stopped', content: turn.text, ...saved };
      }
      if (turn.reason === 'error') {
        await finishAnswer({ interrupted: true });
        log.warn({ llm_error: turn.error }, 'LLM call failed');
        return {
          kind: 'error',
          message: turn.error?.message ?? `${backend.describe()} failed.`,
          code: turn.error ? failureErrorCode(turn.error.code) : 'LLM_MALFORMED',
        };
      }
      if (turn.toolCalls.length === 0) {
        const claims = this.checkClaims(state, turn.text, log);
        const saved = await finishAnswer(claims ? { unverifiedClaims: claims } : {});
        return { kind: 'end', content: turn.text, ...saved };
      }

      // A tool turn: text said before the calls stays as its own message.
      await finishAnswer({});
      if (turn.thinking)
        state.emit({
          type: 'turn_thinking',
          thinking: turn.thinking,
          is_subagent: state.isSubagent,
          turn: iteration,
        });
      const calls = normaliseCallIds(turn.toolCalls, this.newId);
      const request: StoredMessage = {
        id: this.newId(),
        role: 'assistant',
        content: null,
        tool_calls: calls,
        ...(turn.thinking ? { thinking: turn.thinking } : {}),
        created_at: this.now().toISOString(),
      };
      await state.transcript.append([{ message: request, display: !state.isSubagent, context: true }]);
      state.context.push(request);
      const results = await runToolCalls(calls, state, {
        executor: this.deps.executor,
        logger: log,
        newId: this.newId,
        now: this.now,
        handleFor: (s, callId) => this.handleFor(s, callId),
      });
      await state.transcript.append(results);
      for (const r of results) if (r.context) state.context.push(r.message);
    }
    return this.iterationLimit(state);
  }

  /**
   * The claims of a top-level run's final answer that none of its tool calls backs: announced
   * (before `stream_end`), logged, and returned to be stored with the answer.
   */
  private checkClaims(state: RunState, answer: string, log: Logger): string[] | undefined {
    if (state.isSubagent || !this.deps.settings.CLAIM_CHECK_ENABLED) return undefined;
    const claims = findUnverifiedClaims(answer, state.calls);
    if (claims.length === 0) return undefined;
    log.warn(
      { claims, tool_calls: state.calls.length },
      'the answer claims actions no tool call of the run performed',
    );
    const quoted = claims.map((c) => `"${c}"`).join(', ');
    state.emit({
      type: 'claim_unverified',
      claims,
      message:
        `The answer says Navi did something no tool call of this run did: ${quoted}. ` +
        'It may not have happened: check before relying on it, or ask Navi to do it with its tools.',
    });
    return claims;
  }

  private async iterationLimit(state: RunState): Promise<LoopOutcome> {
    const content =
      `I stopped after ${state.profile.max_iterations} steps without reaching a final answer ` +
      `(the limit of the "${state.profile.name}" profile). Ask me to continue, or raise max_iterations in the profile.`;
    const message: StoredMessage = {
      id: this.newId(),
      role: 'assistant',
      content,
      created_at: this.now().toISOString(),
      kind: 'iteration_limit',
    };
    await state.transcript.append([{ message, display: !state.isSubagent, context: true }]);
    state.context.push(message);
    if (!state.isSubagent) state.emit({ type: 'stream_delta', delta: content });
    return { kind: 'end', content, messageId: message.id };
  }

  private async plan(state: RunState, log: Logger): Promise<void> {
    try {
      const call = await modelCall(state, this.deps);
      const plan = await runPlanning(call.backend, {
        system: await this.systemPrompt(state, log),
        context: textOnly(toChatMessages(state.context), call),
        model: call.model,
        contextWindow: call.window,
        signal: state.signal,
        countCall: (usage) => addUsage(state.usage, usage),
      });
      if (!plan) return;
      const message: StoredMessage = {
        id: this.newId(),
        role: 'assistant',
        content: plan,
        created_at: this.now().toISOString(),
        kind: 'plan',
      };
      await state.transcript.append([{ message, display: true, context: true }]);
      state.context.push(message);
      state.emit({ type: 'plan_ready', plan });
    } catch (err) {
      // Planning is an optimisation: the loop reports a broken backend itself.
      log.warn({ err }, 'planning failed; continuing without a plan');
    }
  }

  /**
   * The run's system prompt: built once and kept in `state`, so the memory block and the context
   * providers are read once per run, and every call of the run starts with the same prefix (the
   * backend can reuse what it computed for it). A profile switch builds it again.
   */
  private async systemPrompt(state: RunState, log: Logger): Promise<string> {
    if (state.system?.profileId === state.profile.id) return state.system.text;
    let memoryBlock: string | null = null;
    let sections: PromptSection[] = [];
    try {
      memoryBlock = (await this.deps.memoryBlock?.()) ?? null;
    } catch (err) {
      log.warn({ err }, 'memory block unavailable');
    }
    try {
      sections =
        (await this.deps.contextSections?.({
          sessionId: state.transcript.sessionId,
          profileId: state.profile.id,
          signal: state.signal,
        })) ?? [];
    } catch (err) {
      log.warn({ err }, 'context providers failed');
    }
    const text = buildSystemPrompt({
      persona: this.deps.persona,
      profilePrompt: state.profile.system_prompt,
      memoryBlock,
      sections,
      ...(state.basePrompt ? { basePrompt: state.basePrompt } : {}),
    });
    state.system = { profileId: state.profile.id, text };
    return text;
  }

  private handleFor(state: RunState, callId: string): AgentHandle {
    return {
      runEphemeral: (task, options) => this.subagent(state, callId, task, options),
      switchProfile: async (profileId) => {
        const profile = this.requireProfile(profileId);
        state.profile = profile;
        if (state.transcript.persisted)
          await this.deps.sessions.update(state.transcript.sessionId, { profile_id: profile.id });
        return { id: profile.id, name: profile.name };
      },
      currentProfileId: () => state.profile.id,
      context: () => state.context,
    };
  }

  /**
   * Runs a subagent under `parent` for the tool call `callId`: its own memory-only context and
   * scratchpad, the parent's stop. Its events reach the parent marked with `parent_call_id`.
   */
  private async subagent(
    parent: RunState,
    callId: string,
    task: string,
    options: { profileId?: string; inheritSystemPrompt?: boolean; signal?: AbortSignal },
  ): Promise<string> {
    if (parent.depth >= this.deps.settings.SUBAGENT_MAX_DEPTH && parent.isSubagent) {
      throw new Error(
        `Subagents may not nest deeper than ${this.deps.settings.SUBAGENT_MAX_DEPTH} level(s).`,
      );
    }
    const profile = options.profileId ? this.requireProfile(options.profileId) : parent.profile;
    const id = `subagent_${this.newId()}`;
    const log = this.deps.logger.child({ subagent: id, parent_run: parent.runId });
    // An event already marked came from deeper down: it keeps its own, nearest spawn call.
    const forward = (event: AgentEvent) => {
      if (event.type === 'turn_thinking' || event.type === 'tool_started' || event.type === 'tool_call') {
        parent.emit({ ...event, is_subagent: true, parent_call_id: event.parent_call_id ?? callId });
      } else if (event.type === 'tool_confirm_request') {
        parent.emit({ ...event, parent_call_id: event.parent_call_id ?? callId });
      } else if (event.type === 'elicitation_request' || event.type === 'elicitation_resolved') {
        // Their call id names the subagent's call, which the parent's clients already show.
        parent.emit(event);
      } else if (event.type === 'notice') {
        // The run's notices: the subagent shares the parent's set, so each still goes out once.
        parent.emit(event);
      }
    };
    const state: RunState = {
      runId: parent.runId,
      transcript: new MemoryTranscript(id),
      context: [],
      profile,
      // The tool's signal follows the parent's stop and adds the tool's own time limit.
      signal: options.signal ? AbortSignal.any([parent.signal, options.signal]) : parent.signal,
      ask: parent.ask,
      ...(parent.elicit && { elicit: parent.elicit }),
      emit: forward,
      isSubagent: true,
      depth: parent.depth + 1,
      tokens: 0,
      // The parent's model, unless the subagent runs another profile (which names its own).
      ...(parent.modelOverride && profile.id === parent.profile.id
        ? { modelOverride: parent.modelOverride }
        : {}),
      notices: parent.notices,
      calls: [],
      usage: parent.usage,
    };
    if (options.inheritSystemPrompt) state.basePrompt = parent.profile.system_prompt;
    const message: StoredMessage = {
      id: this.newId(),
      role: 'user',
      content: task,
      created_at: this.now().toISOString(),
    };
    await state.transcript.append([{ message, display: false, context: true }]);
    state.context.push(message);
    try {
      const outcome = await this.loop(state, log);
      if (outcome.kind === 'end') return outcome.content;
      if (outcome.kind === 'stopped') throw new Error('The subagent was stopped before it finished.');
      throw new Error(`The subagent failed: ${outcome.message}`);
    } finally {
      await this.deps.kv.clear(id).catch(() => {});
    }
  }

  private requireProfile(id: string): Profile {
    const profile = this.deps.profiles.get(id);
    if (!profile) {
      const known = this.deps.profiles
        .list()
        .map((p) => p.id)
        .join(', ');
      throw new Error(`Unknown profile "${id}". Available profiles: ${known}.`);
    }
    return profile;
  }
}

function titleFrom(content: string): string {
  const line = content.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 77).trimEnd()}…` : line;
}
