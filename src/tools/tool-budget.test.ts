import { describe, expect, it } from 'vitest';
import { TOPICS } from '../../test/support/tool-topics.js';
import type { ToolSpec } from '../llm/types.js';
import { ROUTE_HINT_TOKENS, ROUTE_TOOLS, selectTools, specTokens, words } from './tool-budget.js';

function gadget(topic: string): ToolSpec {
  return {
    name: `gadget_${topic}`,
    description:
      `Looks after the ${topic}: reads its state, changes its settings and reports what it did. ` +
      'Use it when the person asks about this one thing; it does nothing else at all, so other requests need other tools.',
    parameters: { type: 'object', properties: { action: { type: 'string', description: 'What to do.' } } },
  };
}

const route: ToolSpec[] = ROUTE_TOOLS.map((name) => ({
  name,
  description: `The ${name} tool.`,
  parameters: { type: 'object', properties: { name: { type: 'string' } } },
}));

/** 60 tools: the two route tools first, then 58 gadgets. */
const sixty: ToolSpec[] = [...route, ...TOPICS.map(gadget)];

const conversation = (latest: string, earlier: string[] = []) => ({ latest, earlier });
const names = (specs: ToolSpec[]) => specs.map((s) => s.name);

describe('selectTools', () => {
  it('offers every tool, unchanged and in order, when they fit', () => {
    const total = sixty.reduce((n, s) => n + specTokens(s), 0);
    const picked = selectTools(sixty, { budgetTokens: total, conversation: conversation('hello') });
    expect(picked.trimmed).toBe(false);
    expect(picked.specs).toEqual(sixty);
    expect(picked).toMatchObject({ total: 60, tokens: total, allTokens: total });
  });

  it('within a small budget offers the route, the tools already called, then the most relevant', () => {
    const budget = 1_000;
    const picked = selectTools(sixty, {
      budgetTokens: budget,
      conversation: conversation('Book a flight and check the weather, please.', [
        'My bicycle has a flat tyre.',
      ]),
      keep: ['gadget_tulip'],
    });
    expect(picked.trimmed).toBe(true);
    expect(picked.total).toBe(60);
    // Counted as sent: list_tools with its hint included.
    expect(picked.tokens).toBe(picked.specs.reduce((n, s) => n + specTokens(s), 0));
    expect(picked.tokens).toBeLessThanOrEqual(budget);
    const offered = names(picked.specs);
    expect(offered).toEqual(expect.arrayContaining(['list_tools', 'tool_manual', 'gadget_tulip']));
    expect(offered).toEqual(expect.arrayContaining(['gadget_flight', 'gadget_weather', 'gadget_bicycle']));
    expect(offered.length).toBeLessThan(15);
    // The registry's order is kept.
    expect(offered).toEqual(
      [...offered].sort(
        (a, b) => sixty.findIndex((s) => s.name === a) - sixty.findIndex((s) => s.name === b),
      ),
    );
  });

  it('ranks the latest user message above earlier ones', () => {
    // Room for the route and one gadget only.
    const budget =
      ROUTE_HINT_TOKENS + route.reduce((n, s) => n + specTokens(s), 0) + specTokens(gadget('kayak'));
    const picked = selectTools(sixty, {
      budgetTokens: budget,
      conversation: conversation('Where is my kayak?', ['Tell me about the dolphin.']),
    });
    expect(names(picked.specs)).toEqual(['list_tools', 'tool_manual', 'gadget_kayak']);
  });

  it('matches words whatever their ending: "printers" finds the printer tool', () => {
    const budget =
      ROUTE_HINT_TOKENS + route.reduce((n, s) => n + specTokens(s), 0) + specTokens(gadget('printer'));
    const picked = selectTools(sixty, {
      budgetTokens: budget,
      conversation: conversation('Are both printers online?'),
    });
    expect(names(picked.specs)).toContain('gadget_printer');
  });

  it('tells the model through list_tools that more tools exist, and how to reach them', () => {
    const picked = selectTools(sixty, { budgetTokens: 500, conversation: conversation('hi') });
    const list = picked.specs.find((s) => s.name === 'list_tools');
    expect(list?.description).toContain(`Only ${picked.specs.length} of the 60 tools`);
    expect(list?.description).toContain('tool_manual');
    // The caller's spec is not changed.
    expect(route[0]?.description).toBe('The list_tools tool.');
  });

  it('keeps the route even when the budget is smaller than it, and offers nothing else', () => {
    const picked = selectTools(sixty, { budgetTokens: 1, conversation: conversation('garden') });
    expect(names(picked.specs)).toEqual(['list_tools', 'tool_manual']);
    expect(picked.trimmed).toBe(true);
  });

  it('is deterministic: the same input gives the same choice', () => {
    const input = { budgetTokens: 900, conversation: conversation('anchor and canyon', ['noodle']) };
    expect(selectTools(sixty, input)).toEqual(selectTools(sixty, input));
  });

  it('copes with no tools, a zero budget, unknown kept names and an empty conversation', () => {
    expect(selectTools([], { budgetTokens: 0, conversation: conversation('') })).toMatchObject({
      specs: [],
      trimmed: false,
    });
    const picked = selectTools(sixty, {
      budgetTokens: 0,
      conversation: conversation(''),
      keep: ['no_such_tool', ''],
    });
    expect(names(picked.specs)).toEqual(['list_tools', 'tool_manual']);
    const noRoute = selectTools(sixty.slice(2), { budgetTokens: 0, conversation: conversation('garden') });
    expect(noRoute.specs).toEqual([]);
  });

  it('reads only the start of a huge message and survives hostile text', () => {
    const huge = `${'garden '.repeat(200_000)}printer`;
    const picked = selectTools(sixty, {
      budgetTokens:
        ROUTE_HINT_TOKENS + route.reduce((n, s) => n + specTokens(s), 0) + specTokens(gadget('garden')),
      conversation: conversation(huge, ['\u0000\uFFFF'.repeat(1000), '__proto__ constructor toString']),
    });
    expect(names(picked.specs)).toEqual(['list_tools', 'tool_manual', 'gadget_garden']);
  });
});

describe('specTokens', () => {
  it('is the JSON length of the spec divided by four, rounded up', () => {
    const spec = gadget('tulip');
    expect(specTokens(spec)).toBe(Math.ceil(JSON.stringify(spec).length / 4));
  });
});

describe('words', () => {
  it('splits tool names into parts, drops stop words and short words, and cuts endings', () => {
    expect(words('mcp__navi_web__fetch')).toEqual(['mcp', 'navi', 'web', 'fetch']);
    expect(words('The files and the FILE, filed')).toEqual(['fil', 'fil', 'fil']);
    expect(words('scheduling scheduled schedule')).toEqual(['schedul', 'schedul', 'schedul']);
    expect(words('a an of')).toEqual([]);
  });
});
