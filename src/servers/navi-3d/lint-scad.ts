/**
 * lint_scad: quick advice on OpenSCAD code before it is compiled, each problem with its line.
 * Finding problems is a normal result, not a failure: the model reads them and fixes the code.
 * Only code that cannot be read as text at all (empty, too long, with NUL characters) fails.
 */
import { z } from 'zod';
import { type ShippedTool, toolError, toolText } from '../common/tool.js';
import { MAX_CODE_CHARS } from './compile-scad.js';
import { cancellable, type Navi3dContext, sessionFor } from './context.js';
import { lintProblems } from './scad-lint.js';
import { formatProblems, gatherSources } from './scad-sources.js';

const inputSchema = {
  code: z.string().max(MAX_CODE_CHARS).describe('The OpenSCAD source to check.'),
};

export function lintScadTool(context: Navi3dContext): ShippedTool<typeof inputSchema> {
  return {
    name: 'lint_scad',
    description:
      'Checks OpenSCAD code without compiling it, in a moment: unmatched brackets, missing semicolons, unknown modules and functions, and include/use/import of files outside the session\'s files. Returns "No problems found" or each problem with its line number. Lint first, then compile_scad, then render_stl to look at the result.',
    inputSchema,
    annotations: { title: 'Check OpenSCAD code', readOnlyHint: true, openWorldHint: false },
    handler: cancellable('lint_scad', async (args, signal, request) => {
      const { code } = args;
      if (typeof code !== 'string' || code.trim() === '')
        return toolError('code is empty: give the OpenSCAD source to check, like cube(10);');
      if (code.length > MAX_CODE_CHARS)
        return toolError(`code is ${code.length} characters; lint_scad reads at most ${MAX_CODE_CHARS}.`);
      if (code.includes('\0'))
        return toolError(
          'code contains a NUL character, so it is not OpenSCAD source text; give the source as plain text.',
        );
      const session = sessionFor(context, request);
      const gathered = await gatherSources(
        { file: 'code.scad', source: code, inline: true },
        session,
        signal,
      );
      const problems = lintProblems(gathered);
      if (problems.length === 0) return toolText('No problems found. Next: compile_scad with this code.');
      const lines = formatProblems(problems, ['code.scad']);
      return toolText(
        [
          `${problems.length} problem${problems.length === 1 ? '' : 's'} found (code.scad is this code):`,
          ...lines,
          'Fix them and lint again, then compile_scad. Lint reads the code without running it; OpenSCAD may still find more.',
        ].join('\n'),
      );
    }),
  };
}
