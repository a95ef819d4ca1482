import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findExecutable, findOpenscad, findXvfb, programIn } from './find-3d-programs.js';

const dir = mkdtempSync(join(tmpdir(), 'navi-find-3d-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('finding OpenSCAD and Xvfb', () => {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'openscad'), '#!/bin/sh\n');
  chmodSync(join(bin, 'openscad'), 0o755);
  writeFileSync(join(bin, 'not-executable'), '');
  mkdirSync(join(bin, 'a-folder'));
  chmodSync(join(bin, 'a-folder'), 0o755);

  it('finds a name on the search path, or a path, and only executable files', () => {
    expect(findExecutable('openscad', `/nowhere:${bin}`)).toBe(join(bin, 'openscad'));
    expect(findExecutable(join(bin, 'openscad'), '')).toBe(join(bin, 'openscad'));
    expect(findExecutable('not-executable', bin)).toBeUndefined();
    expect(findExecutable('a-folder', bin)).toBeUndefined();
    expect(findExecutable(join(bin, 'missing'), bin)).toBeUndefined();
  });

  it('reads a relative path against the folder given, and leaves a name for PATH', () => {
    expect(programIn('bin/openscad', '/srv/navi')).toBe('/srv/navi/bin/openscad');
    expect(programIn('./tools/../bin/Xvfb', '/srv/navi')).toBe('/srv/navi/bin/Xvfb');
    expect(programIn('openscad', '/srv/navi')).toBe('openscad');
    expect(programIn('/usr/bin/openscad', '/srv/navi')).toBe('/usr/bin/openscad');
  });

  it('says what is missing and how to install it', () => {
    expect(findOpenscad({ OPENSCAD_PATH: '/nowhere/openscad' })).toEqual({
      available: false,
      reason:
        'OpenSCAD is not installed here (OPENSCAD_PATH is /nowhere/openscad, and no executable file is at /nowhere/openscad). Install it with apt-get install openscad xvfb xauth, or set OPENSCAD_PATH to where it is.',
    });
    expect(findXvfb({ XVFB_PATH: 'no-such-xvfb-here' }).reason).toMatch(
      /^Xvfb .* is not installed here \(XVFB_PATH is no-such-xvfb-here, and no program no-such-xvfb-here is on PATH\)\. Install it with apt-get install openscad xvfb xauth/,
    );
    expect(findOpenscad({ OPENSCAD_PATH: join(bin, 'openscad') })).toEqual({
      available: true,
      path: join(bin, 'openscad'),
    });
  });
});
