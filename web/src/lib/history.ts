/**
 * Rebuilds the chat from the display buffer of `GET /sessions/{id}`, so a reload shows what the
 * live events showed: thinking, the plan, tool cards with results, UI components, submitted
 * forms and interrupted answers.
 */
import type { SessionMessage } from '@protocol/rest.js';
import {
  type ChatEntry,
  imageSource,
  newKey,
  newToolEntry,
  submittedValues,
  type ToolEntry,
} from './entries.js';

function fileNames(metadata: Record<string, unknown> | undefined): string[] {
  const files = metadata?.files;
  if (!Array.isArray(files)) return [];
  return files
    .map((file: unknown) =>
      file && typeof file === 'object' && typeof (file as { name?: unknown }).name === 'string'
        ? (file as { name: string }).name
        : null,
    )
    .filter((name): name is string => name !== null);
}

/** The server appends the attached files' paths for the model; the chat lists them apart. */
function withoutFileList(content: string): string {
  const at = content.lastIndexOf('\n\n[Attached files]\n');
  return at >= 0 ? content.slice(0, at) : content;
}

function toolSucceeded(message: SessionMessage): boolean {
  const success = message.metadata?.success;
  if (typeof success === 'boolean') return success;
  return true;
}

export function entriesFromMessages(messages: SessionMessage[]): ChatEntry[] {
  const entries: ChatEntry[] = [];
  const cards = new Map<string, ToolEntry>();
  for (const message of messages) {
    const metadata = message.metadata ?? {};
    if (message.role === 'user') {
      // A form submission kept in the display buffer is not a bubble: it marks its form as sent.
      if (metadata.is_form_submit === true || metadata.form_submit !== undefined) {
        const submitted = submissionsFromContext([message]);
        for (const card of cards.values()) {
          const values = submitted.get(formIdOf(card) ?? '');
          if (values) card.formSubmitted = values;
        }
        continue;
      }
      const files = fileNames(metadata);
      entries.push({
        kind: 'user',
        key: newKey('user'),
        text: files.length ? withoutFileList(message.content ?? '') : (message.content ?? ''),
        images: (message.images ?? []).map(imageSource),
        files,
      });
    } else if (message.role === 'assistant') {
      if (message.thinking) {
        entries.push({ kind: 'thinking', key: newKey('thinking'), text: message.thinking, done: true });
      }
      if (metadata.plan !== undefined && metadata.plan !== false) {
        const plan = typeof metadata.plan === 'string' ? metadata.plan : (message.content ?? '');
        entries.push({ kind: 'plan', key: newKey('plan'), plan });
        continue;
      }
      if (message.content && message.content.trim() !== '') {
        entries.push({
          kind: 'assistant',
          key: newKey('answer'),
          text: message.content,
          streaming: false,
          interrupted: metadata.interrupted === true,
        });
      } else if (metadata.interrupted === true && !message.tool_calls?.length) {
        entries.push({
          kind: 'assistant',
          key: newKey('answer'),
          text: '',
          streaming: false,
          interrupted: true,
        });
      }
      for (const call of message.tool_calls ?? []) {
        const card = newToolEntry(call.id, call.name, call.arguments ?? {}, false);
        // Without a tool message the call never finished (the run was stopped or failed).
        card.status = 'cancelled';
        cards.set(call.id, card);
        entries.push(card);
      }
    } else if (message.role === 'tool') {
      let card = message.tool_call_id ? cards.get(message.tool_call_id) : undefined;
      if (!card) {
        card = newToolEntry(message.tool_call_id ?? newKey('call'), message.name ?? 'tool', {}, false);
        entries.push(card);
      }
      card.result = message.content ?? '';
      card.metadata = metadata;
      card.status = toolSucceeded(message) ? 'done' : 'failed';
      card.formSubmitted = submittedValues(metadata);
    } else if (message.role === 'system' && message.content) {
      const text = message.is_summary ? 'Earlier messages were summarised for the model.' : message.content;
      entries.push({ kind: 'notice', key: newKey('notice'), text });
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
 * Form submissions are context-only messages (`metadata.form_submit: {form_id, values}`), so a
 * reload finds them in the LLM context rather than in the display buffer.
 */
export function submissionsFromContext(messages: SessionMessage[]): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>();
  for (const message of messages) {
    const submit = message.metadata?.form_submit;
    if (!submit || typeof submit !== 'object') continue;
    const { form_id: formId, values } = submit as { form_id?: unknown; values?: unknown };
    if (typeof formId === 'string' && values && typeof values === 'object') {
      found.set(formId, values as Record<string, unknown>);
    }
  }
  return found;
}
