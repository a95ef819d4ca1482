import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { OpenAiParamError, openAiFailure, paramOf, runFailure } from './errors.js';

describe('OpenAI error shape', () => {
  it('names a field as OpenAI does', () => {
    expect(paramOf('/messages/0/content/2')).toBe('messages[0].content[2]');
    expect(paramOf('', 'model')).toBe('model');
    expect(paramOf('/stream_options', 'include_usage')).toBe('stream_options.include_usage');
    expect(paramOf('')).toBeNull();
  });

  it("gives Navi's codes lower-cased, the unknown model OpenAI's own, and a type per status", () => {
    expect(openAiFailure(new ApiError('RUN_ACTIVE')).body.error).toMatchObject({
      code: 'run_active',
      type: 'conflict_error',
      param: null,
    });
    const model = openAiFailure(new OpenAiParamError('AGENT_MODEL_NOT_FOUND', 'x', 'model'));
    expect(model).toMatchObject({
      status: 404,
      body: { error: { code: 'model_not_found', param: 'model' } },
    });
    expect(openAiFailure(new ApiError('TOKEN_WRONG')).body.error.type).toBe('authentication_error');
    expect(openAiFailure(new ApiError('FOREIGN_ORIGIN')).body.error.type).toBe('permission_error');
  });

  it('hides what went wrong inside and marks it for the log', () => {
    const failure = openAiFailure(new TypeError('secret internals'));
    expect(failure).toMatchObject({ status: 500, internal: true, body: { error: { type: 'server_error' } } });
    expect(failure.body.error.message).not.toContain('secret internals');
  });

  it("answers a failed run with 502 and its message, or with its code's status when the client is at fault", () => {
    expect(
      runFailure({
        type: 'error',
        recoverable: false,
        message: 'Ollama is not running',
        code: 'LLM_UNREACHABLE',
      }),
    ).toEqual({
      status: 502,
      body: {
        error: {
          message: 'Ollama is not running',
          type: 'server_error',
          code: 'llm_unreachable',
          param: null,
        },
      },
    });
    expect(runFailure({ type: 'error', recoverable: false, message: 'gone' })).toMatchObject({
      status: 502,
      body: { error: { code: 'run_failed' } },
    });
    expect(
      runFailure({ type: 'error', recoverable: false, message: 'deleted', code: 'SESSION_NOT_FOUND' }),
    ).toMatchObject({ status: 404, body: { error: { code: 'session_not_found', type: 'not_found_error' } } });
  });
});
