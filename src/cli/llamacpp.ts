/** `navi llamacpp` (placeholder: being built in this change). */
import type { Settings } from '../config/settings.js';

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function runLlamacpp(_settings: Settings, _args: string[], io: CliIo): Promise<number> {
  io.stderr.write('navi llamacpp: not built yet\n');
  return 1;
}
