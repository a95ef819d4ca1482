import { describe, expect, it } from 'vitest';
import { findChromium } from './find-chromium.js';

describe('findChromium', () => {
  it('reports a CHROMIUM_PATH with no program behind it, and what to do', () => {
    const status = findChromium('/nowhere/chromium');
    expect(status).toMatchObject({ available: false, path: '/nowhere/chromium' });
    expect(status.reason).toMatch(/CHROMIUM_PATH is \/nowhere\/chromium, but no executable file is there/);
  });

  it('takes a CHROMIUM_PATH that exists as it is', () => {
    expect(findChromium('/bin/sh')).toEqual({ available: true, path: '/bin/sh' });
  });
});
