/**
 * OPENSCAD_MAX_RUNNING: the slots themselves, then compile_scad with a stand-in OpenSCAD that
 * never finishes, so which calls run and which wait is seen from the processes started.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, processGone } from '../../../test/support/processes.js';
import { testSettings } from '../../config/settings.js';
import { SESSION_META_KEY } from '../../protocol/mcp-meta.js';
import { compileScadTool } from './compile-scad.js';
import { createContext } from './context.js';
import { type Release, Slots } from './slots.js';

const SESSION = 'slots-session';
const inSession = { meta: { [SESSION_META_KEY]: SESSION } };
const noSignal = new AbortController().signal;
const LONG = 600_000;

let root: string;
let files: string;
let stuck: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'navi-3d-slots-'));
  files = join(root, 'files');
  mkdirSync(join(files, SESSION), { recursive: true });
  stuck = join(root, 'stuck-openscad');
  writeFileSync(stuck, '#!/bin/sh\nsleep 300\n');
  chmodSync(stuck, 0o755);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

function held(result: Release | 'aborted' | 'timedOut'): Release {
  if (typeof result !== 'function') throw new Error(`expected a slot, got ${result}`);
  return result;
}

describe('Slots', () => {
  it('refuses a count below one or not whole', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new Slots(bad)).toThrow(RangeError);
  });

  it('gives out at most max at once, then serves the waiting in order of arrival', async () => {
    const slots = new Slots(2);
    const first = held(await slots.take(noSignal, LONG));
    const second = held(await slots.take(noSignal, LONG));
    expect(slots.active).toBe(2);
    const order: string[] = [];
    const inLine = (name: string) =>
      slots.take(noSignal, LONG).then((r) => {
        order.push(name);
        return held(r);
      });
    const third = inLine('third');
    const fourth = inLine('fourth');
    expect(slots.waiting).toBe(2);
    first();
    const thirdRelease = await third;
    expect(order).toEqual(['third']);
    expect([slots.active, slots.waiting]).toEqual([2, 1]);
    // Releasing twice frees one slot, not two.
    first();
    expect([slots.active, slots.waiting]).toEqual([2, 1]);
    second();
    (await fourth)();
    thirdRelease();
    expect(order).toEqual(['third', 'fourth']);
    expect([slots.active, slots.waiting]).toEqual([0, 0]);
  });

  it('lets a waiter leave when it is cancelled or its time is up, holding nothing', async () => {
    const slots = new Slots(1);
    const only = held(await slots.take(noSignal, LONG));
    const cancel = new AbortController();
    const cancelled = slots.take(cancel.signal, LONG);
    const late = slots.take(noSignal, 50);
    expect(slots.waiting).toBe(2);
    cancel.abort();
    expect(await cancelled).toBe('aborted');
    expect(await late).toBe('timedOut');
    expect([slots.active, slots.waiting]).toEqual([1, 0]);
    expect(await slots.take(AbortSignal.abort(), LONG)).toBe('aborted');
    expect(await slots.take(noSignal, 0)).toBe('timedOut');
    only();
    expect(slots.active).toBe(0);
    held(await slots.take(noSignal, 0))();
  });
});

describe('compile_scad under OPENSCAD_MAX_RUNNING', () => {
  function tool(overrides: Record<string, string>, onSpawn?: (pid: number) => void) {
    const context = createContext(
      testSettings({ SESSION_FILES_DIR: files, OPENSCAD_PATH: stuck, ...overrides }),
      files,
      onSpawn,
    );
    return { context, compile: compileScadTool(context) };
  }

  it('runs at most two OpenSCAD processes by default; the third starts when one ends', async () => {
    const pids: number[] = [];
    const { context, compile } = tool({}, (pid) => pids.push(pid));
    expect(context.slots.max).toBe(2);
    const calls = [0, 1, 2].map(() => new AbortController());
    const run = (i: number) => compile.handler({ code: 'cube(1);' }, calls[i]!.signal, inSession);
    const results = [run(0), run(1)];
    await eventually(() => pids.length === 2);
    results.push(run(2));
    await eventually(() => context.slots.waiting === 1);
    expect([pids.length, context.slots.active]).toEqual([2, 2]);
    calls[0]!.abort();
    await eventually(() => pids.length === 3);
    expect(context.slots.waiting).toBe(0);
    calls[1]!.abort();
    calls[2]!.abort();
    for (const result of await Promise.all(results))
      expect(text(result)).toBe('compile_scad was cancelled; OpenSCAD was stopped.');
    for (const pid of pids) expect(processGone(pid)).toBe(true);
    expect([context.slots.active, context.slots.waiting]).toEqual([0, 0]);
  });

  it('takes OPENSCAD_MAX_RUNNING from the settings, and refuses a value out of range', () => {
    expect(tool({ OPENSCAD_MAX_RUNNING: '5' }).context.slots.max).toBe(5);
    for (const bad of ['0', '65', 'two', '1.5'])
      expect(() => testSettings({ OPENSCAD_MAX_RUNNING: bad }), bad).toThrow(/OPENSCAD_MAX_RUNNING/);
  });

  it('counts the wait against OPENSCAD_TIMEOUT_MS, and says it never started', async () => {
    let spawned = 0;
    const { context, compile } = tool({ OPENSCAD_TIMEOUT_MS: '500' }, () => spawned++);
    const busy = [
      held(await context.slots.take(noSignal, LONG)),
      held(await context.slots.take(noSignal, LONG)),
    ];
    try {
      const result = await compile.handler({ code: 'cube(1);' }, noSignal, inSession);
      expect(result.isError).toBe(true);
      expect(text(result)).toBe(
        'compile_scad waited 0.5 s (OPENSCAD_TIMEOUT_MS) for its turn and gave up: other calls kept all 2 OpenSCAD processes busy (OPENSCAD_MAX_RUNNING). Try again in a moment.',
      );
      expect(spawned).toBe(0);
    } finally {
      for (const release of busy) release();
    }
  });

  it('stops waiting when the call is cancelled, and starts nothing', async () => {
    let spawned = 0;
    const { context, compile } = tool({}, () => spawned++);
    const busy = [
      held(await context.slots.take(noSignal, LONG)),
      held(await context.slots.take(noSignal, LONG)),
    ];
    try {
      const cancel = new AbortController();
      const pending = compile.handler({ code: 'cube(1);' }, cancel.signal, inSession);
      await eventually(() => context.slots.waiting === 1);
      cancel.abort();
      const result = await pending;
      expect(text(result)).toBe(
        'compile_scad was cancelled while it waited for its turn; OpenSCAD never started.',
      );
      expect([spawned, context.slots.waiting]).toEqual([0, 0]);
    } finally {
      for (const release of busy) release();
    }
    expect(context.slots.active).toBe(0);
  });
});
