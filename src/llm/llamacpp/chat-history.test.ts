import { describe, expect, it } from 'vitest';
import { grammarSchema, toLlamaFunctions, toLlamaHistory } from './chat-history.js';

describe('toLlamaHistory', () => {
  it('maps system, user and assistant messages and ends with an empty model turn to answer in', () => {
    expect(
      toLlamaHistory([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'How are you?' },
      ]),
    ).toEqual([
      { type: 'system', text: 'Be brief.' },
      { type: 'user', text: 'Hi' },
      { type: 'model', response: ['Hello!'] },
      { type: 'user', text: 'How are you?' },
      { type: 'model', response: [] },
    ]);
  });

  it('puts tool results into the calls of their model turn, which the answer then continues', () => {
    const history = toLlamaHistory([
      { role: 'user', content: 'Weather and time?' },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'a', name: 'weather', arguments: { city: 'Oslo' } },
          { id: 'b', name: 'now', arguments: {} },
        ],
      },
      { role: 'tool', content: 'sunny', tool_call_id: 'a', name: 'weather' },
      { role: 'tool', content: '12:00', tool_call_id: 'b', name: 'now' },
    ]);
    expect(history).toEqual([
      { type: 'user', text: 'Weather and time?' },
      {
        type: 'model',
        response: [
          'Let me look.',
          { type: 'functionCall', name: 'weather', params: { city: 'Oslo' }, result: 'sunny' },
          { type: 'functionCall', name: 'now', params: {}, result: '12:00' },
        ],
      },
    ]);
  });

  it('keeps a later assistant text in the same model turn after tool results', () => {
    const history = toLlamaHistory([
      { role: 'user', content: 'Time?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', name: 'now', arguments: {} }] },
      { role: 'tool', content: '12:00', tool_call_id: 'a', name: 'now' },
      { role: 'assistant', content: 'It is noon.' },
      { role: 'user', content: 'Thanks' },
    ]);
    expect(history[1]).toEqual({
      type: 'model',
      response: [{ type: 'functionCall', name: 'now', params: {}, result: '12:00' }, 'It is noon.'],
    });
    expect(history.at(-1)).toEqual({ type: 'model', response: [] });
  });

  it('merges messages of the same role and moves every system message first, as strict templates need', () => {
    const history = toLlamaHistory([
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
      { role: 'system', content: 'late rule' },
    ]);
    expect(history).toEqual([
      { type: 'system', text: 'late rule' },
      { type: 'user', text: 'one\n\ntwo' },
      { type: 'model', response: [] },
    ]);
  });

  it('a tool result without its call becomes text the model can still read; images are named, not sent', () => {
    const history = toLlamaHistory([
      { role: 'user', content: 'Look', images: ['aGVsbG8='] },
      { role: 'tool', content: 'orphan output', tool_call_id: 'gone', name: 'read_file' },
    ]);
    expect(history[0]).toEqual({
      type: 'user',
      text: 'Look\n\n(1 image was attached; this model cannot see images.)',
    });
    expect(history[1]).toEqual({ type: 'user', text: 'Result of the tool read_file:\norphan output' });
  });
});

describe('toLlamaFunctions and grammarSchema', () => {
  it('keeps what the grammar can express and drops what it cannot', () => {
    expect(
      grammarSchema({
        type: 'object',
        properties: {
          path: { type: 'string', description: 'Where', pattern: '^/', minLength: 1, format: 'uri' },
          when: { type: 'string', format: 'date-time' },
          count: { type: 'integer', minimum: 0, default: 3 },
          mode: { enum: ['a', 'b'] },
          either: { anyOf: [{ type: 'string' }, { type: 'null' }] },
          maybe: { type: ['string', 'null'] },
          list: { type: 'array', items: { type: 'number' }, maxItems: 4 },
          pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }] },
          loose: {},
          nested: { properties: { x: { type: 'boolean' } }, required: ['x', 'ghost'] },
        },
        required: ['path', 'unknown'],
        additionalProperties: false,
        $schema: 'http://json-schema.org/draft-07/schema#',
      }),
    ).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1, description: 'Where' },
        when: { type: 'string', format: 'date-time' },
        count: { type: 'integer' },
        mode: { enum: ['a', 'b'] },
        either: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        maybe: { type: ['string', 'null'] },
        list: { type: 'array', items: { type: 'number' }, maxItems: 4 },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] },
        loose: {
          oneOf: [
            { type: ['string', 'number', 'boolean', 'null'] },
            { type: 'array' },
            { type: 'object', additionalProperties: true },
          ],
        },
        nested: { type: 'object', properties: { x: { type: 'boolean' } }, required: ['x'] },
      },
      required: ['path'],
    });
  });

  it('a type list with object or array becomes a choice; a tool without parameters needs no grammar', () => {
    expect(grammarSchema({ type: 'object', properties: { v: { type: ['string', 'object'] } } })).toEqual({
      type: 'object',
      properties: { v: { oneOf: [{ type: 'string' }, { type: 'object', additionalProperties: true }] } },
      required: [],
    });
    expect(grammarSchema({ type: 'object', properties: {} })).toBeUndefined();
    expect(grammarSchema({})).toBeDefined();
  });

  it('survives hostile schemas: deep nesting, cycles of references, wrong types', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 200; i++) deep = { type: 'object', properties: { d: deep } };
    expect(() => grammarSchema(deep)).not.toThrow();
    const bad = { type: 'object', properties: { a: 'not a schema', b: null, c: [1, 2], d: { type: 42 } } };
    expect(() => grammarSchema(bad as never)).not.toThrow();
    expect(toLlamaFunctions([{ name: 'f', description: 'd', parameters: bad as never }]).f?.description).toBe(
      'd',
    );
  });
});
