/**
 * The web client's keyboard shortcuts: one list, which the help dialog shows and the key
 * handler matches, so the two never disagree.
 *
 * The modifier is Cmd on a Mac and Ctrl elsewhere. The combinations are ones a page may take
 * over (Ctrl+N, Ctrl+T and Ctrl+W belong to the browser and never reach it); `?` only counts
 * outside text fields, so it can still be typed.
 */

export type ShortcutAction = 'new-chat' | 'search' | 'help';

export interface ShortcutHelp {
  /** The keys to press together, for display (`['Ctrl', 'Shift', 'O']`). */
  keys: string[][];
  description: string;
}

/** The parts of a KeyboardEvent the matching reads. */
export type KeyLike = Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'shiftKey' | 'altKey'>;

/** Whether the browser runs on an Apple platform, where Cmd is the modifier. */
export function isApplePlatform(nav: { platform?: string; userAgent?: string } = navigator): boolean {
  return /Mac|iPhone|iPad|iPod/i.test(nav.platform || nav.userAgent || '');
}

/** Every shortcut, for the help dialog. */
export function shortcutHelp(apple: boolean): ShortcutHelp[] {
  const mod = apple ? '⌘' : 'Ctrl';
  return [
    { keys: [[mod, 'Shift', 'O']], description: 'Start a new conversation' },
    { keys: [[mod, 'K']], description: 'Search conversations' },
    { keys: [['Esc']], description: 'Stop the answer being written' },
    { keys: [['Enter']], description: 'Send the message (Shift+Enter starts a new line)' },
    { keys: [['?'], [mod, '/']], description: 'Show these shortcuts' },
  ];
}

/** Whether keys typed at `target` are text: a text field, a text area or editable content. */
export function isTextField(target: unknown): boolean {
  if (typeof target !== 'object' || target === null) return false;
  const el = target as { tagName?: unknown; type?: unknown; isContentEditable?: unknown };
  if (el.isContentEditable === true) return true;
  const tag = typeof el.tagName === 'string' ? el.tagName.toUpperCase() : '';
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag !== 'INPUT') return false;
  const type = typeof el.type === 'string' ? el.type.toLowerCase() : 'text';
  return !['button', 'checkbox', 'radio', 'submit', 'reset', 'range', 'color', 'file', 'image'].includes(
    type,
  );
}

/** The shortcut a key press means, if any. */
export function matchShortcut(event: KeyLike, apple: boolean, inTextField: boolean): ShortcutAction | null {
  const mod = apple ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey;
  const key = event.key.toLowerCase();
  if (mod && !event.altKey) {
    if (event.shiftKey && key === 'o') return 'new-chat';
    if (!event.shiftKey && key === 'k') return 'search';
    if (key === '/' || key === '?') return 'help';
    return null;
  }
  if (event.key === '?' && !event.ctrlKey && !event.metaKey && !event.altKey && !inTextField) return 'help';
  return null;
}

/**
 * Whether Escape should stop the run: nothing else took the key (an editor, a menu), no dialog
 * is open, and the focus is in the chat, or nowhere (the composer gives up focus while it is
 * locked during a run).
 */
export function escapeStopsRun(
  event: Pick<KeyboardEvent, 'key' | 'defaultPrevented'>,
  focus: { inChat: boolean; nowhere: boolean; dialogOpen: boolean },
): boolean {
  if (event.key !== 'Escape' || event.defaultPrevented || focus.dialogOpen) return false;
  return focus.inChat || focus.nowhere;
}

export interface ShortcutHandlers {
  newChat(): void;
  focusSearch(): boolean;
  openHelp(): void;
}

/** Listens for the shortcuts on `window`; returns the function that stops listening. */
export function installShortcuts(handlers: ShortcutHandlers): () => void {
  const apple = isApplePlatform();
  const onKey = (event: KeyboardEvent): void => {
    if (event.defaultPrevented || event.repeat) return;
    // A dialog has the page to itself until it closes.
    if (document.querySelector('dialog[open]')) return;
    const action = matchShortcut(event, apple, isTextField(event.target));
    if (action === null) return;
    if (action === 'search') {
      // Without the search box the browser keeps its own use of the keys.
      if (handlers.focusSearch()) event.preventDefault();
      return;
    }
    event.preventDefault();
    if (action === 'new-chat') handlers.newChat();
    else handlers.openHelp();
  };
  window.addEventListener('keydown', onKey);
  return () => window.removeEventListener('keydown', onKey);
}

/** Where the focus is, for `escapeStopsRun`. */
export function focusOf(chat: Element | null): { inChat: boolean; nowhere: boolean; dialogOpen: boolean } {
  const active = document.activeElement;
  return {
    inChat: chat !== null && active !== null && chat.contains(active),
    nowhere: active === null || active === document.body,
    dialogOpen: document.querySelector('dialog[open]') !== null,
  };
}
