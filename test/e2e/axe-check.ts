/**
 * axe-core, the standard accessibility rules engine, run inside a page of the browser tests: its
 * `axe.min.js` is injected as a script tag and run on the whole document, in the light and the
 * dark theme (the client follows `prefers-color-scheme`, which playwright emulates).
 */
import { createRequire } from 'node:module';
import type { AxeResults, ImpactValue } from 'axe-core';
import type { Page } from 'playwright-core';

const axeScript = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export type Theme = 'light' | 'dark';
export const THEMES: readonly Theme[] = ['light', 'dark'];

/** One rule broken by one or more elements, as the failure message lists it. */
export interface Violation {
  theme: Theme;
  rule: string;
  impact: ImpactValue | undefined;
  help: string;
  helpUrl: string;
  /** The CSS selector of each offending element (an iframe's element is `frame >> element`). */
  targets: string[];
  /** What axe found wrong with the first element (e.g. the contrast ratio it measured). */
  summary: string;
}

/** The impacts that fail the test; `minor` and `moderate` findings are left to judgement. */
const FAILING: readonly ImpactValue[] = ['serious', 'critical'];

/**
 * Waits until the transitions and animations that end have ended, so colours are measured at
 * rest; a spinner's endless animation is left running.
 */
async function settle(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const ending = document
      .getAnimations()
      .filter((a) => Number.isFinite(a.effect?.getComputedTiming().endTime ?? Number.POSITIVE_INFINITY));
    await Promise.all(ending.map((a) => a.finished.catch(() => undefined)));
  });
}

/** Runs axe on the page as it is now, in `theme`, and returns its serious and critical violations. */
export async function axeViolations(page: Page, theme: Theme): Promise<Violation[]> {
  await page.emulateMedia({ colorScheme: theme });
  await settle(page);
  const injected = await page.evaluate(() => 'axe' in window);
  if (!injected) await page.addScriptTag({ path: axeScript });
  const results = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }
    ).axe;
    // Results of passing rules are not needed, and collecting them is most of axe's time.
    return axe.run(document, { resultTypes: ['violations'] });
  });
  return results.violations
    .filter((v) => v.impact != null && FAILING.includes(v.impact))
    .map((v) => ({
      theme,
      rule: v.id,
      impact: v.impact,
      help: v.help,
      helpUrl: v.helpUrl,
      targets: v.nodes.map((n) => n.target.map(String).join(' >> ')),
      summary: v.nodes[0]?.failureSummary?.replace(/\s+/g, ' ').trim() ?? '',
    }));
}

const MAX_TARGETS = 5;

/** The failure message: one paragraph per violation, saying what to fix and where. */
export function describeViolations(screen: string, violations: Violation[]): string {
  const lines = violations.map((v) => {
    // A rule broken by every row of a list names the first few rows; fixing one fixes them all.
    const shown = v.targets.slice(0, MAX_TARGETS).join(', ');
    const more = v.targets.length > MAX_TARGETS ? ` and ${v.targets.length - MAX_TARGETS} more` : '';
    return `[${v.theme}] ${v.rule} (${v.impact}): ${v.help}\n  on: ${shown}${more}\n  ${v.summary}\n  see ${v.helpUrl}`;
  });
  return `${screen}: ${violations.length} serious or critical accessibility violation(s)\n${lines.join('\n')}`;
}

/**
 * Checks the page in the light theme, then the dark one, and returns the failure message, or ''
 * when nothing serious or critical was found. The page is left in the dark theme.
 */
export async function checkAccessibility(page: Page, screen: string): Promise<string> {
  const found: Violation[] = [];
  for (const theme of THEMES) found.push(...(await axeViolations(page, theme)));
  return found.length === 0 ? '' : describeViolations(screen, found);
}
