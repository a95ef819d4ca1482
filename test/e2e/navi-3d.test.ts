/**
 * The real navi-3d server behind the web client: the model designs a part with `compile_scad`,
 * whose STL the chat shows in the inline 3D viewer, then looks at it with `render_stl`, whose
 * three PNG views the chat shows as pictures and the next LLM call receives as images.
 */
import { describe, expect, it } from 'vitest';
import { needsProgram } from '../support/requirements.js';
import { expectModelDrawn } from './viewer-pictures.js';
import {
  openNewSession,
  screenshot,
  sendMessage,
  useWebEnv,
  waitForIdle,
  waitForText,
} from './web-harness.js';

const part = `
// A cube with a round hole through it.
difference() {
  cube(20, center = true);
  cylinder(h = 30, r = 6, center = true, $fn = 48);
}
`;

const ready =
  needsProgram('chromium', 'web client e2e') &&
  needsProgram('openscad', 'navi-3d in the browser') &&
  needsProgram('Xvfb', 'navi-3d in the browser');

describe.skipIf(!ready)('web client: navi-3d models', () => {
  const env = useWebEnv({ settings: { MCP_SHIPPED_SERVERS: 'true' } });

  it('shows the compiled STL in the 3D viewer and the rendered views as pictures the model also sees', async () => {
    const page = await env.newPage();
    await openNewSession(env, page);
    env.fake.enqueue(
      { toolCalls: [{ name: 'mcp__navi_3d__compile_scad', arguments: { code: part, name: 'block' } }] },
      { toolCalls: [{ name: 'mcp__navi_3d__render_stl', arguments: { path: 'block.stl' } }] },
      { text: 'Here is the block with its hole.' },
    );
    await sendMessage(page, 'Design a block with a hole');
    await waitForText(page.getByTestId('assistant-message').last(), 'block with its hole');
    await waitForIdle(page);

    const cards = page.getByTestId('shared-files');
    await expectModelDrawn(cards.first().getByTestId('stl-viewer'));
    const views = cards.nth(1).getByTestId('shared-image');
    expect(await views.count()).toBe(3);
    for (const view of await views.all()) {
      await expect
        .poll(() => view.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
        .toBe(800);
    }
    expect(await cards.nth(1).textContent()).toMatch(
      /block-front\.png[\s\S]*block-top\.png[\s\S]*block-isometric\.png/,
    );
    await screenshot(page, 'laptop-light-navi-3d');

    // The model looked at all three views: one message with three images before its answer.
    const last = env.fake.requests.filter((r) => r.kind === 'chat').at(-1);
    const withImages = (last?.body.messages ?? []).filter(
      (m) => Array.isArray(m.images) && m.images.length > 0,
    );
    expect(withImages.map((m) => m.images?.length)).toEqual([3]);
    await page.close();
  });
});
