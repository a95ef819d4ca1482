/**
 * The web client's built files from `web/dist` at `/`. The client uses hash routing, so no
 * SPA fallback is needed. Vite puts content hashes in the names under `assets/`, so those are
 * cached for a year; `index.html` is revalidated every time so a new build shows up at once.
 * Without a build, `/` explains how to make one instead of answering 404.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';

export interface StaticOptions {
  webDir: string;
}

const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Navi</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>Navi is running</h1>
<p>The web client has not been built yet. Build it with:</p>
<pre>npm run build:web</pre>
<p>then reload this page. The REST API and the WebSocket work without it.</p>
</body></html>
`;

export const staticRoutes: FastifyPluginAsync<StaticOptions> = async (app, { webDir }) => {
  // The web client's files need no token: they hold no data, and the login page is among them.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true };
  });

  if (!existsSync(join(webDir, 'index.html'))) {
    app.get('/', async (_request, reply) => reply.type('text/html; charset=utf-8').send(notBuiltPage));
    return;
  }

  await app.register(fastifyStatic, {
    root: webDir,
    prefix: '/',
    index: 'index.html',
    // Our setHeaders decides caching per file.
    cacheControl: false,
    setHeaders: (res, path) => {
      res.setHeader('x-content-type-options', 'nosniff');
      const immutable = path.includes(`${join('/', 'assets', '/')}`);
      res.setHeader('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
};
