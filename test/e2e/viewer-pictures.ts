/**
 * Pictures of the inline 3D viewer for browser tests: its canvas as pixels, how much of it the
 * model covers and how varied it is, so "the model is drawn" is a measurement, not a glance.
 */
import type { Locator } from 'playwright-core';
import sharp from 'sharp';
import { expect } from 'vitest';

export interface Picture {
  width: number;
  height: number;
  channels: number;
  data: Buffer;
}

/** The viewer's canvas as pixels, the bottom strip (Reset button, hint) left out. */
export async function canvasPixels(canvas: Locator): Promise<Picture> {
  const png = await canvas.screenshot({ animations: 'disabled' });
  const meta = await sharp(png).metadata();
  const height = Math.floor((meta.height ?? 0) * 0.8);
  const { data, info } = await sharp(png)
    .extract({ left: 0, top: 0, width: meta.width ?? 0, height })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: info.channels, data };
}

/** Share of pixels in the model's (accent, blue) colour: the page behind it is grey. */
export function modelShare(picture: Picture): number {
  let count = 0;
  const pixels = picture.data.length / picture.channels;
  for (let i = 0; i < picture.data.length; i += picture.channels) {
    const r = picture.data[i] ?? 0;
    const b = picture.data[i + 2] ?? 0;
    if (b - r > 40) count += 1;
  }
  return count / pixels;
}

/** Standard deviation of the grey level: a flat or empty canvas has next to none. */
export function greyDeviation(picture: Picture): number {
  const greys: number[] = [];
  for (let i = 0; i < picture.data.length; i += picture.channels)
    greys.push(((picture.data[i] ?? 0) + (picture.data[i + 1] ?? 0) + (picture.data[i + 2] ?? 0)) / 3);
  const mean = greys.reduce((a, b) => a + b, 0) / greys.length;
  return Math.sqrt(greys.reduce((a, g) => a + (g - mean) ** 2, 0) / greys.length);
}

/** Mean absolute difference per channel between two pictures of the same size. */
export function difference(a: Picture, b: Picture): number {
  expect([a.width, a.height]).toEqual([b.width, b.height]);
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += Math.abs((a.data[i] ?? 0) - (b.data[i] ?? 0));
  return sum / a.data.length;
}

export async function expectModelDrawn(viewer: Locator): Promise<Picture> {
  // A viewer draws only near the visible part of the chat.
  await viewer.scrollIntoViewIfNeeded();
  await viewer.and(viewer.page().locator('[data-state="ready"]')).waitFor();
  const picture = await canvasPixels(viewer.getByTestId('stl-canvas'));
  expect(modelShare(picture)).toBeGreaterThan(0.05);
  expect(greyDeviation(picture)).toBeGreaterThan(20);
  return picture;
}
