/**
 * compile_scad: OpenSCAD source (given, or a .scad among the session's files) → a binary STL,
 * returned as an embedded resource that Navi saves among the session's files. Every file the
 * code names is checked and copied into a private temporary folder before OpenSCAD runs, so
 * OpenSCAD reads only those copies.
 */
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
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
} from './context.js';
import {
  createWorkspace,
  emptiness,
  notStarted,
  openscadMessages,
  type Runner,
  runOpenscad,
  seconds,
} from './openscad.js';
import { formatProblems, gatherSources, MAX_SOURCE_BYTES } from './scad-sources.js';
import { NO_SESSION, readNamedFile } from './session-folder.js';
import { describeStats, parseStl, StlError } from './stl.js';

/** Longest source accepted as `code`. */
export const MAX_CODE_CHARS = 500_000;
/**
 * Largest STL sent back: base64 makes it a third larger, and Navi takes at most 16 MiB in one
 * message from a server.
 */
export const MAX_STL_BYTES = 10 * 1024 * 1024;
const MAX_NAME_CHARS = 80;

const inputSchema = {
  code: z
    .string()
    .max(MAX_CODE_CHARS)
    .optional()
    .describe('OpenSCAD source to compile. Give either code or path.'),
  path: z
    .string()
    .max(1024)
    .optional()
    .describe('A .scad file among the session\'s files, like "bracket.scad". Give either code or path.'),
  name: z
    .string()
    .max(200)
    .optional()
    .describe('Name for the STL file, without .stl (default: the name of path, or "model").'),
};

/** A safe file stem: letters, digits, `.`, `_`, `-`; never hidden, never empty. */
export function stlStem(name: string | undefined, path: string | undefined): string {
  const raw = name ?? (path ? posix.basename(path).replace(/\.scad$/i, '') : 'model');
  const stem = raw
    .replace(/\.stl$/i, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/\.{2,}/g, '.')
    .replace(/^[._-]+/, '')
    .slice(0, MAX_NAME_CHARS)
    .replace(/[._-]+$/, '');
  return stem || 'model';
}

export function compileScadTool(context: Navi3dContext): ShippedTool<typeof inputSchema> {
  return {
    name: 'compile_scad',
    description:
      "Compiles OpenSCAD code (or a .scad file among the session's files) into an STL file, which is saved among the session's files. Returns the triangle count, the bounding box and OpenSCAD's warnings and errors with their line numbers. Lint first, compile, then render_stl to look at the result.",
    inputSchema,
    annotations: {
      title: 'Compile OpenSCAD to STL',
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: false,
    },
    handler: cancellable('compile_scad', async (args, signal, request) => {
      const { code, path } = args;
      if ((code === undefined) === (path === undefined))
        return toolError(
          code === undefined
            ? "Give the OpenSCAD source as code, or the name of a .scad file among the session's files as path."
            : "Give either code or path, not both: code is compiled as it is, path names a .scad file among the session's files.",
        );
      if (code !== undefined && code.trim() === '')
        return toolError('code is empty: give the OpenSCAD source to compile, like cube(10);');
      if (code !== undefined && code.length > MAX_CODE_CHARS)
        return toolError(
          `code is ${code.length} characters; compile_scad takes at most ${MAX_CODE_CHARS}. Split it into .scad files and include them.`,
        );
      if (code?.includes('\0')) return toolError('code contains a NUL character: give OpenSCAD source text.');
      const program = openscadOrError(context, 'compile_scad');
      if (typeof program !== 'string') return program;
      const session = sessionFor(context, request);
      if (session.kind === 'refused') return toolError(session.reason);

      let entry: { file: string; source: string; inline?: boolean };
      if (path !== undefined) {
        if (session.kind === 'none')
          return toolError(
            `compile_scad cannot read ${JSON.stringify(path).slice(0, 200)}: ${NO_SESSION} Pass the OpenSCAD source itself as code, without includes.`,
          );
        const named = await readNamedFile(
          session.folder,
          'compile_scad',
          path,
          {
            extension: '.scad',
            wrongKind: (file) =>
              `${file} is not a .scad file: compile_scad compiles OpenSCAD sources (.scad). To look at an STL, use render_stl.`,
            missing: (file) =>
              `There is no file ${file} among the session's files. Write it there first, or pass its source as code.`,
          },
          MAX_SOURCE_BYTES,
          signal,
        );
        if ('error' in named) return toolError(named.error);
        if (named.data.includes(0))
          return toolError(`${named.file} is not text, so it is not OpenSCAD source.`);
        entry = { file: named.file, source: named.data.toString('utf8') };
      } else entry = { file: 'code.scad', source: code!, inline: true };

      const stem = stlStem(args.name, path);
      const gathered = await gatherSources(entry, session, signal);
      if (gathered.fileProblems.length > 0)
        return toolError(
          [
            'compile_scad did not run OpenSCAD: the code names files it may not or cannot read.',
            ...formatProblems(gathered.fileProblems, [entry.file]),
          ].join('\n'),
        );
      const confinement = await confinementOrError(context, 'compile_scad');
      if ('error' in confinement) return confinement.error;
      return compile(context, { program, confinement }, entry, gathered.files, stem, signal);
    }),
  };
}

async function compile(
  context: Navi3dContext,
  { program, confinement }: Runner,
  entry: { file: string; source: string },
  files: ReadonlyMap<string, Buffer>,
  stem: string,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const workspace = await createWorkspace();
  try {
    await workspace.stage(new Map<string, Buffer | string>([[entry.file, entry.source], ...files]));
    const output = join(workspace.out, 'model.stl');
    const timeout = context.settings.OPENSCAD_TIMEOUT_MS;
    let run: Awaited<ReturnType<typeof runOpenscad>>;
    try {
      run = await runOpenscad({
        program,
        workspace,
        args: ['-o', output, '--export-format', 'binstl', join(workspace.src, entry.file)],
        timeoutMs: timeout,
        signal,
        confinement,
        slots: context.slots,
        ...(context.onSpawn ? { onSpawn: context.onSpawn } : {}),
      });
    } catch (err) {
      return toolError(notStarted(program, err));
    }
    if (run.aborted)
      return toolError(
        run.pid === undefined
          ? 'compile_scad was cancelled while it waited for its turn; OpenSCAD never started.'
          : 'compile_scad was cancelled; OpenSCAD was stopped.',
      );
    if (run.timedOut && run.pid === undefined)
      return toolError(
        `compile_scad waited ${seconds(timeout)} (OPENSCAD_TIMEOUT_MS) for its turn and gave up: other calls kept all ${context.slots.max} OpenSCAD processes busy (OPENSCAD_MAX_RUNNING). Try again in a moment.`,
      );
    const said = `${run.stderr}\n${run.stdout}`;
    const messages = openscadMessages(said, workspace);
    const heard = messages.length > 0 ? ['OpenSCAD said:', ...messages] : [];
    if (run.timedOut)
      return toolError(
        [
          `OpenSCAD did not finish within ${seconds(timeout)} (OPENSCAD_TIMEOUT_MS) and was stopped. Make the model cheaper: lower $fn, avoid minkowski() and hull() over detailed shapes, use fewer boolean operations; or ask the person to raise OPENSCAD_TIMEOUT_MS.`,
          ...heard,
        ].join('\n'),
      );
    const empty = emptiness(said);
    if (empty === 'empty')
      return toolError(
        [
          `The model is empty: OpenSCAD's top-level object has no geometry, so there is no STL. Call a module at the top level of ${entry.file} (defining one is not enough), and check that difference() does not remove everything.`,
          ...heard,
        ].join('\n'),
      );
    if (empty === 'not-3d')
      return toolError(
        [
          'The model is 2D (square, circle, polygon, text…), and an STL holds 3D shapes: extrude it, e.g. linear_extrude(height = 5) { … }.',
          ...heard,
        ].join('\n'),
      );
    if (run.exitCode !== 0)
      return toolError(
        [
          `OpenSCAD could not compile ${entry.file} (exit code ${run.exitCode ?? run.signal}). Fix the errors below (each names its file and line), then compile again.`,
          ...(heard.length > 0 ? heard : ['OpenSCAD gave no message.']),
        ].join('\n'),
      );
    const stl = await readFile(output).catch(() => undefined);
    if (!stl) return toolError(['OpenSCAD finished but wrote no STL.', ...heard].join('\n'));
    if (stl.length > MAX_STL_BYTES)
      return toolError(
        `The STL is ${stl.length} bytes, more than the ${MAX_STL_BYTES} bytes compile_scad can hand back. Use fewer facets (lower $fn, $fa, $fs) or split the model into parts.`,
      );
    let stats: ReturnType<typeof parseStl>;
    try {
      stats = parseStl(stl);
    } catch (err) {
      if (err instanceof StlError)
        return toolError(`OpenSCAD wrote an STL navi-3d cannot read: ${err.message}.`);
      throw err;
    }
    const fileName = `${stem}.stl`;
    const lines = [
      `Compiled ${entry.file} into ${fileName}: ${describeStats(stats).join('\n')}`,
      ...heard,
      `${fileName} is attached and saved among the session's files. To look at it: render_stl with path "${fileName}" (or the name Navi reports it was saved under).`,
    ];
    return {
      content: [
        text(lines.join('\n')),
        {
          type: 'resource',
          resource: {
            uri: `navi-3d://files/${fileName}`,
            mimeType: 'model/stl',
            blob: stl.toString('base64'),
          },
          _meta: { [FILE_NAME_META_KEY]: fileName },
        },
      ],
    };
  } finally {
    await workspace.remove();
  }
}
