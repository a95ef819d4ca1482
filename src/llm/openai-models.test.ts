/** The `/models` dialects the fake server does not speak, read from answers as those servers give them. */
import { describe, expect, it } from 'vitest';
import { capabilitiesFromShow, listingsFromTags } from './ollama-models.js';
import { capabilitiesFromModels, listingsFromModels } from './openai-models.js';

const source = 'openai /models';

describe('capabilitiesFromModels', () => {
  it('reads llama-server: the trained and the slot context, and vision from its Ollama-style list', () => {
    const answer = (capabilities: string[]) => ({
      models: [{ name: 'qwen.gguf', model: 'qwen.gguf', capabilities }],
      object: 'list',
      data: [
        {
          id: 'qwen.gguf',
          aliases: ['qwen'],
          owned_by: 'llamacpp',
          meta: { n_ctx_train: 40960, n_ctx: 16384, size: 5_000_000_000 },
        },
      ],
    });
    expect(capabilitiesFromModels(answer(['completion', 'multimodal']), 'qwen', source)).toEqual({
      vision: true,
      contextLength: 16384,
      source,
    });
    expect(capabilitiesFromModels(answer(['completion']), 'qwen.gguf', source)).toEqual({
      vision: false,
      contextLength: 16384,
      source,
    });
  });

  it("reads Mistral's capabilities object and finds a model by its alias", () => {
    const answer = {
      object: 'list',
      data: [
        {
          id: 'mistral-small-2506',
          aliases: ['mistral-small-latest'],
          max_context_length: 131072,
          capabilities: { completion_chat: true, function_calling: true, vision: true, reasoning: false },
        },
        {
          id: 'codestral-2508',
          max_context_length: 256000,
          capabilities: { completion_chat: true, function_calling: false, vision: false },
        },
      ],
    };
    expect(capabilitiesFromModels(answer, 'mistral-small-latest', source)).toEqual({
      tools: true,
      thinking: false,
      vision: true,
      contextLength: 131072,
      source,
    });
    expect(capabilitiesFromModels(answer, 'codestral-2508', source)).toMatchObject({
      tools: false,
      vision: false,
    });
  });

  it("reads LM Studio's own list: a model not trained for tools may still call them", () => {
    const answer = {
      models: [
        {
          type: 'llm',
          key: 'google/gemma-3-4b',
          max_context_length: 131072,
          capabilities: { vision: true, trained_for_tool_use: false },
        },
        { type: 'llm', key: 'qwen/qwen3-8b', capabilities: { vision: false, trained_for_tool_use: true } },
      ],
    };
    expect(capabilitiesFromModels(answer, 'google/gemma-3-4b', source)).toEqual({
      vision: true,
      contextLength: 131072,
      source,
    });
    expect(capabilitiesFromModels(answer, 'qwen/qwen3-8b', source)).toEqual({
      tools: true,
      vision: false,
      source,
    });
  });

  it("reads a bare array (Together) and Groq's context_window", () => {
    const answer = [
      { id: 'meta-llama/Llama-3-8b-chat-hf', type: 'chat', context_length: 8192 },
      { id: 'llama-3.1-8b-instant', context_window: 131072 },
    ];
    expect(capabilitiesFromModels(answer, 'meta-llama/Llama-3-8b-chat-hf', source)).toEqual({
      contextLength: 8192,
      source,
    });
    expect(capabilitiesFromModels(answer, 'llama-3.1-8b-instant', source)).toEqual({
      contextLength: 131072,
      source,
    });
  });

  it('ignores values of the wrong type and hostile shapes', () => {
    const answer = {
      data: [
        null,
        'text',
        {
          id: 'odd',
          context_length: '4096',
          max_model_len: -1,
          meta: { n_ctx_train: 1.5 },
          supported_parameters: 'tools',
          architecture: { input_modalities: 'image' },
          capabilities: 42,
          type: { vlm: true },
        },
        { id: 'x', context_length: 2 ** 60 },
      ],
    };
    expect(capabilitiesFromModels(answer, 'odd', source)).toEqual({ source });
    expect(capabilitiesFromModels(answer, 'x', source)).toEqual({ source });
    for (const body of [null, 'list', 7, {}, { data: 'none' }]) {
      expect(capabilitiesFromModels(body, 'x', source)).toEqual({
        source: 'openai /models did not answer a list of models',
      });
    }
    expect(capabilitiesFromModels({ data: [] }, 'x', source)).toEqual({
      source: 'openai /models does not list model "x" (it lists none)',
    });
  });
});

describe('listingsFromModels and listingsFromTags', () => {
  it('names each model once, with its size where given', () => {
    expect(
      listingsFromModels({
        models: [{ name: 'a.gguf', model: 'a.gguf', size: '' }],
        data: [{ id: 'a.gguf', meta: { size: 1234 } }, { key: 'b', size_bytes: 99 }, { id: '' }, 5],
      }),
    ).toEqual([
      { name: 'a.gguf', sizeBytes: 1234 },
      { name: 'b', sizeBytes: 99 },
    ]);
    expect(listingsFromModels({ object: 'list' })).toBeUndefined();
  });

  it('reads /api/tags, skipping entries without a name', () => {
    expect(
      listingsFromTags({
        models: [
          { name: 'qwen3:8b', model: 'qwen3:8b', size: 5_225_387_923 },
          { model: 'gemma3:4b', size: -3 },
          { name: 'qwen3:8b', size: 1 },
          { size: 7 },
          'junk',
        ],
      }),
    ).toEqual([{ name: 'qwen3:8b', sizeBytes: 5_225_387_923 }, { name: 'gemma3:4b' }]);
    expect(listingsFromTags({ models: 'none' })).toBeUndefined();
    expect(listingsFromTags(null)).toBeUndefined();
  });
});

describe('capabilitiesFromShow', () => {
  it('reads nothing from answers that are not what /api/show gives', () => {
    expect(capabilitiesFromShow(null)).toEqual({});
    expect(capabilitiesFromShow(['tools'])).toEqual({});
    expect(capabilitiesFromShow({ capabilities: 'tools', model_info: [] })).toEqual({});
    expect(
      capabilitiesFromShow({
        capabilities: [1, 'tools', null],
        model_info: {
          'general.architecture': 'llama',
          'llama.context_length': 'long',
          'llama.rope.context_length': 9,
        },
      }),
    ).toEqual({ tools: true, thinking: false, vision: false });
  });
});
