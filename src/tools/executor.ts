/**
 * The one path every tool call takes, built-in, user or MCP:
 * validation → policy → hook action → middleware `before` → the tool under a time limit →
 * normalised, secret-masked, truncated result → middleware `after`.
 *
 * Every step that refuses a call says why in the result the LLM reads. Nothing a tool does —
 * throwing, hanging, returning garbage or a giant string — escapes as an exception.
 */
import type { Logger } from 'pino';
import type { Profile } from '../config/profiles.js';
import type { Settings } from '../config/settings.js';
import type { ToolSpec } from '../llm/types.js';
import type { AgentEvent } from '../protocol/events.js';
import { CallLimit } from '../util/call-limit.js';
import { raceAbort } from '../util/race-abort.js';
import type { SecretMasker } from '../util/secret-masker.js';
import { confirmationOf, type HookDecision, type HookEnvironment, resolveHookAction } from './hooks.js';
import { createLoggingMiddleware, type ToolCallInfo, type ToolMiddleware } from './middleware.js';
import { checkPolicy, firstMatch, groupOf } from './policy.js';
import type { RegisteredTool, ToolRegistry } from './registry.js';
import { normaliseResult, truncate } from './result.js';
import { riskOf } from './risk.js';
import {
  findReferences,
  MAX_REFERENCES_PER_CALL,
  type SecretReference,
  type SecretResolver,
  substituteReferences,
} from './secret-references.js';
import type { ToolContext, ToolParams, ToolResult } from './types.js';
import { invalidArgumentsMessage } from './validation.js';

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ToolExecutorDeps {
  registry: ToolRegistry;
  settings: Pick<Settings, 'TOOL_TIMEOUT_MS' | 'TOOL_MAX_OUTPUT_CHARS'>;
  logger: Logger;
  /**
   * Whether bubblewrap can contain terminal and code_exec; without it they ask for approval
   * by default. Defaults to false, the cautious answer.
   */
  sandboxAvailable?: boolean;
  /** Runs after the built-in logging middleware, in order. */
  middleware?: ToolMiddleware[];
  /**
   * Secrets to hide in everything a tool hands back — output, error, metadata and the events
   * it emits — before the LLM, clients, the transcript or the middleware see it. Values
   * registered while Navi runs are hidden from the next call on.
   */
  secrets?: SecretMasker;
  /**
   * The settings handed to every tool in `ToolContext.settings`: user tools (weather, gmail)
   * read their own settings there, since secret variables are gone from Navi's environment.
   */
  toolSettings?: Settings;
  /**
   * Looks up vault references (`{{secret:<id>.<field>}}`) in tool arguments. Without it,
   * references stay as they are written.
   */
  references?: SecretResolver;
}

/** Vault values shorter than this are refused: they could not be hidden in the output without hiding ordinary text. */
export const MIN_REFERENCED_SECRET_LENGTH = 4;

/** Refusals carry this in `metadata.refused`, so callers can tell them from tool failures. */
export type RefusalStage = 'unknown' | 'validation' | 'policy' | 'confirmation' | 'stopped' | 'secrets';

/**
 * A `confirmation` refusal also carries `metadata.confirmation`: the person said no (`denied`),
 * nobody answered in time or nobody could be asked (`unanswered`), or the run was stopped first.
 */
export type ConfirmationRefusal = 'denied' | 'unanswered' | 'stopped';

const STACK_LINES = 8;

export class ToolExecutor {
  private readonly middleware: ToolMiddleware[];

  constructor(private readonly deps: ToolExecutorDeps) {
    this.middleware = [createLoggingMiddleware(deps.logger), ...(deps.middleware ?? [])];
  }

  /** The tools offered to the LLM under `profile`: only those its policy allows. */
  specsFor(profile: Profile): ToolSpec[] {
    const specs: ToolSpec[] = [];
    for (const entry of this.deps.registry.list()) {
      if (!checkPolicy(profile, entry).allowed) continue;
      const { tool } = entry;
      specs.push({
        name: tool.name,
        description: this.describe(entry, profile),
        parameters: tool.parameters,
      });
    }
    return specs;
  }

  /** What the hook actions depend on besides the profile and the tool: the same for every call. */
  private get hookEnvironment(): HookEnvironment {
    return { sandboxAvailable: this.deps.sandboxAvailable ?? false };
  }

  /**
   * The hook action a call of `name` gets under `profile` (for docs, `list_tools`, tests); with
   * `params`, including the tool's own say about that call (`confirmCall`).
   */
  hookActionFor(name: string, profile: Profile, params?: ToolParams): HookDecision | undefined {
    const entry = this.deps.registry.get(name);
    return entry ? resolveHookAction(profile, entry, this.hookEnvironment, params) : undefined;
  }

  /**
   * Whether calls of `name` under `profile` ask the person first (`always`, `per_call`,
   * `never`; see `confirmationOf`), for the client's tool list. Undefined for an unknown tool.
   */
  confirmationFor(name: string, profile: Profile): ReturnType<typeof confirmationOf> | undefined {
    const entry = this.deps.registry.get(name);
    return entry ? confirmationOf(profile, entry, this.hookEnvironment) : undefined;
  }

  /** Runs one call. Never throws: every failure is a `success: false` result. */
  async execute(call: ToolCall, ctx: ToolContext, profile: Profile): Promise<ToolResult> {
    const entry = this.deps.registry.get(call.name);
    if (!entry) return this.unknownTool(call.name, profile);
    const { tool } = entry;

    const checked = this.deps.registry.validator.validate(
      tool.parameters,
      withoutApproval(call.arguments, tool.parameters),
    );
    if (!checked.ok)
      return refuse('validation', invalidArgumentsMessage(tool.name, checked.problems, tool.parameters));

    const policy = checkPolicy(profile, entry);
    if (!policy.allowed) return refuse('policy', policy.reason);
    const references = this.deps.references ? findReferences(checked.params) : [];
    if (references.length > 0) {
      const refusal = checkReferences(profile, entry, references);
      if (refusal) return refusal;
    }

    const hook = resolveHookAction(profile, entry, this.hookEnvironment, checked.params);
    if (hook.action === 'log') {
      this.deps.logger.info(
        {
          tool: tool.name,
          call_id: call.id,
          session_id: ctx.sessionId,
          args: auditArgs(checked.params, groupOf(entry) === 'secrets' || riskOf(tool).secrets === true),
        },
        'tool call audit',
      );
    } else if (hook.action === 'confirm') {
      const refusal = await this.confirm(call, tool.name, checked.params, ctx, hook);
      if (refusal) return refusal;
    }
    if (ctx.signal.aborted) return refuse('stopped', `The run was stopped before "${tool.name}" ran.`);

    const info: ToolCallInfo = {
      callId: call.id,
      tool: tool.name,
      source: entry.source,
      params: checked.params,
      ctx,
    };
    await this.runMiddleware('before', info);
    const started = performance.now();
    const result =
      references.length > 0
        ? await this.runWithSecrets(entry, checked.params, references, ctx)
        : await this.runTool(entry, checked.params, ctx);
    const durationMs = performance.now() - started;
    const final = this.finish(result, tool.name, groupOf(entry) === 'secrets');
    await this.runMiddleware('after', info, final, durationMs);
    return final;
  }

  /**
   * The result as it leaves the executor: secrets masked, text within the size limit. A secrets
   * tool's result that reveals values on purpose (`metadata.revealed`, the person asked to see
   * them) keeps them in this one output; they are masked everywhere from then on, the stored
   * transcript included.
   */
  private finish(result: ToolResult, tool: string, secretsTool: boolean): ToolResult {
    const max = this.deps.settings.TOOL_MAX_OUTPUT_CHARS;
    // Only a secrets tool may reveal; another tool's `metadata.revealed` is dropped unread.
    const revealed = secretsTool ? takeRevealed(result) : [];
    const secrets = this.deps.secrets?.size && revealed.length === 0 ? this.deps.secrets : undefined;
    const final: ToolResult = { ...result, output: truncate(result.output, max, secrets) };
    if (final.error !== undefined) final.error = truncate(final.error, max, secrets);
    if (secrets && final.metadata !== undefined) {
      try {
        final.metadata = secrets.maskJson(final.metadata);
      } catch (err) {
        // Metadata that cannot be serialised cannot be checked either; it is dropped, not passed on.
        delete final.metadata;
        this.deps.logger.warn({ err, tool }, 'tool result metadata dropped: it cannot be serialised');
      }
    }
    if (final.metadata?.revealed !== undefined) {
      const { revealed: _shown, ...rest } = final.metadata;
      if (Object.keys(rest).length > 0) final.metadata = rest;
      else delete final.metadata;
    }
    for (const { label, value } of revealed)
      this.deps.secrets?.add(label, value, MIN_REFERENCED_SECRET_LENGTH);
    return final;
  }

  /**
   * Resolves the call's vault references (each use lands in the vault's audit log), registers
   * the values with the masker before the tool can print one, and runs the tool on the
   * substituted arguments. A reference that cannot be resolved fails the call, naming it.
   */
  private async runWithSecrets(
    entry: RegisteredTool,
    params: ToolParams,
    references: SecretReference[],
    ctx: ToolContext,
  ): Promise<ToolResult> {
    const resolver = this.deps.references!;
    const secrets = this.deps.secrets;
    const tool = entry.tool.name;
    // Checked before any lookup: a lookup is a use in the audit log.
    if (!secrets)
      return refuse(
        'secrets',
        `Tool "${tool}" was not run: secrets cannot be used by reference without a masker.`,
      );
    const values = new Map<string, string>();
    for (const ref of references) {
      let found: { value: string; label: string };
      try {
        found = resolver.resolve(ref.id, ref.field, { sessionId: ctx.sessionId, tool });
      } catch (err) {
        return refuse(
          'secrets',
          `Tool "${tool}" was not run: ${ref.text} cannot be used: ${(err as Error).message}`,
        );
      }
      if (found.value.trim().length < MIN_REFERENCED_SECRET_LENGTH)
        return refuse(
          'secrets',
          `Tool "${tool}" was not run: the value of ${ref.text} (${found.label}) is shorter than ${MIN_REFERENCED_SECRET_LENGTH} characters, too short to hide in the output. Ask the person to enter it themselves.`,
        );
      secrets.add(found.label, found.value, MIN_REFERENCED_SECRET_LENGTH);
      values.set(ref.text, found.value);
    }
    return this.runTool(entry, substituteReferences(params, values), ctx);
  }

  /** `ctx.emit`, masking every event a tool sends (subagent forwarding, progress) when secrets are known. */
  private maskedEmit(ctx: ToolContext, tool: string): ToolContext['emit'] {
    const secrets = this.deps.secrets;
    if (!secrets?.size) return ctx.emit;
    return (event: AgentEvent) => {
      let masked: AgentEvent;
      try {
        masked = secrets.maskJson(event);
      } catch (err) {
        this.deps.logger.warn({ err, tool }, 'tool event dropped: it cannot be serialised');
        return;
      }
      ctx.emit(masked);
    };
  }

  private describe(entry: RegisteredTool, profile: Profile): string {
    if (!entry.tool.describeFor) return entry.tool.description;
    try {
      return entry.tool.describeFor(profile);
    } catch (err) {
      this.deps.logger.warn(
        { err, tool: entry.tool.name },
        'describeFor failed; using the plain description',
      );
      return entry.tool.description;
    }
  }

  private unknownTool(name: string, profile: Profile): ToolResult {
    const offered = this.specsFor(profile).map((s) => s.name);
    const list = offered.length > 0 ? ` Available tools: ${offered.slice(0, 60).join(', ')}.` : '';
    return refuse('unknown', `Unknown tool "${name}".${list}`);
  }

  /** Resolves to a refusal, or undefined when the user approved. */
  private async confirm(
    call: ToolCall,
    tool: string,
    params: ToolParams,
    ctx: ToolContext,
    hook: HookDecision,
  ): Promise<ToolResult | undefined> {
    if (ctx.signal.aborted)
      return refuse('stopped', `The run was stopped before "${tool}" could be approved.`);
    let answer: Awaited<ReturnType<ToolContext['confirm']>>;
    try {
      // A stop must end the wait even if the confirmation flow itself forgets to.
      answer = await raceAbort(ctx.confirm({ callId: call.id, tool, args: params }), ctx.signal, {
        approved: false,
        reason: 'the run was stopped',
      });
    } catch (err) {
      answer = { approved: false, reason: `the approval request failed (${(err as Error).message})` };
    }
    if (answer.approved === true) {
      this.deps.logger.info(
        { tool, call_id: call.id, session_id: ctx.sessionId },
        'tool call approved by the user',
      );
      return undefined;
    }
    this.deps.logger.info({ tool, call_id: call.id, reason: answer.reason }, 'tool call not approved');
    const refusal = refuse(
      'confirmation',
      `Tool "${tool}" was not run: it needs the user's approval (${hook.reason}) and did not get it: ${answer.reason}. ` +
        'Do not retry it unchanged; tell the user what you wanted to do, or find another way.',
    );
    // Which kind of no, for the call's outcome (`toolOutcome`): the stop wins, then the person's own answer.
    const confirmation: ConfirmationRefusal = ctx.signal.aborted
      ? 'stopped'
      : answer.declined === true
        ? 'denied'
        : 'unanswered';
    refusal.metadata = { ...refusal.metadata, confirmation };
    return refusal;
  }

  private async runTool(entry: RegisteredTool, params: ToolParams, ctx: ToolContext): Promise<ToolResult> {
    const name = entry.tool.name;
    const limitMs = this.deps.settings.TOOL_TIMEOUT_MS;
    // One object for both ends of a call (stop and time limit) and for the limit's pause while
    // the person is asked: AbortSignal.any costs more than the rest of the pipeline together
    // (see bench/executor.ts).
    const limit = new CallLimit(ctx.signal, limitMs);
    const signal = limit.signal;
    const elicit = ctx.elicit;
    const running = Promise.resolve()
      .then(() => {
        const toolCtx: ToolContext = {
          ...ctx,
          signal,
          emit: this.maskedEmit(ctx, name),
          // The person's time is not the tool's: the limit waits while they are asked.
          confirm: (request) => limit.hold(ctx.confirm(request)),
          ...(this.deps.toolSettings && { settings: this.deps.toolSettings }),
        };
        // Set only when the context has one: a key it lacks would change the object's shape.
        if (elicit) toolCtx.elicit = (request) => limit.hold(elicit(request));
        return entry.tool.execute(params, toolCtx);
      })
      .then(
        (raw) => normaliseResult(raw, name),
        (err: unknown) => thrown(name, err, entry.source === 'user'),
      )
      // Reading a hostile result (a throwing getter or toString) can throw too; left uncaught,
      // that rejection would escape after a timeout and could end the process.
      .catch((err: unknown) => thrown(name, err, entry.source === 'user'));
    try {
      // The tool may ignore its signal; the call ends at the limit anyway and whatever the tool
      // does later is dropped.
      return await raceAbort(running, signal, undefined).then((r) => {
        if (r) return r;
        if (limit.timedOut) {
          return {
            success: false,
            output: `Tool "${name}" did not finish within ${limitMs} ms and was stopped. Try a smaller task or narrower arguments.`,
            error: 'timeout',
            metadata: { timed_out: true },
          };
        }
        return refuse('stopped', `The run was stopped while "${name}" was running.`);
      });
    } finally {
      limit.end();
    }
  }

  private async runMiddleware(
    phase: 'before' | 'after',
    info: ToolCallInfo,
    result?: ToolResult,
    durationMs = 0,
  ): Promise<void> {
    for (const mw of this.middleware) {
      try {
        if (phase === 'before') await mw.before?.(info);
        else if (result) await mw.after?.(info, result, durationMs);
      } catch (err) {
        this.deps.logger.warn(
          { err, middleware: mw.name, tool: info.tool },
          `tool middleware ${phase} failed`,
        );
      }
    }
  }
}

/** Why a call's references may not be used, or undefined when they may. */
function checkReferences(
  profile: Profile,
  entry: RegisteredTool,
  references: SecretReference[],
): ToolResult | undefined {
  const tool = entry.tool.name;
  if (references.length > MAX_REFERENCES_PER_CALL)
    return refuse(
      'validation',
      `Tool "${tool}" was not run: its arguments name ${references.length} vault secrets; at most ${MAX_REFERENCES_PER_CALL} may be used in one call.`,
    );
  if (firstMatch(profile.secret_tools, entry) !== undefined) return undefined;
  const allowed = profile.secret_tools.length > 0 ? profile.secret_tools.join(', ') : 'none';
  return refuse(
    'policy',
    `Tool "${tool}" may not use vault secrets by reference under profile "${profile.id}" (tools that may: ${allowed}). ` +
      "Use one of those tools, or ask the person to add this tool to the profile's secret_tools.",
  );
}

/** The values a secrets tool revealed on purpose (`metadata.revealed`), if any. */
function takeRevealed(result: ToolResult): { label: string; value: string }[] {
  const revealed = result.metadata?.revealed;
  if (!Array.isArray(revealed)) return [];
  return revealed.filter(
    (r): r is { label: string; value: string } =>
      typeof r === 'object' && r !== null && typeof r.label === 'string' && typeof r.value === 'string',
  );
}

function refuse(stage: RefusalStage, message: string): ToolResult {
  return { success: false, output: message, error: message, metadata: { refused: stage } };
}

function thrown(tool: string, err: unknown, withStack: boolean): ToolResult {
  const message = err instanceof Error ? err.message : String(err);
  const stack =
    withStack && err instanceof Error && err.stack
      ? `\n${err.stack.split('\n').slice(1, STACK_LINES).join('\n')}`
      : '';
  return { success: false, output: `Tool "${tool}" failed: ${message}${stack}`, error: message };
}

const SENSITIVE_KEY = /pass(word|phrase)?|secret|token|api[-_]?key|private[-_]?key|credential/i;

/**
 * The arguments as the audit line shows them. Logs outlive sessions and are read by other
 * people and programs, so values that look like credentials — and every value passed to a
 * secrets tool — are replaced by a marker; the keys stay, so the line still says what was done.
 */
function auditArgs(params: ToolParams, secretTool: boolean): ToolParams {
  const out: ToolParams = {};
  for (const [key, value] of Object.entries(params)) {
    out[key] = secretTool || SENSITIVE_KEY.test(key) ? '[redacted]' : value;
  }
  return out;
}

/**
 * Approval comes only from the confirmation flow: an `approved` argument the LLM made up is
 * dropped, unless the tool's schema really declares a parameter of that name.
 */
function withoutApproval(args: unknown, schema: Record<string, unknown>): unknown {
  if (args === null || typeof args !== 'object' || Array.isArray(args) || !('approved' in args)) return args;
  const props = schema.properties;
  if (props && typeof props === 'object' && 'approved' in props) return args;
  const { approved: _ignored, ...rest } = args as Record<string, unknown>;
  return rest;
}
