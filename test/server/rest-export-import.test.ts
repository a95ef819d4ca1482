/**
 * `GET /sessions/{id}/export` and `POST /sessions/import` on a real server and SQLite file: the
 * round trip, the Markdown, and what import does with missing, wrong-typed, oversized and
 * hostile files.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  SessionDetail,
  SessionExport,
  SessionImportResult,
  SessionMessage,
} from '../../src/protocol/rest.js';
import type { BufferedMessage } from '../../src/store/types.js';
import { startScripted, type TestServer } from './harness.js';
import { scriptedAgent } from './scripted-agent.js';

let server: TestServer;
let sessionId: string;
const json = { 'content-type': 'application/json' };
const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const history: SessionMessage[] = [
  {
    id: 'u1',
    role: 'user',
    content: 'Look at this picture and the report',
    created_at: '2026-03-01T10:00:00.000Z',
    images: [PIXEL],
    attachments: [{ name: 'report.pdf', path: '/somewhere/else/report.pdf' }],
  },
  {
    id: 'a1',
    role: 'assistant',
    content: 'Let me run a command.',
    created_at: '2026-03-01T10:00:05.000Z',
    thinking: 'The person wants a listing.',
    tool_calls: [{ id: 'c1', name: 'terminal', arguments: { command: 'ls ```' } }],
  },
  {
    id: 't1',
    role: 'tool',
    content: `${'x'.repeat(5000)}END`,
    created_at: '2026-03-01T10:00:06.000Z',
    tool_call_id: 'c1',
    name: 'terminal',
    success: true,
    outcome: 'ok',
    published: {
      name: 'chart.png',
      url: 'https://tracker.example/pixel.png',
      kind: 'image',
      mime_type: 'image/png',
      title: 'A chart',
    },
  },
  {
    id: 'a2',
    role: 'assistant',
    content: 'Here is the **listing**.',
    created_at: '2026-03-01T10:00:07.000Z',
    interrupted: true,
    stopped: true,
  },
  {
    id: 'e1',
    role: 'system',
    content: null,
    created_at: '2026-03-01T10:00:08.000Z',
    kind: 'error',
    error: { message: 'The model server did not answer', code: 'LLM_UNREACHABLE' },
  },
];
const summary: SessionMessage = {
  id: 's1',
  role: 'user',
  content: 'Summary of the start',
  created_at: '2026-03-01T10:00:09.000Z',
  kind: 'summary',
};

beforeAll(async () => {
  server = await startScripted({ agent: scriptedAgent(), app: { bodyLimitBytes: 2 * 1024 * 1024 } });
  sessionId = await server.createSession('server_admin');
  await server.services.sessions.update(sessionId, { title: 'Ops: disk/space "check"', pinned: true });
  const entries: BufferedMessage[] = history.map((message) => ({
    message,
    display: true,
    context: message.kind !== 'error',
  }));
  await server.services.sessions.append(sessionId, entries);
  await server.services.sessions.replaceContextPrefix(sessionId, 'a2', summary);
});
afterAll(async () => server.close());

async function exportJson(id = sessionId): Promise<SessionExport> {
  const res = await server.app.inject({ method: 'GET', url: `/sessions/${id}/export?format=json` });
  expect(res.statusCode).toBe(200);
  return res.json<SessionExport>();
}

async function importBody(
  body: unknown,
): Promise<{ status: number; json: SessionImportResult & { code?: string; error?: string } }> {
  const res = await server.app.inject({
    method: 'POST',
    url: '/sessions/import',
    headers: json,
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, json: res.json() };
}

async function detail(id: string): Promise<SessionDetail> {
  return (await server.app.inject({ method: 'GET', url: `/sessions/${id}` })).json<SessionDetail>();
}

describe('GET /sessions/{id}/export', () => {
  it('gives JSON as an attachment named after the title, with both buffers', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/sessions/${sessionId}/export?format=json` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="Ops disk-space check.json"; filename*=UTF-8''Ops%20disk-space%20check.json`,
    );
    const body = res.json<SessionExport>();
    expect(body).toMatchObject({
      navi_export: 1,
      exported_at: expect.any(String),
      session: { title: 'Ops: disk/space "check"', profile_id: 'server_admin', pinned: true },
    });
    expect(body.messages).toEqual(history);
    expect(body.context?.map((m) => m.id)).toEqual(['s1', 'a2']);
    // Without a format, JSON.
    const plain = await server.app.inject({ method: 'GET', url: `/sessions/${sessionId}/export` });
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('gives readable Markdown: title, who and when, tool calls folded, long output cut, images named', async () => {
    const res = await server.app.inject({
      method: 'GET',
      url: `/sessions/${sessionId}/export?format=markdown`,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="Ops disk-space check\.md"/);
    const md = res.body;
    expect(md.startsWith('# Ops: disk/space "check"\n')).toBe(true);
    expect(md).toContain('*Profile Server Administrator · started ');
    expect(md).toContain('### You · 2026-03-01 10:00 UTC\n\nLook at this picture and the report');
    expect(md).toContain('*An image was attached.*');
    expect(md).toContain('*Attached files: report.pdf*');
    expect(md).toContain('<details><summary>Reasoning</summary>');
    // The arguments hold three backticks, so the fence is four long.
    expect(md).toContain(
      '<details><summary>Tool call: terminal</summary>\n\n````json\n{\n  "command": "ls ```"\n}\n````',
    );
    expect(md).toContain('<details><summary>Result of terminal (ok)</summary>');
    expect(md).toContain('(1003 more characters in the JSON export)');
    expect(md).not.toContain('END');
    expect(md).toContain('Here is the **listing**.\n\n*(stopped before it finished)*');
    expect(md).toContain('### Failed turn · 2026-03-01 10:00 UTC\n\n> The model server did not answer');
    expect(md).not.toContain('Summary of the start');
  });

  it('names the file safely whatever the title holds', async () => {
    const id = await server.createSession();
    for (const [title, name] of [
      ['../../etc/passwd', 'etc-passwd.md'],
      ['Café in Zürich', 'Café in Zürich.md'],
      ['\u202e<script>', 'script.md'],
      ['...', 'navi-conversation.md'],
    ] as const) {
      await server.services.sessions.update(id, { title });
      const res = await server.app.inject({ method: 'GET', url: `/sessions/${id}/export?format=markdown` });
      const disposition = String(res.headers['content-disposition']);
      expect(decodeURIComponent(disposition.split("UTF-8''")[1] ?? ''), title).toBe(name);
      expect(disposition).not.toMatch(/[\r\n]/);
    }
    const untitled = await server.createSession();
    const res = await server.app.inject({
      method: 'GET',
      url: `/sessions/${untitled}/export?format=markdown`,
    });
    expect(res.headers['content-disposition']).toContain('filename="navi-conversation.md"');
    expect(res.body.startsWith('# Untitled conversation\n')).toBe(true);
  });

  it('refuses an unknown format and an unknown or malformed session', async () => {
    const pdf = await server.app.inject({ method: 'GET', url: `/sessions/${sessionId}/export?format=pdf` });
    expect(pdf.statusCode).toBe(400);
    expect(pdf.json()).toMatchObject({
      code: 'BAD_REQUEST',
      error: expect.stringContaining('format must be json or markdown'),
    });
    const twice = await server.app.inject({
      method: 'GET',
      url: `/sessions/${sessionId}/export?format=json&format=json`,
    });
    expect(twice.statusCode).toBe(400);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '..%2F..']) {
      const res = await server.app.inject({ method: 'GET', url: `/sessions/${id}/export` });
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toMatchObject({ code: 'SESSION_NOT_FOUND' });
    }
  });
});

describe('POST /sessions/import', () => {
  it('makes a new session with the same messages and context from a JSON export', async () => {
    const exported = await exportJson();
    const { status, json: answer } = await importBody(exported);
    expect(status).toBe(201);
    expect(answer.session_id).not.toBe(sessionId);
    expect(answer.profile_id).toBe('server_admin');
    const original = await detail(sessionId);
    const copy = await detail(answer.session_id);
    expect(copy).toMatchObject({ title: original.title, pinned: true, created_at: original.created_at });
    expect(copy.last_active > original.last_active).toBe(true);
    // Same messages; file references now point at the new session, where the files are not.
    const dir = join(server.dir, 'session_files', answer.session_id);
    expect(copy.messages.map((m) => m.id)).toEqual(original.messages.map((m) => m.id));
    expect(copy.messages[0]?.attachments).toEqual([{ name: 'report.pdf', path: join(dir, 'report.pdf') }]);
    expect(copy.messages[2]?.published?.url).toBe(`/sessions/${answer.session_id}/files/chart.png`);
    const strip = (m: SessionMessage) => ({ ...m, attachments: undefined, published: undefined });
    expect(copy.messages.map(strip)).toEqual(original.messages.map(strip));
    const context = await server.app.inject({ method: 'GET', url: `/sessions/${answer.session_id}/context` });
    expect(context.json<{ messages: SessionMessage[] }>().messages).toEqual(exported.context);
    expect(answer.warnings).toEqual([
      'An export holds no files, so report.pdf, chart.png are named in the conversation but not there; upload them again if Navi should read them.',
    ]);
    // The import is searchable like any session.
    const found = await server.app.inject({ method: 'GET', url: '/search?q=listing' });
    expect(
      found
        .json<{ results: { session_id: string }[] }>()
        .results.map((r) => r.session_id)
        .sort(),
    ).toEqual([sessionId, answer.session_id].sort());
  });

  it('rebuilds the context from the messages when the export has none (failed-turn notices left out)', async () => {
    const exported = await exportJson();
    delete exported.context;
    const { status, json: answer } = await importBody(exported);
    expect(status).toBe(201);
    const context = await server.app.inject({ method: 'GET', url: `/sessions/${answer.session_id}/context` });
    expect(context.json<{ messages: SessionMessage[] }>().messages.map((m) => m.id)).toEqual([
      'u1',
      'a1',
      't1',
      'a2',
    ]);
  });

  it('falls back to the default profile for one that does not exist here, and says so', async () => {
    const exported = await exportJson();
    exported.session.profile_id = 'gone_profile';
    const { status, json: answer } = await importBody(exported);
    expect(status).toBe(201);
    expect(answer.profile_id).toBe('secretary');
    expect(answer.warnings[0]).toBe(
      'The profile "gone_profile" does not exist here, so the conversation uses "secretary" instead.',
    );
    expect((await detail(answer.session_id)).profile_id).toBe('secretary');
  });

  it('keeps only the name of an attached file whose name is a path', async () => {
    const minimal = {
      navi_export: 1,
      session: { title: 'Paths', profile_id: 'secretary', created_at: '2026-01-01T00:00:00Z' },
      messages: [
        {
          id: 'm',
          role: 'user',
          content: 'read it',
          created_at: '2026-01-01T00:00:00Z',
          attachments: [{ name: '../../../etc/shadow', path: '/etc/shadow' }],
        },
      ],
    };
    const { status, json: answer } = await importBody(minimal);
    expect(status).toBe(201);
    const [message] = (await detail(answer.session_id)).messages;
    expect(message?.attachments).toEqual([
      { name: 'shadow', path: join(server.dir, 'session_files', answer.session_id, 'shadow') },
    ]);
    expect(answer.warnings).toEqual([
      expect.stringContaining('so shadow is named in the conversation but not there'),
    ]);
  });

  it('stores every time in the ISO form Navi writes, whatever form the file gives', async () => {
    const { status, json: answer } = await importBody({
      navi_export: 1,
      session: { title: 'Times', profile_id: 'secretary', created_at: '2026-01-01T12:00:00+02:00' },
      messages: [{ id: 'm', role: 'user', content: 'hi', created_at: 'Fri, 02 Jan 2026 10:00:00 GMT' }],
    });
    expect(status).toBe(201);
    expect(answer.created_at).toBe('2026-01-01T10:00:00.000Z');
    expect((await detail(answer.session_id)).messages[0]?.created_at).toBe('2026-01-02T10:00:00.000Z');
  });

  it('drops fields it does not know', async () => {
    const exported = await exportJson();
    const body = {
      ...exported,
      extra: 1,
      messages: exported.messages.map((m) => ({ ...m, sneaky: '<script>' })),
    };
    const { status, json: answer } = await importBody(body);
    expect(status).toBe(201);
    expect((await detail(answer.session_id)).messages.some((m) => 'sneaky' in m)).toBe(false);
  });

  async function refused(body: unknown, says: string): Promise<void> {
    const before = (await server.app.inject({ method: 'GET', url: '/sessions' })).json<unknown[]>().length;
    const { status, json: answer } = await importBody(body);
    expect(status, says).toBe(400);
    expect(answer.code, says).toBe('INVALID_IMPORT');
    expect(answer.error, says).toContain('The file is not a Navi session export');
    expect(answer.error, says).toContain(says);
    const after = (await server.app.inject({ method: 'GET', url: '/sessions' })).json<unknown[]>().length;
    expect(after, says).toBe(before);
  }

  const base = () => ({
    navi_export: 1,
    session: { title: 'T', profile_id: 'secretary', created_at: '2026-01-01T00:00:00Z', pinned: false },
    messages: [{ id: 'm1', role: 'user', content: 'hi', created_at: '2026-01-01T00:00:00Z' }],
  });
  const withMessage = (extra: Record<string, unknown>) => ({
    ...base(),
    messages: [{ ...base().messages[0], ...extra }],
  });

  it('refuses what is not an export, naming what is wrong', async () => {
    await refused([], 'send the JSON object');
    await refused('# A markdown export', 'send the JSON object');
    await refused(null, 'send the JSON object');
    await refused({ messages: [] }, 'it has no navi_export field');
    await refused({ ...base(), navi_export: 2 }, 'its navi_export is 2, and this Navi reads version 1');
    await refused({ ...base(), navi_export: '1' }, 'its navi_export is "1"');
    await refused({ ...base(), messages: 'hello' }, 'messages:');
    await refused({ ...base(), messages: { 0: {} } }, 'messages:');
    await refused({ ...base(), session: undefined }, 'session:');
    await refused({ ...base(), session: { ...base().session, title: 'x'.repeat(201) } }, 'session.title:');
    await refused(
      { ...base(), session: { ...base().session, created_at: 'yesterday' } },
      'session.created_at: must be a date',
    );
  });

  it('refuses messages with a role outside the four, bad fields, duplicates or huge strings', async () => {
    await refused(withMessage({ role: 'admin' }), 'messages.0.role:');
    await refused(withMessage({ role: 'developer' }), 'messages.0.role:');
    await refused(withMessage({ id: '' }), 'messages.0.id:');
    await refused(withMessage({ id: 42 }), 'messages.0.id:');
    await refused(withMessage({ content: 7 }), 'messages.0.content:');
    await refused(withMessage({ content: 'x'.repeat(1_000_001) }), 'messages.0.content:');
    await refused(withMessage({ created_at: 'soon' }), 'messages.0.created_at: must be a date');
    await refused(
      withMessage({ images: ['data:image/png;base64,AAAA'] }),
      'messages.0.images.0: must be base64',
    );
    await refused(withMessage({ images: ['../../etc/passwd'] }), 'messages.0.images.0: must be base64');
    await refused(
      withMessage({ tool_calls: [{ id: 'c', name: 'x', arguments: 'rm -rf /' }] }),
      'messages.0.tool_calls.0.arguments:',
    );
    await refused(
      withMessage({ error: { message: 'x', code: 'NOT_A_CODE' } }),
      'messages.0.error.code: is not a Navi error code',
    );
    await refused(withMessage({ interrupted: false }), 'messages.0.interrupted:');
    await refused(
      withMessage({ published: { name: 'a', url: 'b', kind: 'exe', mime_type: 'x', title: '' } }),
      'messages.0.published.kind:',
    );
    const twice = { ...base(), messages: [base().messages[0], base().messages[0]] };
    await refused(twice, 'messages.1.id: "m1" is the id of an earlier message of messages');
    await refused({ ...base(), context: [{ ...base().messages[0], role: 'root' }] }, 'context.0.role:');
  });

  it('refuses a body over the limit (413) and one that is not JSON (415)', async () => {
    const huge = { ...base(), messages: [{ ...base().messages[0], content: 'x'.repeat(3 * 1024 * 1024) }] };
    const { status, json: answer } = await importBody(huge);
    expect(status).toBe(413);
    expect(answer.code).toBe('BODY_TOO_LARGE');
    const text = await server.app.inject({
      method: 'POST',
      url: '/sessions/import',
      headers: { 'content-type': 'text/markdown' },
      payload: '# hello',
    });
    expect(text.statusCode).toBe(415);
    const broken = await server.app.inject({
      method: 'POST',
      url: '/sessions/import',
      headers: json,
      payload: '{"navi_export": 1,',
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({ code: 'INVALID_JSON' });
  });
});
