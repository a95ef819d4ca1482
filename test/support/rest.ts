/**
 * The REST calls and request filters integration tests repeat: posting a message, reading a
 * session back typed as the protocol says, checking a refusal, and picking the chat calls out of
 * a fake LLM's log.
 */

import { expect } from 'vitest';
import type { RecallList, RecallSummary, SessionDetail } from '../../src/protocol/rest.js';
import type { FakeLlm, RecordedRequest } from '../fake-llm/index.js';
import type { NaviHandle } from './navi.js';

/** The body of `POST /sessions/{id}/messages`; a string is sent as `{content}`. */
export type MessageBody = string | { content: string; [field: string]: unknown };

/**
 * `POST /sessions/{id}/messages` on a running Navi; resolves to the response, whatever its
 * status (read it with `.status` and `.json()`). `headers` are added, e.g. a consent cookie.
 */
export function postMessage(
  navi: Pick<NaviHandle, 'url'>,
  sessionId: string,
  body: MessageBody = 'hello',
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${navi.url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(typeof body === 'string' ? { content: body } : body),
  });
}

/** `GET /sessions/{id}`, which must answer 200; throws with the status and body otherwise. */
export async function getSession(navi: Pick<NaviHandle, 'url'>, sessionId: string): Promise<SessionDetail> {
  const res = await fetch(`${navi.url}/sessions/${sessionId}`);
  if (res.status !== 200)
    throw new Error(`GET /sessions/${sessionId} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as SessionDetail;
}

/** The chat completions the fake LLM received, in order (embeddings and model lists left out). */
export function chatRequests(fake: FakeLlm): RecordedRequest[] {
  return fake.requests.filter((r) => r.kind === 'chat');
}

/** `GET /sessions/{id}/recalls`, which must answer 200; throws with the status and body otherwise. */
export async function getRecalls(navi: Pick<NaviHandle, 'url'>, sessionId: string): Promise<RecallSummary[]> {
  const res = await fetch(`${navi.url}/sessions/${sessionId}/recalls`);
  if (res.status !== 200)
    throw new Error(`GET /sessions/${sessionId}/recalls answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as RecallList).recalls;
}

/** The text of the last user message an LLM request carried (parts as JSON), '' when none. */
export function lastUserText(request: RecordedRequest | undefined): string {
  const users = (request?.body.messages ?? []).filter((m) => m.role === 'user');
  const content = users.at(-1)?.content;
  if (content === undefined) return '';
  return typeof content === 'string' ? content : JSON.stringify(content);
}

/** The system prompt an LLM request carried (its first message when that is `system`), '' when none. */
export function systemText(request: RecordedRequest | undefined): string {
  const first = request?.body.messages?.[0];
  return first?.role === 'system' ? String(first.content) : '';
}

/**
 * Checks that `res` is the refusal `{status, code}` of the error table, and, given `message`, that
 * its `error` text says it.
 */
export async function expectRefusal(
  res: Response,
  status: number,
  code: string,
  message?: RegExp,
): Promise<void> {
  const body = (await res.json()) as { error: string; code: string };
  expect({ status: res.status, code: body.code }).toEqual({ status, code });
  if (message) expect(body.error).toMatch(message);
}
