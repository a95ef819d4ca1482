import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { rootsOfAllowedPaths } from './roots.js';

describe('rootsOfAllowedPaths', () => {
  it('offers no roots for *, wherever it stands in the list', () => {
    expect(rootsOfAllowedPaths(['*'])).toEqual([]);
    expect(rootsOfAllowedPaths(['/home/me', '*'])).toEqual([]);
  });

  it('makes file:// URIs named after the folder, relative paths resolved, duplicates once', () => {
    expect(rootsOfAllowedPaths(['/home/me/projects', 'notes', '/home/me/projects/', '/'], '/work')).toEqual([
      { uri: 'file:///home/me/projects', name: 'projects' },
      { uri: 'file:///work/notes', name: 'notes' },
      { uri: 'file:///', name: '/' },
    ]);
  });

  it('percent-encodes what a URI cannot hold', () => {
    expect(rootsOfAllowedPaths(['/srv/my files/#1'])).toEqual([
      { uri: 'file:///srv/my%20files/%231', name: '#1' },
    ]);
  });

  it('expands ~ as the file tools do, rather than taking it for a folder named ~', () => {
    expect(rootsOfAllowedPaths(['~/projects', '~'], '/work', '/home/me')).toEqual([
      { uri: 'file:///home/me/projects', name: 'projects' },
      { uri: 'file:///home/me', name: 'me' },
    ]);
  });

  it('names the real folder a link leads to, as the file tools confine themselves to it', () => {
    const dir = mkdtempSync(join(realpathSync(tmpdir()), 'roots-'));
    try {
      mkdirSync(join(dir, 'real'));
      symlinkSync(join(dir, 'real'), join(dir, 'link'));
      expect(rootsOfAllowedPaths(['link'], dir)).toEqual([
        { uri: pathToFileURL(join(dir, 'real')).href, name: 'real' },
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('offers nothing for an empty list', () => {
    expect(rootsOfAllowedPaths([])).toEqual([]);
  });
});
