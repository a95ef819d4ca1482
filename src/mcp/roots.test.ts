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

  it('offers nothing for an empty list', () => {
    expect(rootsOfAllowedPaths([])).toEqual([]);
  });
});
