/**
 * What the server and tools see of the agent. `runStream` is the one entry point of a
 * persisted run; `run` and `runEphemeral` are built on the same loop.
 */
import type { AttachedFile } from '../protocol/commands.js';
import type { AgentEvent, RunTrigger } from '../protocol/events.js';
import type { ConfirmAnswer, ConfirmRequest } from '../tools/types.js';

export interface RunInput {
  /** The user's text (for a form submission, the JSON of its values). */
  content: string;
  /** Base64 images, without a data: prefix. */
  images?: string[];
  /** Files already uploaded to this session; the server checked they belong to it. */
  files?: AttachedFile[];
  trigger: RunTrigger;
  /** Form submissions reach the LLM but are not shown as a chat bubble (context-only). */
  contextOnly?: boolean;
  metadata?: Record<string, unknown>;
}

export interface RunOptions {
  runId: string;
  /** Aborting stops the run cooperatively: the LLM request is aborted and the partial answer saved. */
  signal: AbortSignal;
  /** Asks the user to approve a tool call. Headless runs pass one that always refuses. */
  confirm: (request: ConfirmRequest) => Promise<ConfirmAnswer>;
}

export interface AgentApi {
  /**
   * Streams the events of one run of `sessionId`. Never throws: failures end the stream with an
   * `error` event (`recoverable: false`). Exactly one of `stream_end`, `stream_stopped` or a
   * non-recoverable `error` ends the run; only after-run events (`isAfterRunEvent`: the
   * post-turn `context_compressed`) may follow it before the stream closes.
   */
  runStream(sessionId: string, input: RunInput, options: RunOptions): AsyncIterable<AgentEvent>;
}
