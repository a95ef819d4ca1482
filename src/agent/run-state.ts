/** The state one run carries through the loop: passed explicitly, never held in globals. */
import type { Profile } from '../config/profiles.js';
import type { AgentEvent } from '../protocol/events.js';
import type { StoredMessage } from '../store/types.js';
import type { ConfirmAnswer, ConfirmRequest } from '../tools/types.js';
import type { Transcript } from './transcript.js';

export interface RunState {
  runId: string;
  transcript: Transcript;
  /** The context as the LLM will see it; kept in memory for the run, persisted as it grows. */
  context: StoredMessage[];
  profile: Profile;
  signal: AbortSignal;
  confirm: (request: ConfirmRequest) => Promise<ConfirmAnswer>;
  emit: (event: AgentEvent) => void;
  isSubagent: boolean;
  depth: number;
  /** Parent's system prompt, for subagents spawned with `inherit_system_prompt`. */
  basePrompt?: string;
  /** Tokens the context holds after the last LLM call. */
  tokens: number;
}

export type LoopOutcome =
  | { kind: 'end'; content: string }
  | { kind: 'stopped'; content: string }
  | { kind: 'error'; message: string };
