/** `navi model` (placeholder: being built in this change). */
import type { Settings } from '../config/settings.js';

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function runModel(_settings: Settings, _args: string[], io: CliIo): Promise<number> {
  io.stderr.write('navi model: not built yet\n');
  return 1;
}
