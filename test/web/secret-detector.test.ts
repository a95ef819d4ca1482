/**
 * The composer's secret detector (web/src/lib/secret-detector.ts): what it must offer to store in
 * the vault, and the ordinary text it must leave alone. Token-shaped strings are built at run
 * time so that no secret scanner mistakes this file for a leak.
 */
import { describe, expect, it } from 'vitest';
import { detectSecret, looksRandom, replaceSecret } from '../../web/src/lib/secret-detector.js';

/** A deterministic base62 string (a small LCG), so the random-token checks are reproducible. */
function randomToken(length: number, seed: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let state = seed;
  let out = '';
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    out += alphabet[Math.floor((state / 2147483648) * alphabet.length)];
  }
  return out;
}

const body36 = 'Xq7Lm2Pz9Rt4Vb8Nc1Kd6Hf3Jg5Sw0Ye7Ua2';
const privateKey = [
  '-----BEGIN OPENSSH PRIVATE KEY-----',
  'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
  'QyNTUxOQAAACDx3mXq7Lm2Pz9Rt4Vb8Nc1Kd6Hf3Jg5Sw0Ye7Ua2AAAAJg=',
  '-----END OPENSSH PRIVATE KEY-----',
].join('\n');

describe('detectSecret finds', () => {
  it('a private key block, whole, inside other text', () => {
    const text = `here is my key:\n${privateKey}\nplease use it`;
    const found = detectSecret(text);
    expect(found).toMatchObject({ kind: 'private_key', value: privateKey, suggestion: { type: 'ssh_key' } });
    expect(text.slice(found?.start, found?.end)).toBe(privateKey);
  });

  it('RSA, EC, PKCS#8 and PGP key blocks, and a block pasted without its end line', () => {
    for (const kind of ['RSA ', 'EC ', '', 'ENCRYPTED ']) {
      const block = `-----BEGIN ${kind}PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END ${kind}PRIVATE KEY-----`;
      expect(detectSecret(block)?.value).toBe(block);
    }
    const pgp = '-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----';
    expect(detectSecret(pgp)?.value).toBe(pgp);
    const cut = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1';
    expect(detectSecret(`key: ${cut}`)).toMatchObject({ kind: 'private_key', value: cut });
  });

  it.each([
    ['OpenAI', `sk-proj-${body36}`],
    ['OpenAI (old)', `sk-${body36}`],
    ['Anthropic', `sk-ant-api03-${body36}`],
    ['GitHub classic', `ghp_${body36}`],
    ['GitHub fine-grained', `github_pat_11ABCDEFG0_${body36}`],
    ['Slack', `xoxb-1234567890-0987654321-${body36.slice(0, 24)}`],
    ['AWS', `AKIA${'IOSFODNN7EXAMPLE'}`],
    ['GitLab', `glpat-${body36.slice(0, 20)}`],
    ['Stripe', `sk_live_${body36.slice(0, 24)}`],
  ])('a %s token, alone and inside a sentence', (_label, token) => {
    expect(detectSecret(token)).toMatchObject({ kind: 'token', value: token, start: 0 });
    const text = `use ${token}, thanks`;
    const found = detectSecret(text);
    expect(found?.value).toBe(token);
    expect(text.slice(found?.start, found?.end)).toBe(token);
  });

  it('a JWT', () => {
    const jwt = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${body36}`;
    expect(detectSecret(`Authorization: Bearer ${jwt}`)).toMatchObject({ kind: 'jwt', value: jwt });
  });

  it.each([
    ['password: hunter22', 'hunter22'],
    ['the wifi password: "correct horse"', 'correct horse'],
    ["password 'hunter22'", 'hunter22'],
    ['password="s3cr3t!"', 's3cr3t!'],
    ['PASSWORD=Tr0ub4dor&3', 'Tr0ub4dor&3'],
    ['db pwd=Xk29!pq', 'Xk29!pq'],
    ['пароль: qwerty123', 'qwerty123'],
    ['Пароль от почты — Zx81-kp', 'Zx81-kp'],
    ['my password is hunter2.', 'hunter2'],
    ['Passwort: geheim99', 'geheim99'],
  ])('a password after a keyword: %s', (text, value) => {
    const found = detectSecret(text);
    expect(found).toMatchObject({
      kind: 'password',
      value,
      suggestion: { type: 'password', field: 'password' },
    });
    expect(text.slice(found?.start, found?.end)).toBe(value);
  });

  it('a long random token with no known prefix, also as KEY=value', () => {
    const token = randomToken(40, 7);
    expect(detectSecret(`the key is ${token}`)).toMatchObject({ kind: 'high_entropy', value: token });
    expect(detectSecret(`API_KEY=${token}`)?.value).toBe(token);
    expect(detectSecret(`"${token}"`)?.value).toBe(token);
    // Base64 padding is part of the token, not an assignment.
    const padded = `${randomToken(30, 11)}==`;
    expect(detectSecret(`basic ${padded}`)?.value).toBe(padded);
  });

  it('nearly every random base62 token of 24 to 64 characters', () => {
    let found = 0;
    let total = 0;
    for (const length of [24, 32, 40, 64]) {
      for (let seed = 1; seed <= 100; seed++) {
        total += 1;
        if (looksRandom(randomToken(length, seed * 7919 + length))) found += 1;
      }
    }
    // A random token may lack a digit or an upper-case letter; the rule accepts that miss.
    expect(found / total).toBeGreaterThan(0.85);
  });

  it('the earliest of several tokens', () => {
    const first = `ghp_${body36}`;
    const second = `sk-${body36}`;
    expect(detectSecret(`${first} and ${second}`)?.value).toBe(first);
    expect(detectSecret(`${second} and ${first}`)?.value).toBe(second);
  });
});

describe('detectSecret leaves alone', () => {
  it.each([
    ['an ordinary sentence', 'Could you summarise the meeting notes from Tuesday and email them to Anna?'],
    ['a Russian sentence', 'Напомни мне завтра позвонить маме и купить хлеба.'],
    ['an empty message', ''],
    [
      'a URL with a long path',
      'see https://github.com/vuejs/core/blob/main/packages/runtime-core/src/apiWatch.ts#L120',
    ],
    [
      'a URL with a token-like query',
      'open https://example.com/watch?v=dQw4w9WgXcQ&list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG',
    ],
    ['a UUID', 'session 3f2b8c1e-9a4d-4e6f-b2a1-7c8d9e0f1a2b failed'],
    ['an upper-case UUID', 'id 3F2B8C1E-9A4D-4E6F-B2A1-7C8D9E0F1A2B'],
    ['a git log line', 'commit 6b55f4af515394917f378dad78f439d05e44c916 (HEAD -> main)'],
    ['a SHA-256 digest', 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['a file path', 'edit /home/anna/Projects2024/navi/src/server/routes/vaultRoutes.ts please'],
    ['a camelCase identifier', 'rename getUserProfileSettingsForAccount2 to something shorter'],
    ['a long class name', 'class VeryLongClassNameWithManyWords2And3 extends Base'],
    ['an identifier with digits', 'K8sClusterNodePoolUS2East1Zone and i18nLocalizationKeyForV2Upgrade'],
    ['a constant name', 'MAX_CLIENT_FRAME_BYTES_LIMIT_2024 is too small'],
    ['an e-mail address', 'write to Anna.Petrova1985@mail.example.org'],
    ['speech about passwords', 'the password is too short, and my password was rejected'],
    ['a masked value', 'password: ********'],
    ['a placeholder', 'password: none'],
    ['the shell', 'pwd: /home/anna/projects'],
    ['a prefix without a token', 'I use sk-learn and ghp_ is a GitHub prefix; AKIA starts AWS keys'],
    ['a word that contains a prefix', 'the task-manager-application-2024 crashed'],
    ['a data URI', 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk'],
    ['German compound words', 'Donaudampfschifffahrtsgesellschaftskapitän'],
  ])('%s', (_label, text) => {
    expect(detectSecret(text)).toBeNull();
  });

  it('text that already uses references instead of values', () => {
    const ref = '{{secret:3f2b8c1e-9a4d-4e6f-b2a1-7c8d9e0f1a2b.password}}';
    expect(detectSecret(`log in with password: ${ref}`)).toBeNull();
    expect(detectSecret(`token ${ref.replace('password', 'token')} please`)).toBeNull();
  });
});

describe('replaceSecret', () => {
  it('replaces every occurrence of the value with the reference', () => {
    const ref = '{{secret:3f2b8c1e-9a4d-4e6f-b2a1-7c8d9e0f1a2b.token}}';
    const token = `ghp_${body36}`;
    expect(replaceSecret(`a ${token} b ${token}`, token, ref)).toEqual({
      text: `a ${ref} b ${ref}`,
      replaced: true,
    });
    // After replacing, nothing is offered again.
    expect(detectSecret(replaceSecret(`use ${token}`, token, ref).text)).toBeNull();
  });

  it('leaves text alone when the value is gone or empty', () => {
    expect(replaceSecret('edited away', 'hunter22', 'ref')).toEqual({ text: 'edited away', replaced: false });
    expect(replaceSecret('abc', '', 'ref')).toEqual({ text: 'abc', replaced: false });
  });
});
