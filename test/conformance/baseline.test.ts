/** The conformance baseline file and the comparison that decides whether `npm run conformance` fails. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compare, parseBaseline, parseClientBaseline } from './baseline.js';

describe('conformance baseline', () => {
  it('reads the checked-in baseline, every entry with a reason', () => {
    const baseline = parseBaseline(readFileSync(join(import.meta.dirname, 'navi-web.baseline.yml'), 'utf8'));
    expect(baseline.size).toBeGreaterThan(0);
    expect(baseline.get('resources-list')).toBe('navi-web offers no resources.');
    // These must pass: a web server that fails them has broken its transport or its tools.
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'])
      expect(baseline.has(scenario)).toBe(false);
  });

  it('reads the gnexus-creds baseline, which lets no transport or tool-listing failure pass', () => {
    const baseline = parseBaseline(
      readFileSync(join(import.meta.dirname, 'gnexus-creds.baseline.yml'), 'utf8'),
    );
    expect(baseline.get('resources-list')).toBe('gnexus-creds offers no resources.');
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'])
      expect(baseline.has(scenario)).toBe(false);
  });

  it("reads Navi's baseline, which lets no transport, tool-listing or tool-call failure pass", () => {
    const baseline = parseBaseline(readFileSync(join(import.meta.dirname, 'navi.baseline.yml'), 'utf8'));
    expect(baseline.get('prompts-list')).toMatch(/^Navi offers no prompts/);
    // Navi's /mcp shares the server with the web client and its token: a failure of these is a bug.
    for (const scenario of [
      'server-initialize',
      'ping',
      'tools-list',
      'tools-call-error',
      'dns-rebinding-protection',
      'server-sse-multiple-streams',
    ])
      expect(baseline.has(scenario)).toBe(false);
  });

  it("reads Navi's client baseline, which never lets the core client scenarios fail", () => {
    const baseline = parseClientBaseline(
      readFileSync(join(import.meta.dirname, 'navi-client.baseline.yml'), 'utf8'),
      'navi-client.baseline.yml',
    );
    // Initialisation, a tool call, SSE resumption and elicitation defaults are what every server
    // Navi connects to relies on: a failure of these is a bug in Navi's client.
    for (const scenario of ['initialize', 'tools_call', 'sse-retry', 'elicitation-sep1034-client-defaults'])
      expect(baseline.has(scenario)).toBe(false);
    for (const [scenario, reason] of baseline) expect(reason, scenario).toMatch(/\w{3,}.*\w{3,}/);
  });

  it('reads a client baseline: entries with their reasons, or an empty list', () => {
    const text = '# why\nclient:\n  - auth/a  # reason a\n\n  # more\n  - b-c  #  reason b\n';
    expect([...parseClientBaseline(text)]).toEqual([
      ['auth/a', 'reason a'],
      ['b-c', 'reason b'],
    ]);
    expect(parseClientBaseline('# nothing fails\nclient: []\n').size).toBe(0);
  });

  it.each([
    ['an entry without a reason', 'client:\n  - initialize\n'],
    ['an entry outside client:', '  - initialize  # because\n'],
    ['a map instead of a list', 'client:\n  initialize: because\n'],
    ['a server section', 'server:\n  - ping  # because\n'],
    ['a duplicate', 'client:\n  - a  # x\n  - a  # y\n'],
    ['entries after an empty list', 'client: []\n  - a  # x\n'],
  ])('refuses a client baseline with %s, naming the line', (_, text) => {
    expect(() => parseClientBaseline(text, 'c.yml')).toThrow(/^c\.yml:\d+: /);
  });

  it.each([
    ['no client section', '# nothing\n'],
    ['an empty client: list, which the suite cannot read', 'client:\n# none\n'],
  ])('refuses a client baseline with %s', (_, text) => {
    expect(() => parseClientBaseline(text, 'c.yml')).toThrow(/^c\.yml: .*client: \[\]/);
  });

  it.each([
    ['an entry without a reason', 'server:\n  ping:\n'],
    ['an entry outside server:', '  ping: because\n'],
    ['a list instead of a map', 'server:\n  - ping\n'],
    ['a client section', 'client:\n  ping: because\n'],
    ['a duplicate', 'server:\n  ping: a\n  ping: b\n'],
  ])('refuses %s, naming the line', (_, text) => {
    expect(() => parseBaseline(text, 'b.yml')).toThrow(/^b\.yml:\d+: /);
  });

  it('fails only on failures the baseline does not list, and names entries that pass now', () => {
    const baseline = parseBaseline('# why\nserver:\n  a: expected\n  b: expected too\n  gone: renamed\n');
    const result = compare(
      [
        { scenario: 'a', failures: ['check: broken'] },
        { scenario: 'b', failures: [] },
        { scenario: 'c', failures: ['check: new'] },
        { scenario: 'd', failures: [] },
      ],
      baseline,
    );
    expect(result.unexpected.map((r) => r.scenario)).toEqual(['c']);
    expect(result.expected.map((r) => r.scenario)).toEqual(['a']);
    expect(result.nowPassing).toEqual(['b']);
    expect(result.notRun).toEqual(['gone']);
  });
});
