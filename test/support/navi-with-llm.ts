/**
 * A fake LLM server and a Navi pointed at it, started together: the set-up nearly every
 * integration test begins with.
 */
import { type FakeLlm, type FakeLlmOptions, startFakeLlm } from '../fake-llm/index.js';
import { type NaviHandle, type StartOptions, startNavi } from './navi.js';

export interface NaviWithLlm {
  fake: FakeLlm;
  navi: NaviHandle;
  /** Closes Navi, then the fake LLM. */
  close(): Promise<void>;
}

/**
 * Starts the fake LLM (configured by `options.llm`), then Navi with both backends' URLs
 * (OLLAMA_HOST, OPENAI_BASE_URL) set to it; `options.settings` come on top (the backend,
 * profiles…). If Navi fails to start, the fake LLM is closed again and the error thrown.
 */
export async function startNaviWithLlm(
  options: StartOptions & { llm?: FakeLlmOptions } = {},
): Promise<NaviWithLlm> {
  const { llm, ...start } = options;
  const fake = await startFakeLlm(llm);
  let navi: NaviHandle;
  try {
    navi = await startNavi({
      ...start,
      settings: { OLLAMA_HOST: fake.ollamaUrl, OPENAI_BASE_URL: fake.openaiUrl, ...options.settings },
    });
  } catch (err) {
    await fake.close();
    throw err;
  }
  return {
    fake,
    navi,
    async close() {
      await navi.close();
      await fake.close();
    },
  };
}
