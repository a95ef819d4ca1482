/**
 * linkedom's `parseHTML`, loaded on first use. linkedom costs about 26 MB of memory, and a
 * shipped server that is started with Navi but seldom asked to read HTML should not carry it
 * while idle. Its CommonJS build can be required synchronously, so the parsers that use it stay
 * synchronous.
 */
import { createRequire } from 'node:module';

type Linkedom = typeof import('linkedom');

let linkedom: Linkedom | undefined;

export function parseHTML(html: string): ReturnType<Linkedom['parseHTML']> {
  linkedom ??= createRequire(import.meta.url)('linkedom') as Linkedom;
  return linkedom.parseHTML(html);
}
