/** What `navi doctor` says about the programs navi-3d runs, found or not. */
import { describe, expect, it } from 'vitest';
import { findProgram } from '../../test/support/requirements.js';
import { check3dPrograms } from './doctor.js';

describe('navi doctor on OpenSCAD and Xvfb', () => {
  it('warns about each missing program, saying how to install it and what still works', () => {
    const [openscad, xvfb] = check3dPrograms({
      OPENSCAD_PATH: '/nowhere/openscad',
      XVFB_PATH: 'no-such-xvfb',
    });
    expect(openscad).toEqual({
      name: 'openscad',
      level: 'warn',
      detail: expect.stringMatching(
        /^OpenSCAD is not installed here \(OPENSCAD_PATH is \/nowhere\/openscad.*apt-get install openscad xvfb xauth.*lint_scad works; compile_scad and render_stl do not\.$/,
      ),
    });
    expect(xvfb).toEqual({
      name: 'xvfb',
      level: 'warn',
      detail: expect.stringMatching(
        /^Xvfb .*XVFB_PATH is no-such-xvfb.* render_stl does not work without it\.$/,
      ),
    });
  });

  it('names the programs it found', () => {
    const [openscad, xvfb] = check3dPrograms({ OPENSCAD_PATH: '/bin/sh', XVFB_PATH: 'sh' });
    expect(openscad).toEqual({
      name: 'openscad',
      level: 'ok',
      detail: '/bin/sh, used by compile_scad and render_stl',
    });
    expect(xvfb).toEqual({
      name: 'xvfb',
      level: 'ok',
      detail: `${findProgram('sh')}, the virtual screen render_stl draws on`,
    });
  });
});
