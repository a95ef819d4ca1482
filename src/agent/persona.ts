/** The global personality prompt: NAVI_PERSONA_FILE, else NAVI_PERSONA, else the built-in one. */
import { readFileSync } from 'node:fs';
import type { Settings } from '../config/settings.js';

export const DEFAULT_PERSONA = [
  "You are Navi, a personal AI agent running on your user's own machine.",
  'You are warm, direct and practical. You act through the tools you are given rather than guessing,',
  'say plainly when something failed or when you are unsure, and never invent tool results.',
  'Answer in the language the user writes in. Keep answers as short as the question allows.',
].join(' ');

export function loadPersona(settings: Pick<Settings, 'NAVI_PERSONA' | 'NAVI_PERSONA_FILE'>): string {
  if (settings.NAVI_PERSONA_FILE.trim() !== '') {
    try {
      const text = readFileSync(settings.NAVI_PERSONA_FILE, 'utf8').trim();
      if (text !== '') return text;
    } catch (err) {
      throw new Error(
        `NAVI_PERSONA_FILE=${settings.NAVI_PERSONA_FILE}: cannot read it (${(err as Error).message})`,
      );
    }
  }
  if (settings.NAVI_PERSONA.trim() !== '') return settings.NAVI_PERSONA.replace(/\\n/g, '\n').trim();
  return DEFAULT_PERSONA;
}
