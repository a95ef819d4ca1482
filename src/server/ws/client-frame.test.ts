/** `parseClientFrame`: every refusal a client frame can meet before the socket acts on it. */
import { describe, expect, it } from 'vitest';
import { parseClientFrame } from './client-frame.js';

const frame = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('parseClientFrame', () => {
  it('accepts each command of the protocol', () => {
    for (const command of [
      { type: 'message', content: 'hi' },
      { type: 'form_submit', form_id: 'f', values: {} },
      { type: 'tool_confirm', call_id: 'c', approved: true },
      { type: 'regenerate' },
      { type: 'edit', message_id: 'm', content: 'new text' },
    ])
      expect(parseClientFrame(frame(command), 1024)).toEqual({ ok: true, command });
  });

  it('names every known type when the type is unknown or missing', () => {
    for (const value of [{ type: 'delete_everything' }, { content: 'no type' }, { type: 7 }]) {
      const result = parseClientFrame(frame(value), 1024);
      expect(result).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
      expect(!result.ok && result.message).toMatch(
        /expected message, form_submit, tool_confirm, elicitation_answer, regenerate or edit\.$/,
      );
    }
  });

  it('refuses a known type with bad fields, saying which field', () => {
    expect(parseClientFrame(frame({ type: 'edit', content: 'x' }), 1024)).toMatchObject({
      ok: false,
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/^Invalid edit: message_id: /),
    });
  });

  it('refuses frames too large, not JSON, or not an object', () => {
    expect(parseClientFrame(frame({ type: 'message', content: 'x'.repeat(100) }), 50)).toMatchObject({
      ok: false,
      code: 'BODY_TOO_LARGE',
    });
    expect(parseClientFrame(frame('{"type":'), 1024)).toMatchObject({ ok: false, code: 'INVALID_JSON' });
    for (const value of ['[]', 'null', '"message"'])
      expect(parseClientFrame(frame(value), 1024)).toMatchObject({ ok: false, code: 'BAD_REQUEST' });
  });
});
