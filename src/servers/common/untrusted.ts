/** Web text as the model reads it: marked untrusted, with the URL or provider it came from. */
import { untrustedBlock } from '../../util/untrusted.js';

/** Wraps `text` that came from `source` (a URL or a provider name) as untrusted content. */
export function untrusted(source: string, text: string): string {
  return untrustedBlock({ kind: 'web', attribute: { name: 'source', value: source }, from: 'the web' }, text);
}
