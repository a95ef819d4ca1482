/**
 * The tool budget's cost for `npm run bench`: `selectTools` runs before every LLM call, so what
 * it costs is added to every step of every run. Measured on 60 tools with realistic schemas and
 * a conversation of a few hundred words, when everything fits (the common case: one sum) and
 * when it must rank and trim. The claim check runs once per answer and is measured beside it.
 * Run alone with `node --import tsx bench/tool-budget.ts`.
 */
import { performance } from 'node:perf_hooks';
import { findUnverifiedClaims } from '../src/agent/claims.js';
import type { ToolSpec } from '../src/llm/types.js';
import { selectTools, specTokens } from '../src/tools/tool-budget.js';
import type { BenchRow } from './types.js';

const CALLS = 5_000;
const WARMUP = 500;

const TOPICS =
  'weather invoice garden printer recipe flight parcel podcast mortgage vaccine guitar telescope aquarium bicycle ' +
  'chimney dentist elevator ferry glacier harbour igloo jigsaw kettle lantern meadow nectar orchard pharmacy quarry ' +
  'raincoat saddle tractor umbrella violin walnut xylophone yacht zeppelin anchor blanket canyon dolphin engine ' +
  'falcon gazebo hammock island jacket kayak ladder magnet noodle oyster pebble quill rocket sundial tulip';

function spec(name: string): ToolSpec {
  return {
    name,
    description:
      `Looks after the ${name.replace(/_/g, ' ')}: reads its state, changes its settings, lists what changed ` +
      'since the last look and reports back in a short summary. Use it when the person asks about this one ' +
      'thing; for anything else, another tool is the right one.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['read', 'set', 'list'], description: 'What to do.' },
        value: { type: 'string', description: 'For set: the new value.' },
        limit: { type: 'integer', minimum: 1, maximum: 100, description: 'For list: how many.' },
      },
      required: ['action'],
    },
  };
}

const specs: ToolSpec[] = [
  spec('list_tools'),
  spec('tool_manual'),
  ...TOPICS.split(' ').map((t) => spec(`gadget_${t}`)),
];
const conversation = {
  latest: 'Can you check whether the garden sprinklers ran last night and book a ferry for Saturday morning?',
  earlier: Array.from(
    { length: 6 },
    (_, i) =>
      `Message ${i}: the printer in the study jams again, the invoice for the kayak came, and the weather ` +
      'for the weekend looks fine, so we can take the bicycle to the harbour and see the dolphins.',
  ),
};
const answer =
  'I checked the garden log: the sprinklers ran from 5:00 to 5:20. I have booked the 9:15 ferry on Saturday ' +
  'and saved the ticket to ~/Documents/ferry.pdf. Let me know if you want a reminder. '.repeat(3);

function perCall(fn: () => unknown): number {
  for (let i = 0; i < WARMUP; i++) fn();
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) fn();
  return ((performance.now() - start) * 1000) / CALLS;
}

export async function benchToolBudget(): Promise<BenchRow[]> {
  const all = specs.reduce((n, s) => n + specTokens(s), 0);
  const trimmed = selectTools(specs, {
    budgetTokens: Math.floor(all / 5),
    conversation,
    keep: ['gadget_kayak'],
  });
  return [
    {
      name: 'tool selection, 60 tools that fit',
      value: perCall(() => selectTools(specs, { budgetTokens: all, conversation })),
      unit: 'µs/call',
      note: `${all} estimated tokens of schemas; runs before every LLM call`,
    },
    {
      name: 'tool selection, 60 tools trimmed',
      value: perCall(() =>
        selectTools(specs, { budgetTokens: Math.floor(all / 5), conversation, keep: ['gadget_kayak'] }),
      ),
      unit: 'µs/call',
      note: `budget a fifth of the schemas: ${trimmed.specs.length} offered; 7 messages ranked`,
    },
    {
      name: 'claim check of one answer',
      value: perCall(() => findUnverifiedClaims(answer, [{ name: 'web_search', success: true }])),
      unit: 'µs/call',
      note: `${answer.length}-character answer; runs once per answer`,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await benchToolBudget()) console.log(`${row.name}: ${row.value.toFixed(2)} ${row.unit}`);
}
