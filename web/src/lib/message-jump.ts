/**
 * Opening a chat at one message (`#/sessions/<id>?m=<message id>`, what a search hit links to):
 * once the history is on the page, the message's element (`[data-message-id]`) is scrolled to
 * the middle of the view and briefly highlighted. A message older than the pages shown is read
 * first (lib/history-pages.ts). When the session has no such message (it was edited away, or the
 * link is wrong), the chat says so instead.
 */
import { nextTick, type Ref, watch } from 'vue';
import type { LoadUntil } from './history-pages.js';

/** How long the highlight of the message jumped to lasts. */
export const JUMP_HIGHLIGHT_MS = 2400;

export interface MessageJumpOptions {
  /** The message the address opens this chat at (the app's route, `?m=`), if any. */
  messageId: Ref<string | null>;
  /** The element holding the chat's messages. */
  container: Ref<HTMLElement | null>;
  /** The element that scrolls them. */
  scroller: Ref<HTMLElement | null>;
  /** True once the history is on the page. */
  ready: Ref<boolean>;
  /** Reads older pages of the history until the message is on the page. */
  loadUntil(id: string): Promise<LoadUntil>;
  /** Tells the person the message is not there. */
  onMissing(text: string): void;
}

/**
 * Scrolls to and highlights the message with `id` inside `container`; false when it is not there.
 * The element keeps `data-jump-target` until the next jump, so the jump can be checked.
 * `scroller` is told at once that it moved: the chat keeps its end in view while it believes
 * the view is there, and the browser's own scroll event would come a frame too late to stop a
 * resize in between from pulling the view back down.
 */
export function jumpToMessage(container: HTMLElement, scroller: HTMLElement | null, id: string): boolean {
  const target = Array.from(container.querySelectorAll<HTMLElement>('[data-message-id]')).find(
    (el) => el.dataset.messageId === id,
  );
  if (!target) return false;
  for (const old of container.querySelectorAll('[data-jump-target]')) old.removeAttribute('data-jump-target');
  target.setAttribute('data-jump-target', '');
  target.scrollIntoView({ block: 'center' });
  scroller?.dispatchEvent(new Event('scroll'));
  // An animation, not a class: the element belongs to another component's scoped styles.
  const theme = getComputedStyle(document.documentElement);
  const accent = theme.getPropertyValue('--accent').trim() || '#3f5bd8';
  const soft = theme.getPropertyValue('--accent-soft').trim() || '#e8ecfc';
  target.animate?.(
    [
      { boxShadow: `0 0 0 3px ${accent}`, backgroundColor: soft },
      { boxShadow: '0 0 0 3px transparent', backgroundColor: 'transparent' },
    ],
    { duration: JUMP_HIGHLIGHT_MS, easing: 'ease-in' },
  );
  return true;
}

/**
 * Jumps when the history is ready and whenever the URL names another message of this chat.
 * Each link jumps once: reloading the history after a reconnect does not pull the view back.
 */
export function useMessageJump(options: MessageJumpOptions): void {
  let done: string | null = null;
  watch(
    [options.messageId, options.ready],
    async ([id, ready], previous) => {
      // A link followed anew (the address named something else meanwhile) jumps again.
      if (id !== previous?.[0]) done = null;
      if (!id || !ready || done === id) return;
      done = id;
      // After the chat's own scroll to the bottom that follows loading the history.
      const jump = async (): Promise<boolean> => {
        await nextTick();
        await new Promise<void>((resolve) => requestAnimationFrame(() => resolve()));
        const container = options.container.value;
        return container !== null && jumpToMessage(container, options.scroller.value, id);
      };
      if (await jump()) return;
      const found = await options.loadUntil(id);
      if (found === 'found' && (await jump())) return;
      options.onMissing(
        found === 'failed'
          ? 'The message this link points to is further back, and the earlier messages could not be loaded: reload the page to try again.'
          : 'The message this link points to is not in this conversation (it may have been edited or regenerated since).',
      );
    },
    { immediate: true },
  );
}
