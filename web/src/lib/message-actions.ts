/**
 * The actions on the chat's messages: copy, edit and resend a message the person typed,
 * regenerate the last answer, retry a failed turn. ChatView creates one controller per session
 * and provides it; each message's action bar (ChatMessage.vue) injects it.
 *
 * Edit and regenerate are commands on the session's socket. The server answers with a run that
 * starts with `history_rewound`; until then the editor stays open (a refusal, such as a message
 * summarised away, is shown in it, with the text kept).
 */
import { type ComputedRef, computed, type InjectionKey, type Ref, ref } from 'vue';
import type { EditCommand, RegenerateCommand } from '../../../src/protocol/commands.js';
import { isTerminalEvent, type ServerEvent } from '../../../src/protocol/events.js';
import { type ChatEntry, newKey, type UserEntry } from './entries.js';
import type { Timeline } from './timeline.js';

/** The entries that offer the actions of the last turn. */
export interface ActionTargets {
  /** The last answer after the last message of the person's: Regenerate. */
  lastAnswerKey: string | null;
  /** The failed turn after the last message of the person's: Retry. */
  retryKey: string | null;
}

export function actionTargets(entries: readonly ChatEntry[]): ActionTargets {
  const lastUser = entries.findLastIndex((entry) => entry.kind === 'user');
  const targets: ActionTargets = { lastAnswerKey: null, retryKey: null };
  if (lastUser < 0) return targets;
  for (let i = entries.length - 1; i > lastUser; i -= 1) {
    const entry = entries[i];
    if (entry?.kind === 'assistant' && !entry.streaming && targets.lastAnswerKey === null)
      targets.lastAnswerKey = entry.key;
    if (entry?.kind === 'error' && entry.failed && targets.retryKey === null) targets.retryKey = entry.key;
  }
  return targets;
}

/** Whether the person may edit this message: one they typed, not a recall's prompt. */
export function isEditable(entry: ChatEntry): entry is UserEntry {
  return entry.kind === 'user' && entry.recall === undefined;
}

/** The text the Copy action puts on the clipboard, or null when the entry has none. */
export function copyableText(entry: ChatEntry): string | null {
  if (entry.kind !== 'user' && entry.kind !== 'assistant') return null;
  return entry.text.trim() === '' ? null : entry.text;
}

/** The edit command for `entry` with new text: its images and files go with it again. */
export function editCommand(entry: UserEntry, messageId: string, content: string): EditCommand {
  return {
    type: 'edit',
    message_id: messageId,
    content,
    ...(entry.images.length ? { images: [...entry.images] } : {}),
    ...(entry.attachments?.length ? { files: entry.attachments.map((f) => ({ ...f })) } : {}),
  };
}

export interface MessageActions {
  running: Readonly<Ref<boolean>>;
  targets: ComputedRef<ActionTargets>;
  /** The key of the message being edited. */
  editing: Ref<string | null>;
  /** The edit was sent and its run has not started yet. */
  editBusy: Ref<boolean>;
  /** Why the last edit was not taken. */
  editError: Ref<string | null>;
  regenerate(): void;
  startEdit(entry: UserEntry): void;
  cancelEdit(): void;
  saveEdit(entry: UserEntry, content: string): Promise<void>;
}

export interface MessageActionsDeps {
  timeline: Timeline;
  running: Readonly<Ref<boolean>>;
  /** Sends on the session's socket; false when it is not connected. */
  send(command: RegenerateCommand | EditCommand): boolean;
  /** Reads the session again, giving the live entries their message ids. */
  syncIds(): Promise<void>;
  /** Shows a sentence in the chat's notice bar. */
  notify(text: string): void;
}

const NOT_CONNECTED =
  'Not connected to the server: nothing was sent. It reconnects by itself; try again then.';

export interface MessageActionsController extends MessageActions {
  /** Every event of the session, after the timeline applied it. */
  observe(event: ServerEvent): void;
  /**
   * True when `event` is the server's refusal of the edit this client sent and is waiting on (an
   * error outside any run): the editor shows it, so nothing else may take it for its own (the
   * composer's refused images, a form sent again).
   */
  ownsRefusal(event: ServerEvent): boolean;
}

export function createMessageActions(deps: MessageActionsDeps): MessageActionsController {
  const editing = ref<string | null>(null);
  const editBusy = ref(false);
  const editError = ref<string | null>(null);
  const targets = computed(() => actionTargets(deps.timeline.state.entries));
  /** The edit went out on the socket, and neither its rewind nor a refusal has come back yet. */
  let editSent = false;
  /** The run that started while the edit was out: the edit's, unless it rewinds nothing. */
  let editRun: string | undefined;

  function closeEditor(): void {
    editing.value = null;
    editBusy.value = false;
    editError.value = null;
    editSent = false;
    editRun = undefined;
  }

  function ownsRefusal(event: ServerEvent): boolean {
    return editSent && event.type === 'error' && event.run_id === undefined;
  }

  return {
    running: deps.running,
    targets,
    editing,
    editBusy,
    editError,
    regenerate(): void {
      if (deps.running.value) return;
      deps.timeline.expectRewind({ kind: 'regenerate' });
      if (!deps.send({ type: 'regenerate' })) {
        deps.timeline.expectRewind(null);
        deps.notify(NOT_CONNECTED);
      }
    },
    startEdit(entry: UserEntry): void {
      if (deps.running.value || !isEditable(entry)) return;
      editing.value = entry.key;
      editBusy.value = false;
      editError.value = null;
    },
    cancelEdit: closeEditor,
    async saveEdit(entry: UserEntry, content: string): Promise<void> {
      if (editBusy.value) return;
      if (deps.running.value) {
        editError.value = 'Navi is still answering: wait for it to finish or stop it, then save again.';
        return;
      }
      if (content.trim() === '' && entry.images.length === 0 && !entry.attachments?.length) {
        editError.value = 'The message is empty: write what Navi should answer, or press Cancel.';
        return;
      }
      editBusy.value = true;
      editError.value = null;
      if (entry.messageId === undefined) await deps.syncIds();
      const messageId = entry.messageId;
      if (messageId === undefined) {
        editBusy.value = false;
        editError.value =
          'This message is not saved on the server (it may have been refused), so it cannot be edited; send it as a new message instead.';
        return;
      }
      const replacement: UserEntry = {
        kind: 'user',
        key: newKey('user'),
        text: content,
        images: [...entry.images],
        files: [...entry.files],
        ...(entry.attachments?.length ? { attachments: entry.attachments.map((f) => ({ ...f })) } : {}),
      };
      deps.timeline.expectRewind({ kind: 'edit', entry, replacement });
      editSent = deps.send(editCommand(entry, messageId, content));
      if (!editSent) {
        deps.timeline.expectRewind(null);
        editBusy.value = false;
        editError.value = NOT_CONNECTED;
      }
    },
    ownsRefusal,
    observe(event: ServerEvent): void {
      if (event.type === 'history_rewound') {
        closeEditor();
      } else if (ownsRefusal(event) && event.type === 'error') {
        // The server refused the edit: the editor opens again with the text, and says why.
        editSent = false;
        editBusy.value = false;
        editError.value = event.message;
      } else if (editSent && event.type === 'stream_start') {
        editRun = event.run_id;
      } else if (editSent && editRun !== undefined && event.run_id === editRun && isTerminalEvent(event)) {
        // The edit's run ended before it rewound anything (the message was summarised meanwhile):
        // nothing changed, so the editor opens again with the text.
        editSent = false;
        editRun = undefined;
        editBusy.value = false;
        editError.value = event.type === 'error' ? event.message : 'The edit was not applied; save it again.';
      }
    },
  };
}

export const messageActionsKey: InjectionKey<MessageActions> = Symbol('message-actions');
