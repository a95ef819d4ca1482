/**
 * `confirmationOf`, what the client's tool list shows about asking, agrees with the hook action
 * the executor takes for real calls: `always` when every call asks, `per_call` when only the
 * calls the tool names do, `never` otherwise, under every autonomy and override.
 */
import { describe, expect, it } from 'vitest';
import { confirmationOf, resolveHookAction } from './hooks.js';
import { testProfile } from './test-helpers.js';
import { ok, type ToolDefinition } from './types.js';

function tool(overrides: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name: 'some_tool',
    description: 'A tool.',
    parameters: { type: 'object', properties: { action: { type: 'string' } } },
    execute: async () => ok('done'),
    ...overrides,
  };
}

const perCall = tool({
  name: 'mail_like',
  risk: { reads: true, writes: true, network: true },
  confirmCall: (params) => (params.action === 'send' ? 'it sends mail' : undefined),
});
const readOnly = tool({ name: 'look', risk: { reads: true } });
const runsCode = tool({ name: 'run', risk: { executes: true, sandboxed: true } });
const throwing = tool({
  name: 'odd',
  risk: { reads: true },
  confirmCall: () => {
    throw new Error('broken check');
  },
});

const profiles = {
  standard: testProfile(),
  strict: testProfile({ autonomy: 'strict' }),
  autonomous: testProfile({ autonomy: 'autonomous' }),
  asks: testProfile({ confirm_tools: ['mail_like', 'look', 'run', 'odd'] }),
  trusts: testProfile({ trusted_tools: ['mail_like', 'run', 'odd'] }),
};

describe('confirmationOf', () => {
  const entry = (t: ToolDefinition) => ({ tool: t, source: 'builtin' as const });

  it('names each case', () => {
    const env = { sandboxAvailable: false };
    expect(confirmationOf(profiles.standard, entry(readOnly), env)).toBe('never');
    expect(confirmationOf(profiles.standard, entry(perCall), env)).toBe('per_call');
    expect(confirmationOf(profiles.standard, entry(runsCode), env)).toBe('always');
    expect(confirmationOf(profiles.standard, entry(runsCode), { sandboxAvailable: true })).toBe('never');
    expect(confirmationOf(profiles.strict, entry(perCall), env)).toBe('always');
    expect(confirmationOf(profiles.autonomous, entry(perCall), env)).toBe('never');
    expect(confirmationOf(profiles.asks, entry(readOnly), env)).toBe('always');
    expect(confirmationOf(profiles.trusts, entry(perCall), env)).toBe('never');
    // A check that throws asks rather than skips, so its calls are shown as asked about.
    expect(confirmationOf(profiles.standard, entry(throwing), env)).toBe('per_call');
  });

  it('matches the action real calls get, for every profile, tool and sandbox', () => {
    for (const sandboxAvailable of [true, false]) {
      const env = { sandboxAvailable };
      for (const [profileName, profile] of Object.entries(profiles)) {
        // (A check that throws asks about every call; its tool is shown as `per_call`, since
        // nothing but its own code can tell which calls ask.)
        for (const t of [perCall, readOnly, runsCode]) {
          const shown = confirmationOf(profile, entry(t), env);
          const asks = (action: string) =>
            resolveHookAction(profile, entry(t), env, { action }).action === 'confirm';
          const where = `${profileName} / ${t.name} / sandbox ${sandboxAvailable}`;
          expect(asks('send') && asks('look') ? 'always' : asks('send') ? 'per_call' : 'never', where).toBe(
            shown,
          );
        }
      }
    }
  });
});
