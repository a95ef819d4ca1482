/**
 * The web client's keyboard shortcuts (web/src/lib/shortcuts.ts): which key press means which
 * action on a Mac and elsewhere, `?` only outside text fields, Escape only when nothing else took
 * it, and the help list naming every action the handler knows.
 */
import { describe, expect, it } from 'vitest';
import {
  escapeStopsRun,
  isApplePlatform,
  isTextField,
  type KeyLike,
  matchShortcut,
  shortcutHelp,
} from '../../web/src/lib/shortcuts.js';

function key(k: string, mods: Partial<Omit<KeyLike, 'key'>> = {}): KeyLike {
  return { key: k, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods };
}

describe('matchShortcut', () => {
  it('takes Ctrl elsewhere and Cmd on a Mac, never the other one', () => {
    expect(matchShortcut(key('O', { ctrlKey: true, shiftKey: true }), false, false)).toBe('new-chat');
    expect(matchShortcut(key('O', { metaKey: true, shiftKey: true }), true, false)).toBe('new-chat');
    // Ctrl+K on a Mac deletes to the end of the line in text fields: it stays the system's.
    expect(matchShortcut(key('k', { ctrlKey: true }), true, true)).toBeNull();
    expect(matchShortcut(key('k', { metaKey: true }), false, false)).toBeNull();
    expect(matchShortcut(key('k', { ctrlKey: true }), false, true)).toBe('search');
    expect(matchShortcut(key('K', { metaKey: true }), true, false)).toBe('search');
  });

  it('leaves combinations with other modifiers, and plain letters, alone', () => {
    expect(matchShortcut(key('o', { ctrlKey: true }), false, false)).toBeNull();
    expect(matchShortcut(key('O', { ctrlKey: true, shiftKey: true, altKey: true }), false, false)).toBeNull();
    expect(matchShortcut(key('k', { ctrlKey: true, shiftKey: true }), false, false)).toBeNull();
    expect(matchShortcut(key('k', { ctrlKey: true, metaKey: true }), false, false)).toBeNull();
    expect(matchShortcut(key('o'), false, false)).toBeNull();
    expect(matchShortcut(key('Escape'), false, false)).toBeNull();
  });

  it('opens the help with ? outside text fields, and with Ctrl+/ anywhere', () => {
    expect(matchShortcut(key('?', { shiftKey: true }), false, false)).toBe('help');
    expect(matchShortcut(key('?', { shiftKey: true }), false, true)).toBeNull();
    expect(matchShortcut(key('/', { ctrlKey: true }), false, true)).toBe('help');
    expect(matchShortcut(key('/', { metaKey: true }), true, true)).toBe('help');
    expect(matchShortcut(key('/'), false, false)).toBeNull();
  });
});

describe('isTextField', () => {
  it('knows where typing is text', () => {
    expect(isTextField({ tagName: 'TEXTAREA' })).toBe(true);
    expect(isTextField({ tagName: 'INPUT', type: 'search' })).toBe(true);
    expect(isTextField({ tagName: 'input' })).toBe(true);
    expect(isTextField({ tagName: 'DIV', isContentEditable: true })).toBe(true);
    expect(isTextField({ tagName: 'INPUT', type: 'checkbox' })).toBe(false);
    expect(isTextField({ tagName: 'BUTTON' })).toBe(false);
    expect(isTextField({ tagName: 'BODY' })).toBe(false);
    expect(isTextField(null)).toBe(false);
    expect(isTextField('TEXTAREA')).toBe(false);
  });
});

describe('escapeStopsRun', () => {
  const escapeKey = { key: 'Escape', defaultPrevented: false };
  it('stops when the focus is in the chat or nowhere', () => {
    expect(escapeStopsRun(escapeKey, { inChat: true, nowhere: false, dialogOpen: false })).toBe(true);
    expect(escapeStopsRun(escapeKey, { inChat: false, nowhere: true, dialogOpen: false })).toBe(true);
  });
  it('does not when the focus is elsewhere, a dialog is open, or something else took the key', () => {
    expect(escapeStopsRun(escapeKey, { inChat: false, nowhere: false, dialogOpen: false })).toBe(false);
    expect(escapeStopsRun(escapeKey, { inChat: true, nowhere: false, dialogOpen: true })).toBe(false);
    expect(
      escapeStopsRun(
        { key: 'Escape', defaultPrevented: true },
        { inChat: true, nowhere: false, dialogOpen: false },
      ),
    ).toBe(false);
    expect(
      escapeStopsRun(
        { key: 'Enter', defaultPrevented: false },
        { inChat: true, nowhere: true, dialogOpen: false },
      ),
    ).toBe(false);
  });
});

describe('the help list', () => {
  it('names each shortcut with the platform’s modifier', () => {
    const others = shortcutHelp(false);
    const apple = shortcutHelp(true);
    expect(others.map((s) => s.description)).toEqual(apple.map((s) => s.description));
    expect(others[0]?.keys).toEqual([['Ctrl', 'Shift', 'O']]);
    expect(apple[0]?.keys).toEqual([['⌘', 'Shift', 'O']]);
    const all = others.map((s) => s.description).join('\n');
    for (const word of ['new conversation', 'Search', 'Stop', 'shortcuts']) expect(all).toContain(word);
  });

  it('tells Apple platforms apart', () => {
    expect(isApplePlatform({ platform: 'MacIntel' })).toBe(true);
    expect(isApplePlatform({ platform: '', userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0)' })).toBe(
      true,
    );
    expect(isApplePlatform({ platform: 'Linux x86_64' })).toBe(false);
    expect(isApplePlatform({})).toBe(false);
  });
});
