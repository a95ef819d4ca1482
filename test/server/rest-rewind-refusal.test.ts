/**
 * A REST regenerate or edit that the run itself refuses at its start (its message went or was
 * summarised after the route checked it, or the session was deleted) answers with that refusal's
 * 4xx, as the same refusal before the run does; a run that fails later is still RUN_FAILED.
 * The agent is scripted: the real one refuses only when compression or a delete lands between
 * the check and the run, which no test can time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/protocol/error-codes.js';
import { startScripted, type TestServer } from './harness.js';
import { type Script, type ScriptedAgent, scriptedAgent } from './scripted-agent.js';

let server: TestServer;
let agent: ScriptedAgent;

beforeAll(async () => {
  agent = scriptedAgent();
  server = await startScripted({ agent });
});
afterAll(async () => server.close());

/** A run that ends at once with an error of `code`. */
function endsWith(code: ErrorCode): Script {
  return async function* (input) {
    yield { type: 'stream_start', trigger: input.trigger };
    yield { type: 'error', message: `the run ended with ${code}`, recoverable: false, code };
  };
}

/** A session holding one typed message, in both buffers. */
async function sessionWithMessage(): Promise<{ id: string; messageId: string }> {
  const id = await server.createSession();
  const message = {
    id: 'typed-1',
    role: 'user' as const,
    content: 'hello',
    created_at: new Date().toISOString(),
  };
  await server.services.sessions.append(id, [{ message, display: true, context: true }]);
  return { id, messageId: message.id };
}

describe('POST /sessions/{id}/regenerate and /messages/{mid}/edit', () => {
  const routes = [
    ['regenerate', (id: string, _mid: string) => ({ url: `/sessions/${id}/regenerate` })],
    [
      'edit',
      (id: string, mid: string) => ({
        url: `/sessions/${id}/messages/${mid}/edit`,
        payload: { content: 'new' },
      }),
    ],
  ] as const;

  it.each(routes)('%s: a refusal at the run start is that refusal', async (_name, request) => {
    for (const [code, status] of [
      ['MESSAGE_NOT_EDITABLE', 409],
      ['MESSAGE_NOT_FOUND', 404],
      ['SESSION_NOT_FOUND', 404],
    ] as const) {
      const { id, messageId } = await sessionWithMessage();
      agent.enqueue(endsWith(code));
      const res = await server.app.inject({ method: 'POST', ...request(id, messageId) });
      expect({ status: res.statusCode, code: res.json<{ code: string }>().code }, code).toEqual({
        status,
        code,
      });
    }
  });

  it.each(routes)('%s: a run that fails later is RUN_FAILED with its message', async (_name, request) => {
    const { id, messageId } = await sessionWithMessage();
    agent.enqueue(endsWith('LLM_UNREACHABLE'));
    const res = await server.app.inject({ method: 'POST', ...request(id, messageId) });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'RUN_FAILED', error: expect.stringMatching(/LLM_UNREACHABLE/) });
  });
});
