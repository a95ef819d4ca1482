/**
 * Rebuilds the chat from the display buffer of `GET /sessions/{id}`, so a reload shows what the
 * live events showed: thinking, the plan, tool cards with results, UI components, submitted
 * forms, interrupted answers and the claims an answer made that no tool call did.
 */
import type { SessionMessage } from '../../../src/protocol/rest.js';
import { type ChatEntry, imageSource, newKey, newToolEntry, type ToolEntry } from './entries.js';
import { failedTurnEntry } from './failed-turn.js';

/** What the `tool_call` event's `metadata` showed for this result, rebuilt from its fields. */
function resultMetadata(message: SessionMessage): Record<string, unknown> {
  return {
    ...message.tool_metadata,
    ...(message.ui_component ? { ui_component: message.ui_component } : {}),
    ...(message.published ? { published: message.published } : {}),
  };
}

export function entriesFromMessages(messages: SessionMessage[]): ChatEntry[] {
  const entries: ChatEntry[] = [];
  const cards = new Map<string, ToolEntry>();
  for (const message of messages) {
    if (message.role === 'user') {
      // A form submission kept in the display buffer is not a bubble: it marks its form as sent.
      if (message.kind === 'form_submit') {
        const submitted = submissionsFromContext([message]);
        for (const card of cards.values()) {
          const values = submitted.get(formIdOf(card) ?? '');
          if (values) card.formSubmitted = values;
        }
        continue;
      }
      entries.push({
        kind: 'user',
        key: newKey('user'),
        messageId: message.id,
        text: message.content ?? '',
        images: (message.images ?? []).map(imageSource),
        files: (message.attachments ?? []).map((file) => file.name),
        ...(message.attachments?.length ? { attachments: message.attachments } : {}),
        ...(message.recall ? { recall: message.recall } : {}),
      });
    } else if (message.role === 'assistant') {
      if (message.thinking) {
        entries.push({
          kind: 'thinking',
          key: newKey('thinking'),
          messageId: message.id,
          text: message.thinking,
          done: true,
        });
      }
      if (message.kind === 'plan') {
        entries.push({
          kind: 'plan',
          key: newKey('plan'),
          messageId: message.id,
          plan: message.content ?? '',
        });
        continue;
      }
      if (message.content && message.content.trim() !== '') {
        entries.push({
          kind: 'assistant',
          key: newKey('answer'),
          messageId: message.id,
          text: message.content,
          streaming: false,
          interrupted: message.interrupted === true,
          ...(message.unverified_claims?.length ? { unverifiedClaims: [...message.unverified_claims] } : {}),
        });
      } else if (message.interrupted === true && !message.tool_calls?.length) {
        entries.push({
          kind: 'assistant',
          key: newKey('answer'),
          messageId: message.id,
          text: '',
          streaming: false,
          interrupted: true,
        });
      }
      for (const call of message.tool_calls ?? []) {
        const card = newToolEntry(call.id, call.name, call.arguments ?? {}, false);
        // Without a tool message the call never finished (the run was stopped or failed).
        card.status = 'cancelled';
        card.messageId = message.id;
        cards.set(call.id, card);
        entries.push(card);
      }
    } else if (message.role === 'tool') {
      let card = message.tool_call_id ? cards.get(message.tool_call_id) : undefined;
      if (!card) {
        card = newToolEntry(message.tool_call_id ?? newKey('call'), message.name ?? 'tool', {}, false);
        entries.push(card);
      }
      // The result is the message a search finds for a card; the call's answer keeps its own entry.
      card.messageId = message.id;
      card.result = message.content ?? '';
      card.metadata = resultMetadata(message);
      card.status = message.success === false ? 'failed' : 'done';
      card.outcome = message.outcome;
    } else if (message.role === 'system' && message.kind === 'error') {
      entries.push(
        failedTurnEntry(message.error?.message ?? message.content ?? '', message.error?.code, message.id),
      );
    } else if (message.role === 'system' && message.content) {
      const text =
        message.kind === 'summary' ? 'Earlier messages were summarised for the model.' : message.content;
      entries.push({ kind: 'notice', key: newKey('notice'), messageId: message.id, text });
    }
  }
  return entries;
}

/** The `form_id` of a tool card's form component, if it carries one. */
export function formIdOf(card: ToolEntry): string | null {
  const component = card.metadata.ui_component;
  if (!component || typeof component !== 'object') return null;
  const { component: name, payload } = component as { component?: unknown; payload?: unknown };
  if (name !== 'form' || !payload || typeof payload !== 'object') return null;
  const formId = (payload as { form_id?: unknown }).form_id;
  return typeof formId === 'string' ? formId : null;
}

/**
 * Form submissions (`kind: 'form_submit'`) may be found in the LLM context as well as in the
 * display buffer; either list works.
 */
export function submissionsFromContext(messages: SessionMessage[]): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>();
  for (const message of messages) {
    if (message.kind === 'form_submit' && message.form_submit)
      found.set(message.form_submit.form_id, message.form_submit.values);
  }
  return found;
}
