/** The seam between the agent loop and the compression algorithm (src/agent/compression.ts). */
import type { LlmBackend, TokenUsage } from '../llm/types.js';
import type { StoredMessage } from '../store/types.js';

export interface CompressionRequest {
  context: StoredMessage[];
  keepRecent: number;
  backend: LlmBackend;
  model: string;
  /** The window the summariser call uses, clamped to the model's. */
  contextWindow?: number;
  temperature: number;
  signal: AbortSignal;
  /**
   * Told the tokens of each summariser call, as reported or estimated, whether the call ended
   * well or not (a failed one as what it sent), for the run's usage.
   */
  countCall?(usage: TokenUsage): void;
}

export interface CompressionResult {
  summary: StoredMessage;
  /** First context message kept verbatim; null when the summary replaces everything. */
  firstKeptId: string | null;
}

/** Resolves to null when there is nothing to compress; rejects when the summariser failed. */
export type ContextCompressor = (request: CompressionRequest) => Promise<CompressionResult | null>;
