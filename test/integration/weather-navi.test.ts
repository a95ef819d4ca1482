/**
 * The shipped `weather` tool inside a real Navi: the repository's own tools/ folder and
 * profiles, a fake LLM that calls the tool, and a fake Open-Meteo behind WEATHER_*_URL. The
 * forecast must reach the model's next request; a profile that does not enable the tool is
 * neither offered it nor allowed to run it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeLlm } from '../fake-llm/index.js';
import { type FakeOpenMeteo, startFakeOpenMeteo } from '../support/fake-open-meteo.js';
import { type NaviHandle, repoRoot } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { chatRequests, postMessage } from '../support/rest.js';

interface Reply {
  content: string;
  tool_calls: { tool: string; success: boolean; result: string }[];
}

describe('weather in a running Navi', () => {
  let meteo: FakeOpenMeteo;
  let fake: FakeLlm;
  let navi: NaviHandle;
  let close: () => Promise<void> = async () => {};

  beforeAll(async () => {
    meteo = await startFakeOpenMeteo();
    ({ fake, navi, close } = await startNaviWithLlm({
      settings: {
        DEFAULT_LLM_BACKEND: 'openai',
        TOOLS_DIR: join(repoRoot, 'tools'),
        ...meteo.env(),
        WEATHER_UNITS: 'metric',
      },
    }));
  });
  afterEach(() => {
    fake.reset();
    meteo.reset();
  });
  afterAll(async () => {
    await close();
    await meteo.close();
  });

  async function ask(sessionId: string, text: string): Promise<Reply> {
    const res = await postMessage(navi, sessionId, text);
    expect(res.status).toBe(200);
    return (await res.json()) as Reply;
  }

  const offered = (i: number) => chatRequests(fake)[i]?.body.tools?.map((t) => t.function.name) ?? [];

  it('smart_home: the model calls weather and reads the forecast in its next request', async () => {
    const id = await navi.createSession('smart_home');
    fake.enqueue(
      { text: 'DIRECT' },
      {
        toolCalls: [
          { id: 'call_wx', name: 'weather', arguments: { location: 'Springfield, Illinois', days: 2 } },
        ],
      },
      { text: 'Overcast in Springfield today, light rain tomorrow.' },
    );
    const reply = await ask(id, 'What is the weather in Springfield, Illinois?');

    expect(reply.content).toBe('Overcast in Springfield today, light rain tomorrow.');
    expect(reply.tool_calls).toHaveLength(1);
    expect(reply.tool_calls[0]).toMatchObject({ tool: 'weather', success: true });
    expect(offered(1)).toContain('weather');

    const toolMessage = chatRequests(fake)[2]?.body.messages?.find((m) => m.role === 'tool');
    expect(toolMessage?.tool_call_id).toBe('call_wx');
    const forecast = String(toolMessage?.content);
    expect(forecast).toMatch(
      /^Weather for Springfield, Illinois, United States \(39\.8017, -89\.6437\), time zone America\/Chicago\n/,
    );
    expect(forecast).toContain('\nMon 2026-03-02: overcast, ');
    expect(forecast).toContain('\nTue 2026-03-03: light rain, ');
    expect(forecast).toContain('\nUnits: metric (°C, km/h, mm)');

    expect(meteo.requestsTo('geocoding')[0]?.params).toMatchObject({ name: 'Springfield', format: 'json' });
    expect(meteo.requestsTo('forecast')[0]?.params).toMatchObject({
      latitude: '39.80172',
      longitude: '-89.64371',
      forecast_days: '2',
      temperature_unit: 'celsius',
    });
  });

  it('smart_home: a failing service becomes a result the model reads, and the run goes on', async () => {
    const id = await navi.createSession('smart_home');
    meteo.setMode('forecast', '500');
    fake.enqueue(
      { text: 'DIRECT' },
      { toolCalls: [{ name: 'weather', arguments: { location: '52.52,13.41' } }] },
      { text: 'The weather service is down right now.' },
    );
    const reply = await ask(id, 'Weather at home?');
    expect(reply.tool_calls[0]).toMatchObject({ tool: 'weather', success: false });
    const toolMessage = chatRequests(fake)[2]?.body.messages?.find((m) => m.role === 'tool');
    expect(String(toolMessage?.content)).toContain(
      `The Open-Meteo forecast service at ${meteo.url}/v1/forecast failed (HTTP 500).`,
    );
    expect(reply.content).toBe('The weather service is down right now.');
  });

  it('smart_home: tool_manual gives the model the weather manual', async () => {
    const id = await navi.createSession('smart_home');
    fake.enqueue(
      { text: 'DIRECT' },
      { toolCalls: [{ name: 'tool_manual', arguments: { name: 'weather' } }] },
      { text: 'Read it.' },
    );
    await ask(id, 'How do I ask for the weather?');
    const toolMessage = chatRequests(fake)[2]?.body.messages?.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toBe(readFileSync(join(repoRoot, 'manuals', 'weather.md'), 'utf8'));
  });

  it('server_admin: weather is not offered, and a call to it is refused without a request', async () => {
    const id = await navi.createSession('server_admin');
    fake.enqueue(
      { text: 'DIRECT' },
      { toolCalls: [{ name: 'weather', arguments: { location: 'Berlin' } }] },
      { text: 'I cannot check the weather here.' },
    );
    const reply = await ask(id, 'Is it raining in Berlin?');
    expect(offered(1).length).toBeGreaterThan(0);
    expect(offered(1)).not.toContain('weather');
    expect(reply.tool_calls[0]).toMatchObject({ tool: 'weather', success: false });
    expect(reply.tool_calls[0]?.result).toContain('Tool "weather" is not enabled for profile "server_admin"');
    expect(meteo.requests).toEqual([]);
  });
});
