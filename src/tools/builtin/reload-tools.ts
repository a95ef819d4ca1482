/** `reload_tools`: reloads TOOLS_DIR and the context providers without a restart. */
import { ok, type ToolDefinition, type ToolResult } from '../types.js';
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

export function createReloadToolsTool(deps: UserToolsDeps): ToolDefinition {
  return {
    name: 'reload_tools',
    group: 'meta',
    description:
      'Reload the user tools folder and the context providers without restarting Navi: edited tools run ' +
      'their new code, deleted ones disappear, new ones appear from the next message. Reports files that failed to load.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async execute(): Promise<ToolResult> {
      return ok(formatReloadReport(await reloadUserTools(deps)));
    },
  };
}
