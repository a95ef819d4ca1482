/**
 * What the profiles page shows of a profile, and the checks of its JSON editor that need no
 * server: whether the text is JSON at all (and where it breaks), and whether it is an object.
 * What the profile schema says about the fields comes from the server (`PUT` answers 400
 * `INVALID_PROFILE` with it), so there is one judge of a profile, not two that could disagree.
 */
import type { ProfileSummary } from '../../../src/protocol/rest.js';

export type ParsedProfile = { ok: true; profile: Record<string, unknown> } | { ok: false; problem: string };

/** Line and column (from 1) of a character offset in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
}

/**
 * Reads the editor's text as a profile object, or says what is wrong with it: where the JSON
 * breaks (line and column, as the browser's parser found it), or that it is not an object.
 */
export function parseProfileJson(text: string): ParsedProfile {
  if (text.trim() === '')
    return { ok: false, problem: 'The profile is empty: it must be a JSON object ({ … }).' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const raw = err instanceof Error ? err.message : String(err);
    // Engines name the offset ("at position 42"); a person looks for a line and a column.
    const position = /at position (\d+)/.exec(raw);
    const where = position && !/line \d+/.test(raw) ? lineAndColumn(text, Number(position[1])) : null;
    const message = raw.replace(/^JSON\.parse: /, '').replace(/ in JSON at position \d+/, '');
    const suffix = where ? ` (line ${where.line}, column ${where.column})` : '';
    return { ok: false, problem: `The text is not valid JSON: ${message}${suffix}.` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, problem: 'The profile must be a JSON object ({ … }), with its fields inside.' };
  return { ok: true, profile: value as Record<string, unknown> };
}

/** The profile as the editor shows it: two-space JSON, as Navi writes profile files. */
export function profileText(profile: Record<string, unknown>): string {
  return `${JSON.stringify(profile, null, 2)}\n`;
}

/** The model line of a profile's card. */
export function modelText(profile: ProfileSummary, defaultModel: string): string {
  if (profile.model) return profile.llm_backend ? `${profile.model} (${profile.llm_backend})` : profile.model;
  if (profile.llm_backend) return `the default model of ${profile.llm_backend}`;
  return defaultModel ? `the default model (${defaultModel})` : 'the default model';
}

/** The tools line of a profile's card: its `enabled_tools` patterns, `*` said in words. */
export function toolsText(profile: ProfileSummary): string {
  if (profile.enabled_tools.length === 0) return 'none';
  if (profile.enabled_tools.includes('*')) return 'all tools';
  return profile.enabled_tools.join(', ');
}
