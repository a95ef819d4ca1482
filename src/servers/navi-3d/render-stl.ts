/**
 * render_stl: pictures of an STL among the session's files, from up to three fixed views,
 * rendered by OpenSCAD on the server's one virtual screen (xvfb.ts). Each picture comes back as
 * an MCP image, so the model sees it and Navi saves it among the session's files.
 */
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { FILE_NAME_META_KEY } from '../../protocol/mcp-meta.js';
import { type ShippedTool, toolError } from '../common/tool.js';
import {
  cancellable,
  confinementOrError,
  type Navi3dContext,
  openscadOrError,
  sessionFor,
  text,
  xvfbOrError,
} from './context.js';
import {
  createWorkspace,
  notStarted,
  openscadMessages,
  type Runner,
  runOpenscad,
  seconds,
  type Workspace,
} from './openscad.js';
import { NO_SESSION, readNamedFile } from './session-folder.js';
import { describeStats, parseStl, StlError } from './stl.js';
import { type Display, XvfbError } from './xvfb.js';

/** The views, as OpenSCAD's camera rotation (x, y, z degrees) and what the picture shows. */
export const VIEWS = {
  front: { rotation: '90,0,0', shows: 'from the front (looking along +Y; X to the right, Z up)' },
  back: { rotation: '90,0,180', shows: 'from the back (looking along -Y; X to the left, Z up)' },
  left: { rotation: '90,0,270', shows: 'from the left (looking along +X; Y to the left, Z up)' },
  right: { rotation: '90,0,90', shows: 'from the right (looking along -X; Y to the right, Z up)' },
  top: { rotation: '0,0,0', shows: 'from above (looking down; X to the right, Y up)' },
  bottom: { rotation: '180,0,0', shows: 'from below (looking up; X to the right, Y down)' },
  isometric: { rotation: '55,0,25', shows: 'at an angle from the front right and above' },
} as const;
export type ViewName = keyof typeof VIEWS;
const VIEW_NAMES = Object.keys(VIEWS) as [ViewName, ...ViewName[]];
const DEFAULT_VIEWS: ViewName[] = ['front', 'top', 'isometric'];
const MAX_VIEWS = 3;
const IMAGE_SIZE = '800,600';
/** Largest STL rendered: bigger ones take OpenSCAD minutes per picture. */
export const MAX_RENDER_STL_BYTES = 64 * 1024 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const inputSchema = {
  path: z.string().max(1024).describe('An .stl file among the session\'s files, like "bracket.stl".'),
  views: z
    .array(z.enum(VIEW_NAMES))
    .max(MAX_VIEWS)
    .optional()
    .describe(`Up to ${MAX_VIEWS} of: ${VIEW_NAMES.join(', ')}. Default: ${DEFAULT_VIEWS.join(', ')}.`),
};

/** The views asked for, each once, or the message saying what is wrong with the list. */
function chosenViews(views: readonly string[] | undefined): ViewName[] | string {
  if (views === undefined) return DEFAULT_VIEWS;
  const unknown = views.filter((v) => !(v in VIEWS));
  if (unknown.length > 0)
    return `Unknown view${unknown.length === 1 ? '' : 's'} ${unknown.map((v) => JSON.stringify(v).slice(0, 40)).join(', ')}: choose from ${VIEW_NAMES.join(', ')}.`;
  const unique = [...new Set(views as ViewName[])];
  if (unique.length === 0)
    return `views is empty: name 1 to ${MAX_VIEWS} of ${VIEW_NAMES.join(', ')}, or leave it out for ${DEFAULT_VIEWS.join(', ')}.`;
  if (unique.length > MAX_VIEWS)
    return `${unique.length} views asked for; render_stl makes at most ${MAX_VIEWS} per call. Call it again for the others.`;
  return unique;
}

export function renderStlTool(context: Navi3dContext): ShippedTool<typeof inputSchema> {
  return {
    name: 'render_stl',
    description: `Renders pictures of an STL file among the session's files (such as one compile_scad made) so you can check the shape: up to ${MAX_VIEWS} views (${VIEW_NAMES.join(', ')}; default ${DEFAULT_VIEWS.join(', ')}), each returned as a PNG image and saved among the session's files, with the triangle count and bounding box.`,
    inputSchema,
    annotations: {
      title: 'Render an STL',
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: false,
    },
    handler: cancellable('render_stl', async (args, signal, request) => {
      const views = chosenViews(args.views);
      if (typeof views === 'string') return toolError(views);
      const openscad = openscadOrError(context, 'render_stl');
      if (typeof openscad !== 'string') return openscad;
      const xvfb = xvfbOrError(context, 'render_stl');
      if (typeof xvfb !== 'string') return xvfb;
      const session = sessionFor(context, request);
      if (session.kind === 'refused') return toolError(session.reason);
      if (session.kind === 'none')
        return toolError(`render_stl cannot read ${JSON.stringify(args.path).slice(0, 200)}: ${NO_SESSION}`);
      const named = await readNamedFile(
        session.folder,
        'render_stl',
        args.path,
        {
          extension: '.stl',
          wrongKind: (file) =>
            `${file} is not an .stl file: render_stl renders STL files. Compile a .scad file with compile_scad first, then render the STL it makes.`,
          missing: (file) =>
            `There is no file ${file} among the session's files. Compile one with compile_scad, or use the name it was saved under.`,
        },
        MAX_RENDER_STL_BYTES,
        signal,
      );
      if ('error' in named) return toolError(named.error);
      const { file, data: stl } = named;
      let stats: ReturnType<typeof parseStl>;
      try {
        stats = parseStl(stl);
      } catch (err) {
        if (err instanceof StlError) return toolError(`${file} cannot be rendered: ${err.message}.`);
        throw err;
      }
      if (stats.triangles === 0) return toolError(`${file} holds no triangles: there is nothing to see.`);
      const confinement = await confinementOrError(context, 'render_stl');
      if ('error' in confinement) return confinement.error;
      return render(context, { program: openscad, confinement }, file, stl, stats, views, signal);
    }),
  };
}

async function render(
  context: Navi3dContext,
  runner: Runner,
  file: string,
  stl: Buffer,
  stats: ReturnType<typeof parseStl>,
  views: readonly ViewName[],
  signal: AbortSignal,
): Promise<CallToolResult> {
  const timeout = context.settings.OPENSCAD_TIMEOUT_MS;
  const deadline = Date.now() + timeout;
  const workspace = await createWorkspace();
  try {
    // Fixed names in the temporary folder: the file's own name never reaches OpenSCAD's source.
    await workspace.stage(
      new Map<string, Buffer | string>([
        ['model.stl', stl],
        ['view.scad', 'import("model.stl");\n'],
      ]),
    );
    let display: Display;
    try {
      display = await context.display.acquire(signal);
    } catch (err) {
      if (signal.aborted) return toolError('render_stl was cancelled.');
      if (err instanceof XvfbError) return toolError(`render_stl needs a virtual screen, and ${err.message}`);
      throw err;
    }
    const shots = await Promise.all(
      views.map((view) => shoot(context, runner, workspace, view, display, deadline, signal)),
    );
    if (signal.aborted) return toolError('render_stl was cancelled; OpenSCAD was stopped.');
    const failed = shots.find((s) => 'error' in s);
    if (failed && 'error' in failed) {
      if (failed.timedOut)
        return toolError(
          `Rendering ${file} did not finish within ${seconds(timeout)} (OPENSCAD_TIMEOUT_MS) and was stopped. A model this detailed renders slowly: ask for fewer views, or make the model lighter.${shots.some((s) => 'waited' in s && s.waited) ? ` Part of the time went waiting for a turn: at most ${context.slots.max} OpenSCAD processes run at once (OPENSCAD_MAX_RUNNING), for every session.` : ''}`,
        );
      return toolError(`OpenSCAD could not render ${file}: ${failed.error}`);
    }
    const stem = posix.basename(file).replace(/\.stl$/i, '');
    const content: ContentBlock[] = [
      text(
        [
          `${file}: ${describeStats(stats).join('\n')}`,
          `${views.length === 1 ? 'One view follows,' : `${views.length} views follow, each`} saved among the session's files: ${views.map((v) => `${stem}-${v}.png`).join(', ')}.`,
        ].join('\n'),
      ),
    ];
    views.forEach((view, i) => {
      const shot = shots[i] as { png: Buffer };
      const name = `${stem}-${view}.png`;
      content.push(text(`View ${i + 1}, ${view}: ${VIEWS[view].shows}. File ${name}.`));
      content.push({
        type: 'image',
        data: shot.png.toString('base64'),
        mimeType: 'image/png',
        _meta: { [FILE_NAME_META_KEY]: name },
      });
    });
    return { content };
  } finally {
    await workspace.remove();
  }
}

/** `waited`: the time ran out before OpenSCAD got its turn (OPENSCAD_MAX_RUNNING). */
type Shot = { png: Buffer } | { error: string; timedOut?: boolean; waited?: boolean };

/** One picture; when the screen died under it, the screen is started again and it is tried once more. */
async function shoot(
  context: Navi3dContext,
  { program, confinement }: Runner,
  workspace: Workspace,
  view: ViewName,
  display: Display,
  deadline: number,
  signal: AbortSignal,
): Promise<Shot> {
  const output = join(workspace.out, `${view}.png`);
  for (let attempt = 0; ; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0) return { error: 'out of time', timedOut: true };
    let run: Awaited<ReturnType<typeof runOpenscad>>;
    try {
      run = await runOpenscad({
        program,
        workspace,
        args: [
          '-o',
          output,
          `--imgsize=${IMAGE_SIZE}`,
          `--camera=0,0,0,${VIEWS[view].rotation},0`,
          '--viewall',
          '--autocenter',
          '--colorscheme=Tomorrow',
          '--view=axes',
          join(workspace.src, 'view.scad'),
        ],
        timeoutMs: left,
        signal,
        confinement,
        slots: context.slots,
        display,
        ...(context.onSpawn ? { onSpawn: context.onSpawn } : {}),
      });
    } catch (err) {
      return { error: notStarted(program, err) };
    }
    if (run.aborted) return { error: 'cancelled' };
    if (run.timedOut) return { error: 'out of time', timedOut: true, ...(run.pid ? {} : { waited: true }) };
    const png = run.exitCode === 0 ? await readFile(output).catch(() => undefined) : undefined;
    if (png?.subarray(0, 8).equals(PNG_SIGNATURE)) return { png };
    // The screen may have gone away between calls (killed, crashed): a new one, and once more.
    if (attempt === 0 && context.display.pid() === undefined) {
      try {
        display = await context.display.acquire(signal);
        continue;
      } catch (err) {
        return { error: err instanceof Error ? err.message : String(err) };
      }
    }
    // OpenSCAD 2021.01 now and then dies of a signal while drawing (exit 139, SIGSEGV; bwrap
    // reports its program's death by signal n as 128 + n): once more.
    if (attempt === 0 && (run.signal !== null || (run.exitCode ?? 0) > 128)) continue;
    const said = openscadMessages(`${run.stderr}\n${run.stdout}`, workspace);
    const raw = `${run.stderr}`.trim().split('\n').slice(-3).join(' / ');
    return {
      error: `the ${view} view failed (exit ${run.exitCode ?? run.signal}). ${said.length > 0 ? said.join(' / ') : raw || 'OpenSCAD gave no message.'}`,
    };
  }
}
