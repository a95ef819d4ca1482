/**
 * Asks before unsaved work is lost: closing or reloading the tab (the browser's own question),
 * and moving to another page of the app (a link, back or forward), which with hash routing is a
 * `hashchange`. That one must be seen before the app's router sees it, or the page would already
 * be gone: listeners of one event run in the order they were added, so this module adds its one
 * listener when it loads, before the app starts and its router listens. When the person stays,
 * it stops the event and puts the address back without a new history entry, so the page and
 * what was typed in it stay as they were.
 */

export interface LeaveGuardOptions {
  /** Whether leaving now would lose something. */
  dirty: () => boolean;
  /** The question asked; OK leaves, Cancel stays. */
  question: string;
  /** Asks the question (the browser's `confirm` by default). */
  ask?: (question: string) => boolean;
}

const guards = new Set<LeaveGuardOptions>();

function confirmWith(guard: LeaveGuardOptions): boolean {
  return (guard.ask ?? ((question: string) => window.confirm(question)))(guard.question);
}

function onHashChange(event: HashChangeEvent): void {
  for (const guard of guards) {
    if (!guard.dirty()) continue;
    if (confirmWith(guard)) return;
    event.stopImmediatePropagation();
    window.history.replaceState(window.history.state, '', event.oldURL);
    return;
  }
}

function onBeforeUnload(event: BeforeUnloadEvent): void {
  if (![...guards].some((guard) => guard.dirty())) return;
  event.preventDefault();
  // Older browsers ask only when returnValue is set.
  event.returnValue = '';
}

if (typeof window !== 'undefined') {
  window.addEventListener('hashchange', onHashChange, { capture: true });
  window.addEventListener('beforeunload', onBeforeUnload);
}

/** Starts guarding; the function returned stops. */
export function guardLeaving(options: LeaveGuardOptions): () => void {
  guards.add(options);
  return () => {
    guards.delete(options);
  };
}

/** Asks the question only when there is something to lose: true when it is fine to go on. */
export function mayDiscard(
  dirty: boolean,
  question: string,
  ask = (q: string) => window.confirm(q),
): boolean {
  return !dirty || ask(question);
}
