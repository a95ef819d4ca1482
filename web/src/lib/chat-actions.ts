/**
 * What deeply nested chat components (tool cards, forms, confirmations) may ask of the chat,
 * provided by ChatView instead of bubbling events through every level.
 */
import type { InjectionKey, Ref } from 'vue';
import type { ElicitationAction } from '../../../src/protocol/events.js';
import type { ElicitationView, SamplingView, ToolEntry } from './entries.js';

export interface ChatActions {
  /** Sends a form submission; false (and a visible error) when it could not be sent. */
  submitForm(card: ToolEntry, formId: string, values: Record<string, unknown>): boolean;
  answerConfirmation(card: ToolEntry, approved: boolean): void;
  /** Answers an MCP server's form; `values` only with `accept`. */
  answerElicitation(form: ElicitationView, action: ElicitationAction, values?: Record<string, unknown>): void;
  /** Lets an MCP server use Navi's model, or not. */
  answerSampling(sampling: SamplingView, approved: boolean): void;
  /** True while a run is active (forms wait for it to end). */
  running: Ref<boolean>;
  sessionId: Ref<string>;
}

export const chatActionsKey: InjectionKey<ChatActions> = Symbol('chat-actions');
