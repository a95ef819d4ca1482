/**
 * The model picker's list (docs/web.md#the-model-picker): the models of every backend grouped
 * by backend, the session's own choice marked, and the keys that move through it.
 */

import type { LlmBackendId, LlmModelList } from '../../../src/protocol/llm.js';
import type { ModelChoice } from '../../../src/protocol/rest.js';
import { BACKEND_LABELS, modelSize } from './setup.js';

export interface PickerOption {
  key: string;
  backend: LlmBackendId;
  model: string;
  /** "2.1 GB" when the backend reports it. */
  size: string;
  /** The backend's default model. */
  isDefault: boolean;
  /** The session uses this model. */
  current: boolean;
}

export interface PickerGroup {
  backend: LlmBackendId;
  label: string;
  options: PickerOption[];
  /** Why the backend could not list its models (shown muted under its name). */
  problem: string | null;
}

const ORDER: readonly LlmBackendId[] = ['ollama', 'openai', 'llamacpp'];

export function sameChoice(a: ModelChoice | null | undefined, b: ModelChoice | null | undefined): boolean {
  return !!a && !!b && a.backend === b.backend && a.model === b.model;
}

export function optionKey(choice: ModelChoice): string {
  return `${choice.backend}\u0000${choice.model}`;
}

/**
 * The groups to show, in a fixed backend order. A backend with neither models nor a problem is
 * left out. The session's choice is listed even when its backend no longer lists it (its server
 * is down, the model was removed), so the picker always shows what the session uses.
 */
export function pickerGroups(list: LlmModelList, current: ModelChoice | null): PickerGroup[] {
  const groups: PickerGroup[] = [];
  for (const backend of ORDER) {
    const options: PickerOption[] = [];
    const seen = new Set<string>();
    for (const m of list.models) {
      if (m.backend !== backend || seen.has(m.model)) continue;
      seen.add(m.model);
      options.push({
        key: optionKey(m),
        backend,
        model: m.model,
        size: m.size_bytes !== undefined ? modelSize(m.size_bytes) : '',
        isDefault: m.is_default,
        current: sameChoice(m, current),
      });
    }
    if (current && current.backend === backend && !seen.has(current.model)) {
      options.unshift({
        key: optionKey(current),
        backend,
        model: current.model,
        size: '',
        isDefault: false,
        current: true,
      });
    }
    const problems = list.problems.filter((p) => p.backend === backend).map((p) => p.message);
    if (options.length === 0 && problems.length === 0) continue;
    groups.push({ backend, label: BACKEND_LABELS[backend], options, problem: problems.join(' ') || null });
  }
  return groups;
}

/** What the picker's button says: the session's model, or that the profile decides. */
export function choiceLabel(choice: ModelChoice | null | undefined): string {
  return choice ? choice.model : 'Profile default';
}

/**
 * The item to focus after `key` in a menu of `count` items with `index` focused (-1: none):
 * arrows wrap around, Home and End jump; null for any other key.
 */
export function moveFocus(index: number, key: string, count: number): number | null {
  if (count <= 0) return null;
  switch (key) {
    case 'ArrowDown':
      return index < 0 ? 0 : (index + 1) % count;
    case 'ArrowUp':
      return index < 0 ? count - 1 : (index - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}
