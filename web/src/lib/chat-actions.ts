/**
 * What deeply nested chat components (tool cards, forms, confirmations) may ask of the chat,
 * provided by ChatView instead of bubbling events through every level.
 */
import type { InjectionKey, Ref } from 'vue';
import type { ToolEntry } from './entries.js';

export interface ChatActions {
  /** Sends a form submission; false (and a visible error) when it could not be sent. */
  submitForm(card: ToolEntry, formId: string, values: Record<string, unknown>): boolean;
  answerConfirmation(card: ToolEntry, approved: boolean): void;
  /** True while a run is active (forms wait for it to end). */
  running: Ref<boolean>;
  sessionId: Ref<string>;
}

export const chatActionsKey: InjectionKey<ChatActions> = Symbol('chat-actions');
