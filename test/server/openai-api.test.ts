/**
 * The OpenAI-compatible API (docs/openai-api.md) as the official `openai` npm client sees it, on a
 * real Navi with the fake LLM server: models, answers streamed and whole, reasoning and tool
 * activity, a tool that needs confirmation, which session a request runs in, and the client's
 * history reaching the model.
 */
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_HEADER } from '../../src/protocol/openai.js';
import { CLIENT_CANNOT_CONFIRM } from '../../src/server/agent-run.js';
import { CONVERSATION_OF_SESSION_KV_ID, CONVERSATIONS_KV_ID } from '../../src/server/openai/conversations.js';
import { createTestSchema, needsPostgres } from '../../src/store/test-engines.js';
import type { FakeLlm } from '../fake-llm/index.js';
import type { NaviHandle } from '../support/navi.js';
import { startNaviWithLlm } from '../support/navi-with-llm.js';
import { plainProfile, profilesDir } from '../support/profiles.js';
import { chatRequests, lastUserText } from '../support/rest.js';

const TOKEN = 'openai-test-token';

let fake: FakeLlm;
let navi: NaviHandle;
let close: () => Promise<void> = async () => {};
let client: OpenAI;

/** Sums a stream's chunks: content, reasoning, finish reason, usage and every chunk as it came. */
async function collect(stream: AsyncIterable<ChatCompletionChunk>) {
  const chunks: ChatCompletionChunk[] = [];
  let content = '';
  let reasoning = '';
  for await (const chunk of stream) {
    chunks.push(chunk);
    const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
    content += delta?.content ?? '';
    reasoning += delta?.reasoning_content ?? '';
  }
  const finish = chunks.map((c) => c.choices[0]?.finish_reason).find((f) => f);
  return { chunks, content, reasoning, finish, usage: chunks.at(-1)?.usage };
}

type Message = OpenAI.Chat.Completions.ChatCompletionMessage & { reasoning_content?: string };

// The conversation keys live in the key-value store, so both engines are run.
const engines = [
  'sqlite',
  ...(needsPostgres('the OpenAI-compatible API on PostgreSQL') ? ['postgres'] : []),
] as const;

describe.each(engines)('on %s', (engine) => {
  let schema: { url: string; drop(): Promise<void> } | undefined;

  beforeAll(async () => {
    if (engine === 'postgres') schema = await createTestSchema();
    ({ fake, navi, close } = await startNaviWithLlm({
      settings: {
        PROFILES_DIR: profilesDir([
          plainProfile,
          { ...plainProfile, id: 'careful', name: 'Careful', confirm_tools: ['todo'] },
        ]),
        DEFAULT_PROFILE: 'plain',
        CONTEXT_COMPRESSION_ENABLED: 'false',
        NAVI_API_TOKEN: TOKEN,
        ...(schema ? { DATABASE_URL: schema.url } : {}),
      },
    }));
    client = new OpenAI({ baseURL: `${navi.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await close();
    await schema?.drop();
  });

  describe('models', () => {
    it('lists each profile as navi:<id>, and reads one back', async () => {
      const page = await client.models.list();
      const ids = page.data.map((m) => m.id);
      expect(ids).toEqual(expect.arrayContaining(['navi:plain', 'navi:careful', 'navi:secretary']));
      const careful = page.data.find((m) => m.id === 'navi:careful');
      expect(careful).toMatchObject({ object: 'model', owned_by: 'navi', name: 'Careful' });
      expect(typeof careful?.created).toBe('number');
      expect(await client.models.retrieve('navi:careful')).toEqual(careful);
    });

    it('answers an unknown model with NotFoundError naming the models', async () => {
      const err = await client.models.retrieve('gpt-4o').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
      expect((err as Error).message).toContain('navi:plain');
    });
  });

  describe('answers', () => {
    it('answers whole: content, finish reason, usage, and the session in the header', async () => {
      fake.enqueue({ text: 'Four.', usage: { prompt: 120, completion: 7 } });
      const { data, response } = await client.chat.completions
        .create({ model: 'navi:plain', messages: [{ role: 'user', content: 'What is 2+2?' }] })
        .withResponse();
      expect(data.object).toBe('chat.completion');
      expect(data.model).toBe('navi:plain');
      expect(data.choices[0]?.message).toEqual({ role: 'assistant', content: 'Four.' });
      expect(data.choices[0]?.finish_reason).toBe('stop');
      expect(data.usage).toEqual({ prompt_tokens: 120, completion_tokens: 7, total_tokens: 127 });
      const sessionId = response.headers.get(SESSION_HEADER);
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const session = await navi.services.sessions.get(sessionId ?? '');
      expect(session?.profile_id).toBe('plain');
      const stored = await navi.services.sessions.getMessages(sessionId ?? '');
      expect(stored.map((m) => [m.role, m.content])).toEqual([
        ['user', 'What is 2+2?'],
        ['assistant', 'Four.'],
      ]);
      expect(lastUserText(chatRequests(fake)[0])).toBe('What is 2+2?');
    });

    it('streams: a role chunk first, the text as content, then stop, usage and [DONE]', async () => {
      fake.enqueue({
        text: 'Streaming is fun, one piece at a time.',
        chunkSize: 3,
        usage: { prompt: 50, completion: 9 },
      });
      const stream = await client.chat.completions.create({
        model: 'navi:plain',
        messages: [{ role: 'user', content: 'Stream please' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const got = await collect(stream);
      expect(got.chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
      expect(got.content).toBe('Streaming is fun, one piece at a time.');
      expect(got.reasoning).toBe('');
      expect(got.finish).toBe('stop');
      const last = got.chunks.at(-1);
      expect(last?.choices).toEqual([]);
      expect(last?.usage).toEqual({ prompt_tokens: 50, completion_tokens: 9, total_tokens: 59 });
      expect(
        got.chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === got.chunks[0]?.id),
      ).toBe(true);
    });

    it('sends no usage chunk unless asked', async () => {
      fake.enqueue({ text: 'Short.' });
      const got = await collect(
        await client.chat.completions.create({
          model: 'navi:plain',
          messages: [{ role: 'user', content: 'hi' }],
          stream: true,
        }),
      );
      expect(got.chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
      expect(got.chunks.some((c) => c.usage)).toBe(false);
    });

    it("puts the model's thinking in reasoning_content, streamed and whole", async () => {
      fake.enqueue({ thinking: 'The user greets me; greet back.', text: 'Hello!' });
      const got = await collect(
        await client.chat.completions.create({
          model: 'navi:plain',
          messages: [{ role: 'user', content: 'Hello' }],
          stream: true,
        }),
      );
      expect(got.reasoning).toBe('The user greets me; greet back.');
      expect(got.content).toBe('Hello!');

      fake.enqueue({ thinking: 'Still a greeting.', text: 'Hi again!' });
      const whole = await client.chat.completions.create({
        model: 'navi:plain',
        messages: [{ role: 'user', content: 'Hello again' }],
      });
      const message = whole.choices[0]?.message as Message;
      expect(message.reasoning_content).toBe('Still a greeting.');
      expect(message.content).toBe('Hi again!');
    });

    it("shows a tool call the agent makes as a line of reasoning, never as the client's tool_calls", async () => {
      fake.enqueue(
        { toolCalls: [{ name: 'todo', arguments: { action: 'set', tasks: ['buy milk'] } }] },
        { text: 'Your list holds one task.' },
      );
      const got = await collect(
        await client.chat.completions.create({
          model: 'navi:plain',
          messages: [{ role: 'user', content: 'Make me a todo list' }],
          stream: true,
        }),
      );
      expect(got.content).toBe('Your list holds one task.');
      expect(got.reasoning).toContain('→ todo {"action":"set","tasks":["buy milk"]}');
      expect(got.reasoning).toContain('✓ todo: 1. ');
      expect(got.chunks.some((c) => 'tool_calls' in (c.choices[0]?.delta ?? {}))).toBe(false);
      expect(got.finish).toBe('stop');
    });

    it('refuses a tool that needs confirmation, saying nobody here can approve it', async () => {
      fake.enqueue(
        { toolCalls: [{ name: 'todo', arguments: { action: 'read' } }] },
        { text: 'I was not allowed to read the list.' },
      );
      const whole = await client.chat.completions.create({
        model: 'navi:careful',
        messages: [{ role: 'user', content: 'Read my list' }],
      });
      const message = whole.choices[0]?.message as Message;
      expect(message.content).toBe('I was not allowed to read the list.');
      expect(message.reasoning_content).toContain('✗ todo');
      expect(message.reasoning_content).toContain('OpenAI-compatible API');
      // The model was told why, in the words the run uses.
      const toolResult = chatRequests(fake)[1]?.body.messages?.find((m) => m.role === 'tool');
      expect(String(toolResult?.content)).toContain(CLIENT_CANNOT_CONFIRM.openai);
    });
  });

  describe('images', () => {
    it('passes a data: image of a user message to the model', async () => {
      const png = Buffer.from('a tiny picture').toString('base64');
      fake.enqueue({ text: 'A tiny picture.' });
      const whole = await client.chat.completions.create({
        model: 'navi:plain',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
            ],
          },
        ],
      });
      expect(whole.choices[0]?.message.content).toBe('A tiny picture.');
      const user = chatRequests(fake)[0]?.body.messages?.findLast((m) => m.role === 'user');
      expect(user?.content).toBe('What is this?');
      expect(user?.images).toEqual([png]);
    });
  });

  describe('sessions', () => {
    async function ask(
      body: Partial<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming>,
      text: string,
    ): Promise<string> {
      fake.enqueue({ text: `answer to ${text}` });
      const { response } = await client.chat.completions
        .create({ model: 'navi:plain', messages: [{ role: 'user', content: text }], ...body })
        .withResponse();
      return response.headers.get(SESSION_HEADER) ?? '';
    }

    it('opens a new session for each request without a key', async () => {
      const a = await ask({}, 'one');
      const b = await ask({}, 'two');
      expect(a).not.toBe(b);
    });

    it('continues a session named by metadata.session_id', async () => {
      const id = await ask({}, 'first');
      expect(await ask({ metadata: { session_id: id } }, 'second')).toBe(id);
      const stored = await navi.services.sessions.getMessages(id);
      expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['first', 'second']);
      // The one new message continues what the session holds: the model read the first exchange.
      const sent = chatRequests(fake)[1]?.body.messages?.map((m) => m.content);
      expect(sent).toEqual(expect.arrayContaining(['first', 'answer to first', 'second']));
    });

    it('maps a key of the client (user, or metadata.session_id) to one session per model', async () => {
      const byUser = await ask({ user: 'alice-chat-7' }, 'hello');
      expect(await ask({ user: 'alice-chat-7' }, 'again')).toBe(byUser);
      expect(await ask({ metadata: { session_id: 'alice-chat-7' } }, 'once more')).toBe(byUser);
      // metadata.session_id wins over user.
      expect(await ask({ user: 'someone-else', metadata: { session_id: 'alice-chat-7' } }, 'and')).toBe(
        byUser,
      );
      expect(await ask({ user: 'someone-else' }, 'new')).not.toBe(byUser);
      fake.enqueue({ text: 'careful answer' });
      const { response } = await client.chat.completions
        .create({ model: 'navi:careful', messages: [{ role: 'user', content: 'x' }], user: 'alice-chat-7' })
        .withResponse();
      const careful = response.headers.get(SESSION_HEADER) ?? '';
      expect(careful).not.toBe(byUser);
      expect((await navi.services.sessions.get(careful))?.profile_id).toBe('careful');
    });

    it('gives a key whose session was deleted a new session', async () => {
      const first = await ask({ user: 'short-lived' }, 'hello');
      await navi.services.sessions.delete(first);
      const second = await ask({ user: 'short-lived' }, 'hello again');
      expect(second).not.toBe(first);
      expect(await navi.services.sessions.get(second)).toBeDefined();
    });

    it("removes a key's entry when its session is deleted (REST DELETE, as the web client does)", async () => {
      const kv = navi.services.kv;
      const gone = await ask({ user: 'deleted-by-rest' }, 'hello');
      const kept = await ask({ user: 'kept-key' }, 'hello');
      expect(await kv.get(CONVERSATIONS_KV_ID, 'plain/deleted-by-rest')).toEqual({ session_id: gone });
      const res = await fetch(`${navi.url}/sessions/${gone}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.status).toBe(204);
      expect(await kv.get(CONVERSATIONS_KV_ID, 'plain/deleted-by-rest')).toBeUndefined();
      expect(await kv.get(CONVERSATION_OF_SESSION_KV_ID, gone)).toBeUndefined();
      // Another conversation's key stays, and the deleted one's key starts afresh.
      expect(await kv.get(CONVERSATIONS_KV_ID, 'plain/kept-key')).toEqual({ session_id: kept });
      expect(await ask({ user: 'kept-key' }, 'again')).toBe(kept);
      expect(await ask({ user: 'deleted-by-rest' }, 'hello again')).not.toBe(gone);
    });

    it('puts two chats sent with one user into one session, each read with its own history; metadata.session_id parts them', async () => {
      const chat = (name: string, turns: string[], extra: Record<string, unknown>) => {
        fake.enqueue({ text: `${name} answer ${turns.length}` });
        const messages = turns.flatMap((t, i) => [
          { role: 'user' as const, content: t },
          ...(i < turns.length - 1
            ? [{ role: 'assistant' as const, content: `${name} answer ${i + 1}` }]
            : []),
        ]);
        return client.chat.completions.create({ model: 'navi:plain', messages, ...extra }).withResponse();
      };
      const sent = () =>
        chatRequests(fake)
          .at(-1)
          ?.body.messages?.slice(1)
          .map((m) => m.content);
      const user = { user: 'librechat-user-id' };
      const a1 = await chat('A', ['a one'], user);
      const b1 = await chat('B', ['b one'], user);
      const a2 = await chat('A', ['a one', 'a two'], user);
      const session = a1.response.headers.get(SESSION_HEADER);
      expect(b1.response.headers.get(SESSION_HEADER)).toBe(session);
      expect(a2.response.headers.get(SESSION_HEADER)).toBe(session);
      // The model read chat A alone; the session's display mixes both chats.
      expect(sent()).toEqual(['a one', 'A answer 1', 'a two']);
      const shown = await navi.services.sessions.getMessages(session ?? '');
      expect(shown.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
        'a one',
        'b one',
        'a two',
      ]);

      const c = await chat('C', ['c one'], { ...user, metadata: { session_id: 'chat-c' } });
      const d = await chat('D', ['d one'], { ...user, metadata: { session_id: 'chat-d' } });
      const parted = [c, d].map((r) => r.response.headers.get(SESSION_HEADER));
      expect(new Set([session, ...parted]).size).toBe(3);
    });

    it("follows a key's session whose profile the agent switched, where the session's id is refused", async () => {
      const id = await ask({ user: 'switches-profile' }, 'hello');
      fake.enqueue(
        { toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'careful' } }] },
        { text: 'Now careful.' },
      );
      await client.chat.completions.create({
        model: 'navi:plain',
        user: 'switches-profile',
        messages: [{ role: 'user', content: 'be careful from now on' }],
      });
      expect((await navi.services.sessions.get(id))?.profile_id).toBe('careful');
      // The client still asks for the model it chose: the conversation goes on in its session.
      expect(await ask({ user: 'switches-profile' }, 'still there?')).toBe(id);
      const stored = await navi.services.sessions.getMessages(id);
      expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
        'hello',
        'be careful from now on',
        'still there?',
      ]);
      // The session's own id names it strictly: another profile's model is refused.
      const err = await client.chat.completions
        .create({
          model: 'navi:plain',
          messages: [{ role: 'user', content: 'x' }],
          metadata: { session_id: id },
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as Error).message).toContain('navi:careful');
    });

    it("refuses a session of another profile, naming the session's model", async () => {
      const id = await ask({}, 'plain talk');
      const err = await client.chat.completions
        .create({
          model: 'navi:careful',
          messages: [{ role: 'user', content: 'x' }],
          metadata: { session_id: id },
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as Error).message).toContain('navi:plain');
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
    });
  });

  describe('history', () => {
    it('replaces what the model reads by the history the client sends when it differs', async () => {
      fake.enqueue({ text: 'Paris.' });
      const { response } = await client.chat.completions
        .create({ model: 'navi:plain', messages: [{ role: 'user', content: 'Capital of France?' }] })
        .withResponse();
      const id = response.headers.get(SESSION_HEADER) ?? '';

      // The client edited its first question and dropped a tool exchange of its own.
      fake.enqueue({ text: 'Rome has about 2.8 million people.' });
      await client.chat.completions.create({
        model: 'navi:plain',
        metadata: { session_id: id },
        messages: [
          { role: 'developer', content: 'Answer in one sentence.' },
          { role: 'user', content: 'Capital of Italy?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'Rome' },
          { role: 'assistant', content: 'Rome.' },
          { role: 'user', content: [{ type: 'text', text: 'How many people live there?' }] },
        ],
      });
      const sent = chatRequests(fake)[1]?.body.messages ?? [];
      const said = sent.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]);
      expect(said).toEqual([
        ['user', 'Capital of Italy?'],
        ['assistant', 'Rome.'],
        ['user', 'How many people live there?'],
      ]);
      expect(
        sent.some((m) => m.role === 'system' && String(m.content).includes('Answer in one sentence.')),
      ).toBe(true);
      expect(sent.some((m) => m.role === 'tool' || m.tool_calls)).toBe(false);
    });

    it('keeps the stored context when the history the client sends is the same conversation', async () => {
      fake.enqueue(
        { toolCalls: [{ name: 'todo', arguments: { action: 'set', tasks: ['call mum'] } }] },
        { text: 'Noted: call mum.' },
      );
      const first = await collect(
        await client.chat.completions.create({
          model: 'navi:plain',
          user: 'keeps-context',
          messages: [{ role: 'user', content: 'Remind me to call mum' }],
          stream: true,
        }),
      );
      fake.enqueue({ text: 'You have one task.' });
      await client.chat.completions.create({
        model: 'navi:plain',
        user: 'keeps-context',
        messages: [
          { role: 'user', content: 'Remind me to call mum' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: 'What is on my list?' },
        ],
      });
      // The model still sees its own tool call and result, which the client never had.
      const sent = chatRequests(fake)[2]?.body.messages ?? [];
      expect(sent.some((m) => m.role === 'tool')).toBe(true);
      expect(lastUserText(chatRequests(fake)[2])).toBe('What is on my list?');
    });
  });
});
