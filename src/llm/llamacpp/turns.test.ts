import { describe, expect, it } from 'vitest';
import { TurnAbandoned, Turns } from './turns.js';

describe('Turns', () => {
  it('gives turns in the order they were asked for, one at a time', async () => {
    const turns = new Turns();
    const order: string[] = [];
    const take = async (tag: string, release: Promise<void>) => {
      const done = await turns.acquire();
      order.push(`${tag} starts`);
      await release;
      order.push(`${tag} ends`);
      done();
    };
    let finishA!: () => void;
    const a = take('a', new Promise<void>((r) => (finishA = r)));
    const b = take('b', Promise.resolve());
    const c = take('c', Promise.resolve());
    await Promise.resolve();
    expect(turns.pending).toBe(3);
    finishA();
    await Promise.all([a, b, c]);
    expect(order).toEqual(['a starts', 'a ends', 'b starts', 'b ends', 'c starts', 'c ends']);
    expect(turns.pending).toBe(0);
  });

  it('a caller that gives up while waiting is skipped, and the next one still waits for the current turn', async () => {
    const turns = new Turns();
    const first = await turns.acquire();
    const controller = new AbortController();
    const abandoned = turns.acquire(controller.signal);
    let thirdStarted = false;
    const third = turns.acquire().then((release) => {
      thirdStarted = true;
      return release;
    });
    controller.abort();
    await expect(abandoned).rejects.toBeInstanceOf(TurnAbandoned);
    await Promise.resolve();
    expect(thirdStarted).toBe(false);
    first();
    (await third)();
    expect(thirdStarted).toBe(true);
    expect(turns.pending).toBe(0);
  });

  it('an already aborted signal is refused at once; releasing twice is harmless', async () => {
    const turns = new Turns();
    await expect(turns.acquire(AbortSignal.abort())).rejects.toBeInstanceOf(TurnAbandoned);
    const release = await turns.acquire();
    release();
    release();
    expect(turns.pending).toBe(0);
    (await turns.acquire())();
  });
});
