/**
 * The navi-ui envelope, `{"output": "…", "metadata": {"ui_component": {component, payload}}}`:
 * read whole (before any cap on text), and its component kept only when it is one the client
 * can draw. Whoever answers as navi-ui (the shipped server, or a config the user put in its
 * place) gets its component checked against the same schemas, so nothing else is stored on the
 * tool message and handed to every client that opens the session.
 */
import { type ValidUiComponent, validateUiComponent } from '../protocol/ui-components.js';
import { isRecord } from '../util/is-record.js';

/** A component larger than this is not kept on the message (the shipped server's cap is 1 MB). */
export const MAX_UI_COMPONENT_CHARS = 2_000_000;
/** Problems named in the note about a component left out; the first ones say enough. */
const MAX_PROBLEMS_NOTED = 5;

export interface Envelope {
  /** The text the model reads. */
  output: string;
  /** The component to store, when there is a valid one. */
  component?: ValidUiComponent;
  /** Why the envelope's component was left out, for the model to read. */
  note?: string;
}

/** The envelope in `text`, or undefined when `text` is not one (it is then ordinary text). */
export function parseEnvelope(text: string): Envelope | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed) || typeof parsed.output !== 'string') return undefined;
  const { output, metadata } = parsed;
  if (!isRecord(metadata) || metadata.ui_component === undefined) return { output };
  return { output, ...checkComponent(metadata.ui_component) };
}

function checkComponent(value: unknown): Pick<Envelope, 'component' | 'note'> {
  let size: number;
  try {
    size = JSON.stringify(value)?.length ?? 0;
  } catch {
    // Nested deeper than JSON.stringify's stack: nothing a client could draw either.
    return { note: '[UI component left out: it is nested too deeply to keep]' };
  }
  if (size > MAX_UI_COMPONENT_CHARS)
    return { note: `[UI component of ${size} characters left out: too large to keep]` };
  if (!isRecord(value) || typeof value.component !== 'string')
    return { note: '[UI component left out: it must be an object with "component" and "payload"]' };
  const checked = validateUiComponent(value.component, value.payload);
  if (checked.ok) return { component: checked.value };
  const shown = checked.problems.slice(0, MAX_PROBLEMS_NOTED);
  const more = checked.problems.length - shown.length;
  return {
    note: `[UI component left out, it is not valid: ${shown.join('; ')}${more > 0 ? ` (and ${more} more)` : ''}]`,
  };
}
