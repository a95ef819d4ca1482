import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, toolJsonSchema } from './define-tool.js';
import { ok } from './types.js';

const schema = z.strictObject({
  action: z.enum(['read', 'write']).describe('What to do.'),
  path: z.string().min(1).max(20).describe('Where.'),
  count: z.int().min(1).max(5).default(1),
  ratio: z.number().optional(),
  tags: z.array(z.string().min(1)).max(3).optional(),
  options: z.strictObject({ force: z.boolean(), mode: z.literal('fast').optional() }).optional(),
  env: z.record(z.string(), z.string()).optional(),
});

const tool = defineTool({
  name: 'sample',
  description: 'A sample.',
  group: 'fs',
  risk: { reads: true },
  parameters: schema,
  async execute(params) {
    // Compiles only if the inferred type is right: `count` is filled in, `path` a string.
    return ok(`${params.action} ${params.path.length + params.count}`);
  },
});

const cases: [string, unknown][] = [
  ['minimal', { action: 'read', path: 'a' }],
  [
    'everything',
    {
      action: 'write',
      path: 'b',
      count: 5,
      ratio: 0.5,
      tags: ['x'],
      options: { force: true, mode: 'fast' },
      env: { A: 'b' },
    },
  ],
  ['missing required', { action: 'read' }],
  ['wrong enum', { action: 'delete', path: 'a' }],
  ['empty string', { action: 'read', path: '' }],
  ['too long', { action: 'read', path: 'x'.repeat(21) }],
  ['integer out of range', { action: 'read', path: 'a', count: 6 }],
  ['not an integer', { action: 'read', path: 'a', count: 1.5 }],
  ['quoted number', { action: 'read', path: 'a', count: '2' }],
  ['unknown argument', { action: 'read', path: 'a', colour: 'red' }],
  ['too many tags', { action: 'read', path: 'a', tags: ['a', 'b', 'c', 'd'] }],
  ['empty tag', { action: 'read', path: 'a', tags: [''] }],
  ['nested unknown', { action: 'read', path: 'a', options: { force: true, extra: 1 } }],
  ['nested missing', { action: 'read', path: 'a', options: {} }],
  ['wrong literal', { action: 'read', path: 'a', options: { force: false, mode: 'slow' } }],
  ['record of numbers', { action: 'read', path: 'a', env: { A: 1 } }],
  ['null ratio', { action: 'read', path: 'a', ratio: null }],
  ['not an object', 'read'],
  ['an array', [{ action: 'read', path: 'a' }]],
];

describe('defineTool', () => {
  it('derives a JSON Schema that accepts and refuses exactly what the zod schema does', () => {
    // No coercion and no defaults: the two must agree on the schemas alone.
    const validate = new Ajv({ allErrors: true, strict: false }).compile(tool.parameters);
    const verdicts = cases.map(([label, args]) => [label, schema.safeParse(args).success, validate(args)]);
    for (const [label, zodSays, ajvSays] of verdicts) expect(ajvSays, String(label)).toBe(zodSays);
    // The set holds both kinds, so agreement is not trivial.
    expect(verdicts.filter((v) => v[1]).length).toBe(2);
  });

  it('gives the LLM a plain object schema with descriptions and the required list', () => {
    expect(tool.parameters).not.toHaveProperty('$schema');
    expect(tool.parameters).toMatchObject({
      type: 'object',
      required: ['action', 'path'],
      additionalProperties: false,
      properties: {
        action: { type: 'string', enum: ['read', 'write'], description: 'What to do.' },
        count: { type: 'integer', minimum: 1, maximum: 5, default: 1 },
      },
    });
    // zod's safe-integer bounds are noise for a model.
    expect(JSON.stringify(toolJsonSchema(z.object({ n: z.int() })))).toBe(
      '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}',
    );
  });

  it('refuses a schema JSON Schema cannot express', () => {
    expect(() =>
      defineTool({
        name: 'dated',
        description: 'x',
        group: 'fs',
        risk: {},
        parameters: z.object({ when: z.date() }),
        execute: async () => ok(''),
      }),
    ).toThrow();
  });
});
