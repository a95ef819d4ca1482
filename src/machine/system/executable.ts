/** Whether a program can be started from `path`: an executable file (a link to one counts). */
import { accessSync, constants, statSync } from 'node:fs';

export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
