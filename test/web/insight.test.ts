/**
 * The insight pages' words and checks (web/src/lib/insight.ts): a fact edit sends only what
 * changed and is refused before sending when a field is empty, too long or nothing changed;
 * paging, categories and tool filters; labels for sources, load errors, server states and times.
 */
import { describe, expect, it } from 'vitest';
import type { MemoryFactRecord, ToolSummary } from '../../src/protocol/rest.js';
import {
  canRestart,
  categoryCounts,
  duration,
  factDraft,
  factEdit,
  filterTools,
  groupByCategory,
  loadErrorKind,
  pageRange,
  sourceLabel,
} from '../../web/src/lib/insight.js';

const fact = (id: number, category: string, key: string, value = 'v'): MemoryFactRecord => ({
  id,
  category,
  key,
  value,
  source_session_id: null,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
});

describe('factEdit', () => {
  const original = fact(1, 'food', 'favourite_drink', 'tea');

  it('sends only the fields that changed, trimmed', () => {
    const draft = { ...factDraft(original), value: '  green tea ' };
    expect(factEdit(original, draft)).toEqual({ patch: { value: 'green tea' }, problems: [] });
    const moved = { ...factDraft(original), category: 'drinks', key: 'morning' };
    expect(factEdit(original, moved).patch).toEqual({ category: 'drinks', key: 'morning' });
  });

  it('refuses an edit that changes nothing, saying what to do', () => {
    const result = factEdit(original, { ...factDraft(original), value: ' tea ' });
    expect(result.patch).toEqual({});
    expect(result.problems).toEqual(['Nothing was changed: edit the category, key or value, or cancel.']);
  });

  it('names empty and oversized fields, counting characters not UTF-16 units', () => {
    const empty = factEdit(original, { category: ' ', key: 'k', value: '' });
    expect(empty.problems).toEqual(['The category cannot be empty.', 'The value cannot be empty.']);
    const long = factEdit(original, { category: 'c'.repeat(41), key: 'k', value: 'v' });
    expect(long.problems).toEqual(['The category is 41 characters long; at most 40 are kept.']);
    // 40 emoji are 80 UTF-16 units but 40 characters: allowed.
    expect(factEdit(original, { category: '😀'.repeat(40), key: 'k', value: 'v' }).problems).toEqual([]);
    expect(factEdit(original, { category: 'c', key: 'k', value: 'x'.repeat(2001) }).problems[0]).toContain(
      'at most 2000',
    );
  });
});

describe('the fact list', () => {
  it('says which facts a page shows', () => {
    expect(pageRange(0, 50, 230)).toBe('1–50 of 230');
    expect(pageRange(200, 30, 230)).toBe('201–230 of 230');
    expect(pageRange(0, 0, 0)).toBe('No facts');
  });

  it('counts categories, most facts first, and groups in the order given', () => {
    const facts = [fact(1, 'work', 'a'), fact(2, 'food', 'b'), fact(3, 'work', 'c'), fact(4, 'home', 'd')];
    expect(categoryCounts(facts)).toEqual([
      { category: 'work', count: 2 },
      { category: 'food', count: 1 },
      { category: 'home', count: 1 },
    ]);
    expect(groupByCategory(facts).map((g) => [g.category, g.facts.map((f) => f.id)])).toEqual([
      ['work', [1, 3]],
      ['food', [2]],
      ['home', [4]],
    ]);
    expect(groupByCategory([])).toEqual([]);
  });
});

describe('tools', () => {
  const tool = (name: string, source: ToolSummary['source'], server?: string): ToolSummary => ({
    name,
    description: `Does ${name} things.`,
    parameters: {},
    source,
    ...(server ? { server } : {}),
  });
  const tools = [
    tool('terminal', 'builtin'),
    tool('weather', 'user'),
    tool('mcp__web__fetch', 'mcp', 'navi-web'),
  ];

  it('labels where a tool comes from', () => {
    expect(tools.map((t) => sourceLabel(t))).toEqual([
      'Built-in',
      'Your tools folder',
      'MCP server navi-web',
    ]);
    expect(loadErrorKind({ source: 'user' })).toBe('Tool file');
    expect(loadErrorKind({ source: 'context_provider' })).toBe('Context provider');
  });

  it('filters by every word and by source', () => {
    expect(filterTools(tools, '', '').length).toBe(3);
    expect(filterTools(tools, 'NAVI-web', '').map((t) => t.name)).toEqual(['mcp__web__fetch']);
    expect(filterTools(tools, 'does things', 'user').map((t) => t.name)).toEqual(['weather']);
    expect(filterTools(tools, 'weather terminal', '')).toEqual([]);
  });
});

describe('MCP servers', () => {
  it('offers a restart only to a server that may run', () => {
    expect(canRestart({ state: 'down' })).toBe(true);
    expect(canRestart({ state: 'ready' })).toBe(true);
    expect(canRestart({ state: 'awaiting_approval' })).toBe(false);
    expect(canRestart({ state: 'disabled' })).toBe(false);
  });

  it('reads times as words', () => {
    expect(duration(null)).toBeNull();
    expect(duration(-5)).toBeNull();
    expect(duration(40_500)).toBe('40 s');
    expect(duration(5 * 60_000)).toBe('5 min');
    expect(duration((3 * 60 + 12) * 60_000)).toBe('3 h 12 min');
    expect(duration(5 * 24 * 3_600_000)).toBe('5 days');
  });
});
