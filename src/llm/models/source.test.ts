/**
 * Resolving what `navi model pull` and `POST /llm/downloads` are given: aliases, `hf:` sources,
 * URLs and checksums, and the hostile or broken ones refused with a reason.
 */
import { describe, expect, it } from 'vitest';
import { CATALOG, catalogByAlias } from './catalog.js';
import { MAX_SOURCE_LENGTH, modelFileNameProblem, SourceError, SourceResolver } from './source.js';

const resolver = new SourceResolver();

function refused(input: string, words: string | RegExp, sha256?: string): void {
  let err: unknown;
  try {
    resolver.resolve(input, sha256);
  } catch (e) {
    err = e;
  }
  expect(err, input).toBeInstanceOf(SourceError);
  if (typeof words === 'string') expect((err as Error).message).toContain(words);
  else expect((err as Error).message).toMatch(words);
}

describe('the catalog', () => {
  it('has a handful of models, each with a safe file name, a size, a context and a SHA-256', () => {
    expect(CATALOG.length).toBeGreaterThanOrEqual(4);
    expect(CATALOG.length).toBeLessThanOrEqual(6);
    expect(new Set(CATALOG.map((m) => m.alias)).size).toBe(CATALOG.length);
    for (const model of CATALOG) {
      expect(modelFileNameProblem(model.fileName), model.alias).toBeUndefined();
      expect(model.source).toMatch(/^hf:[^/]+\/[^/]+\/.+\.gguf$/);
      expect(model.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(model.sizeBytes).toBeGreaterThan(100_000_000);
      expect(model.contextLength).toBeGreaterThanOrEqual(8192);
      expect(model.goodAt.length).toBeGreaterThan(0);
    }
  });
});

describe('SourceResolver', () => {
  it('resolves an alias (any case) to its Hugging Face URL, file name and checksum', () => {
    const model = CATALOG[0]!;
    const resolved = resolver.resolve(model.alias.toUpperCase());
    const [, org, repo, file] = /^hf:([^/]+)\/([^/]+)\/(.+)$/.exec(model.source)!;
    expect(resolved.url).toBe(`https://huggingface.co/${org}/${repo}/resolve/main/${file}`);
    expect(resolved.fileName).toBe(model.fileName);
    expect(resolved.sha256).toBe(model.sha256);
    expect(resolved.model?.alias).toBe(model.alias);
  });

  it('resolves hf: sources, folders included, against the base URL it was given', () => {
    const local = new SourceResolver({ hfBaseUrl: 'http://127.0.0.1:9999/' });
    const resolved = local.resolve('hf:org/repo/sub/dir/Model-Q4_K_M.gguf');
    expect(resolved.url).toBe('http://127.0.0.1:9999/org/repo/resolve/main/sub/dir/Model-Q4_K_M.gguf');
    expect(resolved.fileName).toBe('Model-Q4_K_M.gguf');
    expect(resolved.sha256).toBeUndefined();
  });

  it("gives an hf: source of a catalog model the catalog's checksum", () => {
    const model = catalogByAlias('llama3.2-1b')!;
    expect(resolver.resolve(model.source).sha256).toBe(model.sha256);
  });

  it('lets a checksum given by the caller win, in any case', () => {
    const sum = 'AB'.repeat(32);
    expect(resolver.resolve(CATALOG[0]!.alias, sum).sha256).toBe(sum.toLowerCase());
    expect(resolver.resolve(`https://example.org/x.gguf`, ` ${sum} `).sha256).toBe(sum.toLowerCase());
  });

  it('takes the file name of an https URL from its path, decoded, without the query', () => {
    const resolved = resolver.resolve('https://example.org/files/Model%2D1.gguf?download=true');
    expect(resolved.fileName).toBe('Model-1.gguf');
    expect(resolved.url).toBe('https://example.org/files/Model%2D1.gguf?download=true');
    refused('https://example.org/files/My%20Model.gguf', 'not a plain file name');
  });

  it('accepts plain http only on this machine', () => {
    expect(resolver.resolve('http://127.0.0.1:8080/m.gguf').url).toBe('http://127.0.0.1:8080/m.gguf');
    expect(resolver.resolve('http://localhost/m.gguf').fileName).toBe('m.gguf');
    refused('http://example.org/m.gguf', 'give an https:// URL');
    refused('ftp://example.org/m.gguf', 'ftp:// URLs are not accepted');
    refused('file:///etc/passwd.gguf', 'file:// URLs are not accepted');
  });

  it.each([
    ['nothing', '', 'no model given'],
    ['blanks', '   ', 'no model given'],
    ['an unknown alias', 'gpt-9', 'is not a recommended model'],
    ['an hf: source without a file', 'hf:org/repo', 'names no file'],
    ['an hf: source climbing out', 'hf:org/repo/../../x.gguf', 'has a part Navi does not accept'],
    ['an hf: source with an empty part', 'hf:org//x.gguf', '("")'],
    ['an hf: source with a query', 'hf:org/repo/x.gguf?a=b', 'has a part Navi does not accept'],
    ['an hf: file that is not a gguf', 'hf:org/repo/model.safetensors', 'does not end in .gguf'],
    ['a URL to an executable', 'https://example.org/x.exe', 'does not end in .gguf'],
    ['a URL ending in a folder', 'https://example.org/models/', 'is empty'],
    ['a URL whose name climbs out', 'https://example.org/a/..%2F..%2Fx.gguf', 'not a plain file name'],
    ['a URL with a password', 'https://u:p@example.org/x.gguf', 'user name or password'],
    ['a broken URL', 'https://exa mple.org/x.gguf', 'is not a valid URL'],
    ['a huge string', `https://example.org/${'a'.repeat(MAX_SOURCE_LENGTH)}.gguf`, 'at most 2048'],
  ])('refuses %s', (_what, input, words) => refused(input, words));

  it('refuses a checksum that is not 64 hexadecimal characters', () => {
    refused(CATALOG[0]!.alias, 'is not a SHA-256', 'abc');
    refused(CATALOG[0]!.alias, 'is not a SHA-256', 'g'.repeat(64));
  });
});

describe('modelFileNameProblem', () => {
  it.each([
    ['../x.gguf', 'not a plain file name'],
    ['a/b.gguf', 'not a plain file name'],
    ['a\\b.gguf', 'not a plain file name'],
    ['x.exe', 'does not end in .gguf'],
    ['.gguf', 'starts with a dot'],
    ['.hidden.gguf', 'starts with a dot'],
    ['x.gguf\u0000', 'not a plain file name'],
    ['', 'empty'],
    [`${'a'.repeat(300)}.gguf`, 'at most 200'],
  ])('refuses %j', (name, words) => {
    expect(modelFileNameProblem(name)).toContain(words);
  });

  it('accepts a plain GGUF file name', () => {
    expect(modelFileNameProblem('Qwen3-4B-Q4_K_M.gguf')).toBeUndefined();
  });
});
