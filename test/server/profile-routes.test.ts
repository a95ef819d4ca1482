/**
 * `GET`/`PUT /agents/profiles/{id}` on a real Navi with a profiles folder of its own: a profile
 * read as its file holds it; an edit saved to that file only with consent, loaded at once so the
 * next run uses it; and every bad request (hostile ids, broken JSON, wrong types, a changed id,
 * oversized bodies, a link out of the folder) refused with what was wrong and nothing written.
 */
import { lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProfileDocument, ProfileSummary } from '../../src/protocol/rest.js';
import type { FakeLlm } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, expectRefusal, postMessage, systemText } from '../support/rest.js';

const dir = profilesDir([plainProfile, { ...plainProfile, id: 'other', name: 'Other' }]);
// A profile file that is a link to a file outside the folder: saving must replace the link,
// never write through it.
const outside = join(dirname(dir), 'outside.json');
writeFileSync(outside, JSON.stringify({ ...plainProfile, id: 'linked', name: 'Linked' }));
symlinkSync(outside, join(dir, 'linked.json'));

let fake: FakeLlm;
let navi: NaviHandle;
let consent = '';
let close: () => Promise<void> = async () => {};

beforeAll(async () => {
  ({ fake, navi, close } = await startNaviWithLlm({
    llm: { defaultReply: { text: 'OK.' } },
    settings: { PROFILES_DIR: dir, DEFAULT_PROFILE: 'plain' },
  }));
  consent = await navi.pair();
});
afterEach(() => {
  fake.requests.length = 0;
});
afterAll(() => close());

function get(id: string): Promise<Response> {
  return fetch(`${navi.url}/agents/profiles/${id}`);
}

function put(id: string, body: unknown, withConsent = true): Promise<Response> {
  return fetch(`${navi.url}/agents/profiles/${id}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...(withConsent ? { cookie: consent } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Every entry of the profiles folder and of its parent, with contents: what a refusal must leave. */
function snapshot(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const folder of [dir, dirname(dir)])
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      out[path] = lstatSync(path).isDirectory() ? '(folder)' : readFileSync(path, 'utf8');
    }
  return out;
}

/**
 * A hostile id is refused as naming no profile: by the handler (PROFILE_NOT_FOUND), or before
 * it by the router when the client or the router folds it into another path (NOT_FOUND).
 */
async function notFound(res: Response): Promise<void> {
  const body = (await res.json()) as { error: string; code: string };
  expect(res.status).toBe(404);
  expect(['PROFILE_NOT_FOUND', 'NOT_FOUND']).toContain(body.code);
}

describe('GET /agents/profiles/{id}', () => {
  it("answers the profile as its file holds it, with the file's name", async () => {
    const res = await get('plain');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as ProfileDocument;
    expect(doc).toEqual({ id: 'plain', file: 'plain.json', profile: plainProfile });
    const shipped = (await (await get('secretary')).json()) as ProfileDocument;
    expect(shipped.file).toBe('secretary.json');
    expect(shipped.profile).toEqual(JSON.parse(readFileSync(join(dir, 'secretary.json'), 'utf8')));
  });

  it('answers 404 PROFILE_NOT_FOUND for an unknown id, naming the ones there are', async () => {
    await expectRefusal(await get('nobody'), 404, 'PROFILE_NOT_FOUND', /"nobody".*plain.*secretary/);
  });

  it('refuses ids that are paths or hold anything but letters, digits, _ and -', async () => {
    for (const id of [
      '..%2Fx',
      '..%2F..%2Fetc%2Fpasswd',
      'plain.json',
      'a%20b',
      'pl%C3%A4in',
      '%2Fetc%2Fpasswd',
    ]) {
      await expectRefusal(await get(id), 404, 'PROFILE_NOT_FOUND', /letters, digits, _ and -/);
    }
    for (const id of ['%2E%2E', '..', 'pl%00ain', '%2E%2E%2F%2E%2E']) await notFound(await get(id));
    // Longer than any id can be: no profile has it.
    expect((await get('x'.repeat(101))).status).toBe(404);
  });
});

describe('PUT /agents/profiles/{id}', () => {
  it('saves the profile to its file and the next run uses it, without a restart', async () => {
    const edited = {
      ...plainProfile,
      description: 'Edited in a test.',
      system_prompt: 'PROMPT-AFTER-EDIT',
      temperature: 0.1,
    };
    const res = await put('plain', { profile: edited });
    expect(res.status).toBe(200);
    expect((await res.json()) as ProfileDocument).toEqual({
      id: 'plain',
      file: 'plain.json',
      profile: edited,
    });
    expect(readFileSync(join(dir, 'plain.json'), 'utf8')).toBe(`${JSON.stringify(edited, null, 2)}\n`);
    // No temporary file is left beside it.
    expect(readdirSync(dir).filter((f) => !f.endsWith('.json'))).toEqual([]);

    const listed = (await (await fetch(`${navi.url}/agents/profiles`)).json()) as ProfileSummary[];
    expect(listed.find((p) => p.id === 'plain')).toMatchObject({
      description: 'Edited in a test.',
      temperature: 0.1,
    });
    expect(((await (await get('plain')).json()) as ProfileDocument).profile).toEqual(edited);

    const session = await navi.createSession('plain');
    expect((await postMessage(navi, session, 'hello')).status).toBe(200);
    expect(systemText(chatRequests(fake)[0])).toContain('PROMPT-AFTER-EDIT');
  });

  it('needs consent (403 CONSENT_REQUIRED) and writes nothing without it', async () => {
    const before = snapshot();
    await expectRefusal(
      await put('plain', { profile: { ...plainProfile, system_prompt: 'NOT SAVED' } }, false),
      403,
      'CONSENT_REQUIRED',
      /navi pair/,
    );
    expect(snapshot()).toEqual(before);
  });

  it('refuses broken JSON and bodies of the wrong shape', async () => {
    const before = snapshot();
    await expectRefusal(await put('plain', '{"profile": {"id": "plain",'), 400, 'INVALID_JSON');
    await expectRefusal(await put('plain', '[]'), 400, 'BAD_REQUEST');
    await expectRefusal(await put('plain', {}), 400, 'BAD_REQUEST', /profile/);
    await expectRefusal(await put('plain', { profile: plainProfile, extra: 1 }), 400, 'BAD_REQUEST', /extra/);
    expect(snapshot()).toEqual(before);
  });

  it('refuses a profile the schema does not take, saying in plain words what is wrong', async () => {
    const before = snapshot();
    const cases: [unknown, RegExp][] = [
      ['plain', /the profile must be an object/],
      [[plainProfile], /the profile must be an object \(\{…\}\), not a list/],
      [null, /the profile must be an object/],
      [{ ...plainProfile, temperature: 'hot' }, /temperature: must be a number, not text/],
      [{ ...plainProfile, temperature: 7 }, /temperature: must be at most 2/],
      [{ ...plainProfile, max_iterations: 2.5 }, /max_iterations: must be a whole number, not 2\.5/],
      [{ ...plainProfile, enabled_tools: 'terminal' }, /enabled_tools: must be a list/],
      [{ ...plainProfile, enabled_tools: ['todo', 4] }, /enabled_tools\[1\]: must be text/],
      [
        { ...plainProfile, autonomy: 'reckless' },
        /autonomy: must be one of "strict", "standard", "autonomous"/,
      ],
      [{ ...plainProfile, name: '' }, /name: must not be empty/],
      [{ ...plainProfile, description: 'd'.repeat(501) }, /description: must be at most 500 characters/],
      [{ id: 'plain' }, /name: is missing/],
      [{ ...plainProfile, planing_enabled: true }, /unknown field "planing_enabled"/],
      [{ ...plainProfile, backends: { gpt: {} } }, /backends\.gpt: unknown backend "gpt"/],
      [{ ...plainProfile, constructor: 'x' }, /unknown field "constructor"/],
    ];
    for (const [profile, message] of cases) {
      await expectRefusal(await put('plain', { profile }), 400, 'INVALID_PROFILE', message);
    }
    // A JSON body that would set an object's prototype is refused before anything reads it.
    const poisoned = `{"profile": ${JSON.stringify(plainProfile).slice(0, -1)}, "__proto__": {"x": 1}}}`;
    await expectRefusal(await put('plain', poisoned), 400, 'INVALID_JSON');
    expect(snapshot()).toEqual(before);
  });

  it('refuses a body whose id is not the one in the path, and an id that names no profile', async () => {
    const before = snapshot();
    await expectRefusal(
      await put('plain', { profile: { ...plainProfile, id: 'other' } }),
      400,
      'INVALID_PROFILE',
      /id: must stay "plain"/,
    );
    await expectRefusal(
      await put('plain', { profile: { ...plainProfile, id: '../other' } }),
      400,
      'INVALID_PROFILE',
      /id: must be 1 to 64 letters/,
    );
    // Saving edits a profile that exists; it does not make new files.
    await expectRefusal(
      await put('newcomer', { profile: { ...plainProfile, id: 'newcomer' } }),
      404,
      'PROFILE_NOT_FOUND',
    );
    expect(snapshot()).toEqual(before);
    expect(
      (await fetch(`${navi.url}/agents/profiles`).then((r) => r.json())) as ProfileSummary[],
    ).toHaveLength(6);
  });

  it('never writes outside the profiles folder, whatever the id', async () => {
    const before = snapshot();
    for (const id of ['..%2Fx', '..%2F..%2Ftmp%2Fx', '%2Ftmp%2Fx', 'x.json', '..', '%2E%2E', 'pl%00ain']) {
      await notFound(await put(id, { profile: { ...plainProfile, id: decodeURIComponent(id) } }));
    }
    expect(snapshot()).toEqual(before);
  });

  it('replaces a profile file that links out of the folder, leaving the file it pointed to alone', async () => {
    const outsideBefore = readFileSync(outside, 'utf8');
    const res = await put('linked', { profile: { ...plainProfile, id: 'linked', name: 'Linked, edited' } });
    expect(res.status).toBe(200);
    expect(readFileSync(outside, 'utf8')).toBe(outsideBefore);
    expect(lstatSync(join(dir, 'linked.json')).isSymbolicLink()).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'linked.json'), 'utf8')).name).toBe('Linked, edited');
  });

  it('refuses a body larger than the limit (413), without consent first (403)', async () => {
    const before = snapshot();
    const huge = { profile: { ...plainProfile, system_prompt: 'x'.repeat(300 * 1024) } };
    await expectRefusal(await put('plain', huge, false), 403, 'CONSENT_REQUIRED');
    await expectRefusal(await put('plain', huge), 413, 'BODY_TOO_LARGE');
    expect(snapshot()).toEqual(before);
  });
});
