/**
 * The gmail tool as Navi runs it: loaded from the repository's tools/ folder by the real loader,
 * called through a real executor that hands it the settings, asks for confirmation through the
 * context the test chooses, and refuses bad arguments as it would for the model.
 */
import { join } from 'node:path';
import pino from 'pino';
import { type SettingName, testSettings } from '../../src/config/settings.js';
import { ToolExecutor } from '../../src/tools/executor.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { testContext, testProfile } from '../../src/tools/test-helpers.js';
import type { ConfirmAnswer, ConfirmRequest, ToolResult } from '../../src/tools/types.js';
import { type ReloadReport, reloadUserTools } from '../../src/tools/user-tools.js';
import { repoRoot } from './navi.js';

export interface GmailHarness {
  registry: ToolRegistry;
  /** What loading the repository's tools/ folder reported. */
  report: ReloadReport;
  /**
   * One call of gmail with `args`. `approve` answers a confirmation (default: nobody answers,
   * which refuses); `signal` is the run's stop. The confirmation requests made are returned
   * with the result.
   */
  call(
    args: Record<string, unknown>,
    options?: { settings?: Partial<Record<SettingName, string>>; approve?: boolean; signal?: AbortSignal },
  ): Promise<ToolResult & { asked: ConfirmRequest[] }>;
}

/** Loads tools/ and returns a caller with `settings` as the default GMAIL_* settings. */
export async function gmailHarness(settings: Partial<Record<SettingName, string>>): Promise<GmailHarness> {
  const registry = new ToolRegistry();
  const report = await reloadUserTools({ registry, toolsDir: join(repoRoot, 'tools') });
  if (!registry.get('gmail')) {
    throw new Error(`tools/gmail.ts did not load: ${JSON.stringify(report.errors)}`);
  }
  const profile = testProfile({ enabled_tools: ['*'] });
  let calls = 0;
  return {
    registry,
    report,
    async call(args, options = {}) {
      const executor = new ToolExecutor({
        registry,
        settings: { TOOL_TIMEOUT_MS: 60_000, TOOL_MAX_OUTPUT_CHARS: 100_000 },
        logger: pino({ level: 'silent' }),
        toolSettings: testSettings({ ...settings, ...options.settings }),
      });
      const answer = async (): Promise<ConfirmAnswer> =>
        options.approve
          ? { approved: true }
          : { approved: false, reason: 'the user declined', declined: true };
      const ctx = testContext({ answer, ...(options.signal && { signal: options.signal }) });
      calls += 1;
      const result = await executor.execute(
        { id: `gmail-${calls}`, name: 'gmail', arguments: args },
        ctx,
        profile,
      );
      return { ...result, asked: ctx.confirmRequests };
    },
  };
}
