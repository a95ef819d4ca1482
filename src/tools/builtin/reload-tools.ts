/** `reload_tools`: reloads TOOLS_DIR and the context providers without a restart. */
import { z } from 'zod';
import { defineTool, type TypedTool } from '../define-tool.js';
import { ok } from '../types.js';
import { type ReloadReport, reloadUserTools, type UserToolsDeps } from '../user-tools.js';

export function formatReloadReport(report: ReloadReport): string {
  const lines = [
    report.loaded.length > 0
      ? `User tools loaded (${report.loaded.length}): ${report.loaded.join(', ')}.`
      : 'No user tools loaded.',
  ];
  if (report.providers.length > 0) lines.push(`Context providers: ${report.providers.join(', ')}.`);
  if (report.errors.length > 0) {
    lines.push(`Failed to load (${report.errors.length}):`);
    for (const e of report.errors) lines.push(`- ${e.origin}: ${e.error}`);
  }
  lines.push('Changes take effect from the next user message.');
  return lines.join('\n');
}

const parameters = z.strictObject({});

export function createReloadToolsTool(deps: UserToolsDeps): TypedTool<typeof parameters> {
  return defineTool({
    name: 'reload_tools',
    group: 'meta',
    // It runs the code already in TOOLS_DIR, none chosen by its arguments.
    risk: { reads: true, writes: true },
    description:
      'Reload the user tools folder and the context providers without restarting Navi: edited tools run ' +
      'their new code, deleted ones disappear, new ones appear from the next message. Reports files that failed to load.',
    parameters,
    async execute() {
      return ok(formatReloadReport(await reloadUserTools(deps)));
    },
  });
}
