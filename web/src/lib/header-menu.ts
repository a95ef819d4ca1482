/**
 * A menu that drops from a button in the chat header (the model picker, the profile picker, the
 * export menu): a click outside closes it; in the menu, Escape closes it and gives the focus back
 * to the button, Tab leaves it, and the arrows, Home and End move between its items (`menuitem` or
 * `menuitemradio`, `moveFocus`); on the button, ArrowDown or ArrowUp opens it. On opening, the
 * checked item (or the first) takes the focus.
 *
 * The component binds the refs it returns: `root` on the element holding button and menu,
 * `menu` on the `role="menu"` element, `toggleButton` on the button.
 */
import { nextTick, onBeforeUnmount, type Ref, ref } from 'vue';
import { moveFocus } from './model-picker.js';

export interface HeaderMenuOptions {
  /** Whether the menu may open now; false leaves it closed. */
  canOpen?(): boolean;
  /** Runs as the menu opens (reset a message, start loading what it lists). */
  onOpen?(): void;
  /** The person moved through the items with a key. */
  onMove?(): void;
}

export interface HeaderMenu {
  open: Ref<boolean>;
  root: Ref<HTMLElement | null>;
  menu: Ref<HTMLElement | null>;
  toggleButton: Ref<HTMLButtonElement | null>;
  /** Focuses the checked item, or the first. */
  focusChecked(): void;
  show(): void;
  /** Closes the menu; `focusToggle` gives the focus back to the button. */
  hide(focusToggle?: boolean): void;
  toggle(): void;
  /** The `keydown` handler of the menu. */
  onMenuKey(event: KeyboardEvent): void;
  /** The `keydown` handler of the button. */
  onToggleKey(event: KeyboardEvent): void;
}

export function useHeaderMenu(options: HeaderMenuOptions = {}): HeaderMenu {
  const open = ref(false);
  const root = ref<HTMLElement | null>(null);
  const menu = ref<HTMLElement | null>(null);
  const toggleButton = ref<HTMLButtonElement | null>(null);

  function items(): HTMLElement[] {
    return Array.from(
      menu.value?.querySelectorAll<HTMLElement>('[role="menuitem"], [role="menuitemradio"]') ?? [],
    );
  }

  function focusChecked(): void {
    const all = items();
    (all.find((el) => el.getAttribute('aria-checked') === 'true') ?? all[0])?.focus();
  }

  function onOutside(event: PointerEvent): void {
    if (event.target instanceof Node && root.value?.contains(event.target)) return;
    hide();
  }

  function show(): void {
    if (options.canOpen && !options.canOpen()) return;
    open.value = true;
    document.addEventListener('pointerdown', onOutside, true);
    void nextTick(focusChecked);
    options.onOpen?.();
  }

  function hide(focusToggle = false): void {
    open.value = false;
    document.removeEventListener('pointerdown', onOutside, true);
    if (focusToggle) void nextTick(() => toggleButton.value?.focus());
  }

  function toggle(): void {
    if (open.value) hide();
    else show();
  }

  function onMenuKey(event: KeyboardEvent): void {
    if (event.key === 'Escape') {
      // Handled here: the chat's own Escape (stop the run) must not fire as well.
      event.preventDefault();
      hide(true);
      return;
    }
    if (event.key === 'Tab') {
      hide();
      return;
    }
    const all = items();
    const next = moveFocus(all.indexOf(document.activeElement as HTMLElement), event.key, all.length);
    if (next === null) return;
    event.preventDefault();
    options.onMove?.();
    all[next]?.focus();
  }

  function onToggleKey(event: KeyboardEvent): void {
    if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && !open.value) {
      event.preventDefault();
      show();
    }
  }

  onBeforeUnmount(() => hide());

  return { open, root, menu, toggleButton, focusChecked, show, hide, toggle, onMenuKey, onToggleKey };
}
