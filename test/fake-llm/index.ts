/** The scripted fake LLM server used by every test and benchmark that needs a model. */
export { cosine, fakeEmbedding } from './embeddings.js';
export { closedPortUrl, collect } from './helpers.js';
export { startFakeLlm } from './server.js';
export type {
  EndpointFault,
  FakeLlm,
  FakeLlmOptions,
  FakeModelInfo,
  RecordedBody,
  RecordedMessage,
  RecordedRequest,
  ReplyScript,
  ScriptedReply,
  WireFormat,
} from './types.js';
