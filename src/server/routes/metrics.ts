/**
 * `GET /internal/metrics` (behind the token): the server process's memory, CPU, open files and
 * event-loop delay, read by `npm run bench` and `npm run soak` and useful to anyone watching a
 * Navi that has run for months (docs/protocol.md#metrics). `?reset=1` restarts the delay
 * histogram so the next reading covers a chosen stretch.
 */
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyPluginAsync } from 'fastify';
import type { ServerMetrics } from '../../protocol/rest.js';
import type { ServerContext } from '../context.js';

const NS_PER_MS = 1e6;

function openFds(): number | null {
  try {
    return readdirSync('/proc/self/fd').length - 1; // the listing's own descriptor
  } catch {
    return null;
  }
}

export const metricsRoutes: FastifyPluginAsync<ServerContext> = async (app, { runs }) => {
  // 10 ms resolution costs one timer tick per 10 ms; the histogram is fixed-size.
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  app.addHook('onClose', async () => delay.disable());

  app.get<{ Querystring: { reset?: unknown } }>(
    '/internal/metrics',
    async (request): Promise<ServerMetrics> => {
      const memory = process.memoryUsage();
      const cpu = process.cpuUsage();
      const counts = runs.counts();
      const metrics: ServerMetrics = {
        uptime_s: process.uptime(),
        rss_bytes: memory.rss,
        heap_used_bytes: memory.heapUsed,
        heap_total_bytes: memory.heapTotal,
        external_bytes: memory.external,
        open_fds: openFds(),
        cpu_user_ms: cpu.user / 1000,
        cpu_system_ms: cpu.system / 1000,
        event_loop_delay_ms: {
          p50: delay.percentile(50) / NS_PER_MS,
          p99: delay.percentile(99) / NS_PER_MS,
          max: delay.max / NS_PER_MS,
          mean: Number.isNaN(delay.mean) ? 0 : delay.mean / NS_PER_MS,
        },
        active_runs: counts.runs,
        websockets: counts.watchers,
      };
      if (request.query.reset === '1' || request.query.reset === 'true') delay.reset();
      return metrics;
    },
  );
};
