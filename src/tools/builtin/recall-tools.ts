/**
 * `schedule_recall` and `manage_recall`: the agent calls itself back later. A recall stores a
 * prompt that runs headless in this same session at the time asked for; the scheduler
 * (src/recall) fires it and the run's answer lands in the chat like any other turn.
 */
import { z } from 'zod';
import type { RecallSummary } from '../../protocol/rest.js';
import { formatDuration } from '../../recall/duration.js';
import { describeTime, zoneOf } from '../../recall/schedule.js';
import type { RecallService } from '../../recall/types.js';
import { defineTool, type TypedTool } from '../define-tool.js';
import { fail, ok, type ToolContext, type ToolResult } from '../types.js';

const when = z
  .strictObject({
    type: z
      .enum(['once', 'recurring', 'immediate'])
      .describe('once: one run later; recurring: again and again; immediate: right after this run ends.'),
    at: z
      .string()
      .optional()
      .describe(
        'once: the date and time, ISO 8601, e.g. "2026-12-01T09:00" (read in `timezone`, else the server\'s zone).',
      ),
    delay: z
      .union([z.string(), z.number()])
      .optional()
      .describe('once: how long from now, e.g. "20m", "2h", "1 day", or seconds.'),
    cron: z
      .string()
      .optional()
      .describe(
        'recurring: a 5-field cron expression, minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5".',
      ),
    every: z
      .union([z.string(), z.number()])
      .optional()
      .describe('recurring: a fixed interval of at least 1 minute, e.g. "30m", "6h".'),
    timezone: z.string().optional().describe('IANA time zone for `at` and `cron`, e.g. "Europe/Berlin".'),
  })
  .describe('When to run. Give `at` or `delay` for once; `cron` or `every` for recurring.');

const scheduleParameters = z.strictObject({
  prompt: z
    .string()
    .min(1)
    .describe(
      'What to do when the recall runs, written as an instruction to yourself with all the detail needed.',
    ),
  when,
});

const manageParameters = z.strictObject({
  action: z
    .enum(['list', 'cancel', 'skip'])
    .describe("list this session's recalls, cancel one, or skip its next run."),
  recall_id: z
    .string()
    .optional()
    .describe('For cancel and skip: the recall id (or its first 8 characters).'),
});

/** One recall in the words the model reads; times in its own zone, else `defaultZone`. */
export function describeRecall(recall: RecallSummary, now: Date, defaultZone: string): string {
  const zone = zoneOf(recall.schedule, defaultZone);
  const lines = [`Recall ${recall.id} (${recall.status}): ${recall.description}`];
  if (recall.next_run_at) {
    const next = new Date(recall.next_run_at);
    const wait = next.getTime() - now.getTime();
    lines.push(
      `  next run: ${describeTime(next, zone)}${wait > 0 ? `, in ${formatDuration(wait)}` : ', due now (waits for the current run to end)'}`,
    );
  }
  if (recall.last_run_at) {
    const outcome = recall.last_outcome
      ? `${recall.last_outcome.status}${recall.last_outcome.message ? `: ${recall.last_outcome.message}` : ''}`
      : 'still running';
    lines.push(
      `  last run: ${describeTime(new Date(recall.last_run_at), zone)} (${outcome}); ${recall.run_count} run(s) so far`,
    );
  } else if (recall.last_outcome) {
    lines.push(
      `  ${recall.last_outcome.status}${recall.last_outcome.message ? `: ${recall.last_outcome.message}` : ''}`,
    );
  }
  lines.push(`  prompt: ${recall.prompt.length > 300 ? `${recall.prompt.slice(0, 300)}…` : recall.prompt}`);
  return lines.join('\n');
}

function sessionOnly(ctx: ToolContext): ToolResult | undefined {
  return ctx.isSubagent
    ? fail('Recalls belong to the session: only the main agent can schedule or change them, not a subagent.')
    : undefined;
}

export function createRecallTools(
  recalls: RecallService,
): [TypedTool<typeof scheduleParameters>, TypedTool<typeof manageParameters>] {
  const schedule = defineTool({
    name: 'schedule_recall',
    group: 'schedule',
    // It changes what runs later in the session.
    risk: { writes: true },
    description:
      'Schedule yourself to run again later in this same session, with a prompt you write now: a reminder, ' +
      'a check to repeat, or work to continue when something is ready. The recall runs on its own (nobody ' +
      'watching, so tools that need approval are refused) and its answer appears in this chat. ' +
      'Examples: {"prompt":"Remind the user to call the dentist","when":{"type":"once","delay":"2h"}}; ' +
      '{"prompt":"Check the backup log and report problems","when":{"type":"recurring","cron":"0 7 * * *","timezone":"Europe/Berlin"}}.',
    parameters: scheduleParameters,
    async execute(params, ctx) {
      const refused = sessionOnly(ctx);
      if (refused) return refused;
      const result = await recalls.schedule({
        sessionId: ctx.sessionId,
        prompt: params.prompt,
        when: params.when,
        ...(ctx.recall ? { origin: ctx.recall } : {}),
      });
      if (!result.ok) return fail(result.error);
      return ok(`Scheduled.\n${describeRecall(result.recall, recalls.now(), recalls.timeZone)}`, {
        recall_id: result.recall.id,
        next_run_at: result.recall.next_run_at,
      });
    },
  });

  const manage = defineTool({
    name: 'manage_recall',
    group: 'schedule',
    risk: { writes: true },
    description:
      "List this session's recalls (next run, last run and how it went), cancel one, or skip its next run only.",
    parameters: manageParameters,
    async execute(params, ctx) {
      const refused = sessionOnly(ctx);
      if (refused) return refused;
      if (params.action === 'list') {
        const list = await recalls.list(ctx.sessionId);
        if (list.length === 0) return ok('This session has no recalls.');
        return ok(list.map((r) => describeRecall(r, recalls.now(), recalls.timeZone)).join('\n\n'));
      }
      const id = params.recall_id?.trim();
      if (!id) return fail(`"${params.action}" needs "recall_id"; use action "list" to see the ids.`);
      const change =
        params.action === 'cancel'
          ? await recalls.cancel(ctx.sessionId, id)
          : await recalls.skip(ctx.sessionId, id);
      if (!change.ok) return fail(change.message);
      const verb = params.action === 'cancel' ? 'Cancelled' : 'Skipped the next run';
      return ok(`${verb}.\n${describeRecall(change.recall, recalls.now(), recalls.timeZone)}`);
    },
  });
  return [schedule, manage];
}
