/** Shapes of the REST API (DESIGN §5) shared by the server, the tests and the web client. */
import type { ToolArgs } from './events.js';

export interface SessionSummary {
  id: string;
  profile_id: string;
  title: string;
  pinned: boolean;
  created_at: string;
  last_active: string;
  context_token_count: number;
}

export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: ToolArgs;
}

/** A message as stored and as shown to clients (DESIGN §4). */
export interface SessionMessage {
  id: string;
  role: 'user' | 'assistant' | 'tool' | 'system';
  content: string | null;
  images?: string[];
  tool_calls?: ToolCallRecord[];
  tool_call_id?: string;
  name?: string;
  is_summary?: boolean;
  /** Reasoning of an assistant turn, kept for display. */
  thinking?: string;
  created_at: string;
  /**
   * Free-form hints: `interrupted` (a partial answer saved before the run ended),
   * `ui_component`, `published`, `is_form_submit`, `success`, `plan`…
   */
  metadata?: Record<string, unknown>;
}

export interface SessionDetail extends SessionSummary {
  messages: SessionMessage[];
  /** Context window of the session's backend (what `stream_end` reports); 0 when unknown. */
  max_context_tokens?: number;
}

export interface ProfileSummary {
  id: string;
  name: string;
  model: string | null;
  llm_backend: string | null;
  temperature: number;
  max_iterations: number;
  planning_enabled: boolean;
  enabled_tools: string[];
  scratchpad_sections: string[];
}

export interface ToolSummary {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  source: 'builtin' | 'user' | 'mcp';
  server?: string;
}

export interface UploadedFile {
  name: string;
  path: string;
  size: number;
  expires_at: string;
}

export interface MessageReply {
  content: string;
  stopped: boolean;
  tool_calls: { call_id: string; tool: string; args: ToolArgs; result: string; success: boolean }[];
}

export interface ErrorBody {
  error: string;
  code?: string;
}
