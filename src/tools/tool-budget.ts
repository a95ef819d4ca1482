/**
 * The tool budget (docs/local-models.md#tool-budget): a model with a small context cannot read
 * sixty tool schemas and still have room for the conversation, so each LLM call offers only the
 * tools that fit a share of the context, the most relevant first.
 *
 * What always goes in: `list_tools` and `tool_manual`, the route to the others (the executor runs
 * any tool the policy allows, offered or not, so the model can call one by name once it has read
 * its manual), then the tools this conversation already called. The rest are ranked by how many
 * of their name parts and description words the conversation uses, the latest user message
 * counting most, and taken in that order while they fit.
 *
 * A tool's cost is its schema's JSON length divided by four: the four-characters-a-token rule
 * Navi uses wherever a backend reports no count. It errs on the generous side for English
 * descriptions and is cheap enough to compute on every call.
 *
 * Deterministic (ties keep the registry's order) and linear in tools × words: it runs before
 * every LLM call.
 */
import type { ToolSpec } from '../llm/types.js';

/** Offered whenever the list is trimmed: through them the model reaches every other tool. */
export const ROUTE_TOOLS: readonly string[] = ['list_tools', 'tool_manual'];

/** The conversation as the ranking reads it. */
export interface BudgetConversation {
  /** The latest user message: its words weigh most. */
  latest: string;
  /** Earlier messages (user and assistant text), most recent last. */
  earlier: readonly string[];
}

export interface BudgetOptions {
  /** Tokens the offered tools may take together. */
  budgetTokens: number;
  conversation: BudgetConversation;
  /**
   * Tools to offer before any ranking, in this order, while they fit: the ones already called
   * in this context (a model that used a tool expects to see it again).
   */
  keep?: readonly string[];
}

export interface ToolSelection {
  /** The offered specs, in the order they were given. */
  specs: ToolSpec[];
  /** True when some tools were left out. */
  trimmed: boolean;
  /** How many tools there were to offer. */
  total: number;
  /** Estimated tokens of the offered specs. */
  tokens: number;
  /** Estimated tokens of all the specs together. */
  allTokens: number;
}

/** Room kept for the hint list_tools gets when the list is trimmed (counted as for 999 tools). */
export const ROUTE_HINT_TOKENS = Math.ceil(routeHint(999, 999).length / 4);

/** Weight of a word of the latest user message, and of an earlier one. */
const LATEST_WEIGHT = 3;
const EARLIER_WEIGHT = 1;
/** A word matching a part of the tool's name counts this many times more than a description word. */
const NAME_FACTOR = 3;
/** Only this much of the conversation is read: relevance lives in the recent part. */
const EARLIER_MESSAGES = 6;
const MAX_TEXT_CHARS = 4_000;

/**
 * JSON length of each tool's parameter schema. The schema object is the tool's own and outlives
 * the specs built from it for every call, so its length is measured once; a WeakMap lets it go
 * with the tool.
 */
const schemaLengths = new WeakMap<object, number>();
/** `{"name":,"description":,"parameters":}` */
const SPEC_JSON_OVERHEAD = 38;

/** Estimated tokens of one spec as the backend sends it: its JSON length / 4. */
export function specTokens(spec: ToolSpec): number {
  const params: unknown = spec.parameters;
  let schema = typeof params === 'object' && params !== null ? schemaLengths.get(params) : undefined;
  if (schema === undefined) {
    schema = (JSON.stringify(params) ?? '').length;
    if (typeof params === 'object' && params !== null) schemaLengths.set(params, schema);
  }
  const chars =
    SPEC_JSON_OVERHEAD + JSON.stringify(spec.name).length + JSON.stringify(spec.description).length + schema;
  return Math.ceil(chars / 4);
}

/**
 * The specs to offer: all of them when they fit `budgetTokens`, else the route tools, the kept
 * ones and the best ranked that fit.
 */
export function selectTools(specs: readonly ToolSpec[], options: BudgetOptions): ToolSelection {
  const costs = specs.map(specTokens);
  const total = costs.reduce((sum, c) => sum + c, 0);
  if (total <= options.budgetTokens)
    return { specs: [...specs], trimmed: false, total: specs.length, tokens: total, allTokens: total };

  const index = new Map(specs.map((s, i) => [s.name, i]));
  const chosen = new Set<number>();
  let used = index.has('list_tools') ? ROUTE_HINT_TOKENS : 0;
  // The route is offered even when it alone exceeds the budget: without it nothing else is reachable.
  for (const name of ROUTE_TOOLS) {
    const i = index.get(name);
    if (i === undefined || chosen.has(i)) continue;
    chosen.add(i);
    used += costs[i]!;
  }
  const take = (i: number) => {
    if (chosen.has(i) || used + costs[i]! > options.budgetTokens) return;
    chosen.add(i);
    used += costs[i]!;
  };
  for (const name of options.keep ?? []) {
    const i = index.get(name);
    if (i !== undefined) take(i);
  }

  // One memo of each raw word's stem for this call: descriptions share most of their words.
  const memo = new Map<string, string>();
  const weights = conversationWeights(options.conversation, memo);
  const ranked: { i: number; score: number }[] = [];
  specs.forEach((spec, i) => {
    if (!chosen.has(i)) ranked.push({ i, score: relevance(spec, weights, memo) });
  });
  ranked.sort((a, b) => b.score - a.score || a.i - b.i);
  for (const { i } of ranked) take(i);

  const chosenSpecs = [...chosen].sort((a, b) => a - b).map((i) => specs[i]!);
  const trimmed = chosenSpecs.length < specs.length;
  // list_tools is told that it is the way to the tools left out, so the model knows they exist.
  const offered = trimmed
    ? chosenSpecs.map((s) =>
        s.name === 'list_tools'
          ? { ...s, description: `${s.description} ${routeHint(chosenSpecs.length, specs.length)}` }
          : s,
      )
    : chosenSpecs;
  const tokens = offered.reduce((sum, s) => sum + specTokens(s), 0);
  return { specs: offered, trimmed, total: specs.length, tokens, allTokens: total };
}

function routeHint(offered: number, total: number): string {
  return (
    `Only ${offered} of the ${total} tools you may use are offered now: ` +
    'find the others here, read one with tool_manual, then call it by its name.'
  );
}

/** Each word of the conversation and its weight: the highest of the places it appears. */
function conversationWeights(
  conversation: BudgetConversation,
  memo: Map<string, string>,
): Map<string, number> {
  const weights = new Map<string, number>();
  const add = (text: string, weight: number) => {
    for (const word of words(text.slice(0, MAX_TEXT_CHARS), memo))
      if ((weights.get(word) ?? 0) < weight) weights.set(word, weight);
  };
  for (const text of conversation.earlier.slice(-EARLIER_MESSAGES)) add(text, EARLIER_WEIGHT);
  add(conversation.latest, LATEST_WEIGHT);
  return weights;
}

/** How much the conversation speaks of this tool: each distinct word counted once. */
function relevance(spec: ToolSpec, weights: Map<string, number>, memo: Map<string, string>): number {
  if (weights.size === 0) return 0;
  const seen = new Set<string>();
  let score = 0;
  for (const word of words(spec.name.replace(/([a-z])([A-Z])/g, '$1 $2'), memo)) {
    if (seen.has(word)) continue;
    seen.add(word);
    score += (weights.get(word) ?? 0) * NAME_FACTOR;
  }
  for (const word of words(spec.description, memo)) {
    if (seen.has(word)) continue;
    seen.add(word);
    score += weights.get(word) ?? 0;
  }
  return score;
}

const STOP_WORDS = new Set(
  (
    'the and for with that this from into onto your you are was were has have had not but can its ' +
    'all any one use used uses using will would should could may might also then than them they ' +
    'their there here what when where which who how why about each other more most some such only ' +
    'own same just over under again very out off our ours his her him she please want need'
  ).split(' '),
);

/**
 * The comparable words of `text`: lower case, split at anything not a letter or digit (so
 * `read_file` and `mcp__navi_web__fetch` give their parts), stop words and one- or two-letter
 * words dropped, and the commonest English endings cut so "files", "filed" and "file" meet.
 */
export function words(text: string, memo: Map<string, string> = new Map()): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    let word = memo.get(raw);
    if (word === undefined) {
      word = raw.length < 3 || STOP_WORDS.has(raw) ? '' : stem(raw);
      memo.set(raw, word);
    }
    if (word !== '') out.push(word);
  }
  return out;
}

function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}
