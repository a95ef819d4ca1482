/**
 * A database written by the first build (test/fixtures/first-build: made by running that
 * build's server against the fake LLM, see its README) opens after migration 004 and shows the
 * same history: `GET /sessions/{id}` answers the same messages with the old `metadata` keys now
 * typed fields and no text markers left in `content`, and the model reads exactly what the
 * first build sent it.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toChatMessages } from '../../src/agent/context-view.js';
import type { SessionDetail, SessionMessage } from '../../src/protocol/rest.js';
import { type NaviHandle, repoRoot, startNavi, tempDir } from '../support/navi.js';

const FIXTURE = join(repoRoot, 'test/fixtures/first-build');

/** A message as the first build answered it: meaning in `metadata`, markers in `content`. */
type OldMessage = Omit<SessionMessage, 'kind'> & { metadata?: Record<string, unknown>; is_summary?: boolean };

interface Recorded {
  detail: Omit<SessionDetail, 'messages'> & { messages: OldMessage[] };
  context: OldMessage[];
  llm: unknown;
}

const recorded = JSON.parse(readFileSync(join(FIXTURE, 'first-build.json'), 'utf8')) as Record<
  string,
  Recorded
>;

/**
 * The first build's view of a message, rebuilt from the typed fields: how each old key maps
 * to a field. The first build wrote `metadata: {}` on finished answers, which meant nothing.
 */
function asFirstBuild(m: SessionMessage): OldMessage {
  const {
    kind,
    attachments,
    trigger,
    form_submit,
    interrupted,
    stopped,
    success,
    ui_component,
    published,
    tool_metadata,
    ...common
  } = m;
  const metadata: Record<string, unknown> = {};
  if (kind === 'plan') metadata.plan = true;
  if (kind === 'injected_image') metadata.injected_image = true;
  if (kind === 'iteration_limit') metadata.max_iterations_reached = true;
  if (form_submit) metadata.form_submit = form_submit;
  if (attachments) metadata.files = attachments;
  if (trigger) metadata.trigger = trigger;
  if (interrupted) metadata.interrupted = true;
  if (stopped) metadata.stopped = true;
  if (success !== undefined) metadata.success = success;
  if (ui_component) metadata.ui_component = ui_component;
  if (published) metadata.published = published;
  Object.assign(metadata, tool_metadata);
  const old: OldMessage = { ...common };
  if (attachments) {
    old.content = `${m.content}\n\n[Attached files]\n${attachments.map((f) => `- ${f.name}: ${f.path}`).join('\n')}`;
  }
  if (kind === 'summary') {
    old.content = `[Summary of earlier conversation]\n${m.content}`;
    old.is_summary = true;
  }
  if (Object.keys(metadata).length > 0) old.metadata = metadata;
  return old;
}

function withoutEmptyMetadata(m: OldMessage): OldMessage {
  if (m.metadata && Object.keys(m.metadata).length === 0) {
    const { metadata: _empty, ...rest } = m;
    return rest;
  }
  return m;
}

/** Every field name a message of the current build may carry. */
const TYPED_FIELDS = new Set<string>([
  'id',
  'role',
  'content',
  'created_at',
  'kind',
  'images',
  'attachments',
  'trigger',
  'form_submit',
  'tool_calls',
  'tool_call_id',
  'name',
  'thinking',
  'interrupted',
  'stopped',
  'success',
  'ui_component',
  'published',
  'tool_metadata',
] satisfies (keyof SessionMessage)[]);

describe('a database of the first build', () => {
  let navi: NaviHandle;
  beforeAll(async () => {
    const dir = tempDir('navi-first-build-');
    copyFileSync(join(FIXTURE, 'navi.db'), join(dir, 'navi.db'));
    // The first build's server ran with a 1000-token window, which GET reports.
    navi = await startNavi({ dir, settings: { OLLAMA_NUM_CTX: '1000' } });
  });
  afterAll(async () => {
    await navi?.close();
  });

  async function get<T>(path: string): Promise<T> {
    const res = await fetch(`${navi.url}${path}`);
    expect(res.status, path).toBe(200);
    return (await res.json()) as T;
  }

  it('holds every kind of message the first build wrote', () => {
    const all = JSON.stringify(recorded);
    for (const key of [
      'files',
      'plan',
      'form_submit',
      'injected_image',
      'is_summary',
      'published',
      'stopped',
    ])
      expect(all, key).toContain(`"${key}"`);
  });

  it.each(Object.keys(recorded))('session %s shows the same history', async (name) => {
    const old = recorded[name]!;
    const detail = await get<SessionDetail>(`/sessions/${old.detail.id}`);
    // next_before came with paged history; every recorded session fits in the first page.
    const { messages, next_before, ...summary } = detail;
    const { messages: oldMessages, ...oldSummary } = old.detail;
    expect(next_before).toBeNull();
    expect(summary).toEqual(oldSummary);
    for (const m of messages) {
      expect(m).not.toHaveProperty('metadata');
      for (const key of Object.keys(m)) expect(TYPED_FIELDS.has(key), key).toBe(true);
      expect(m.content ?? '').not.toContain('[Attached files]');
    }
    expect(messages.map(asFirstBuild)).toEqual(oldMessages.map(withoutEmptyMetadata));
  });

  it.each(Object.keys(recorded))('session %s gives the model exactly what it had', async (name) => {
    const old = recorded[name]!;
    const { messages } = await get<{ messages: SessionMessage[] }>(`/sessions/${old.detail.id}/context`);
    expect(messages.map(asFirstBuild)).toEqual(old.context.map(withoutEmptyMetadata));
    expect(toChatMessages(messages)).toEqual(old.llm);
  });
});
