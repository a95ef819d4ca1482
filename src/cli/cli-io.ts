/**
 * What the `navi` commands share: where they write, and the failure they print as one line
 * instead of a stack.
 */

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Stops a long command, a download or an install (tests); without it, Ctrl-C does. */
  signal?: AbortSignal;
}

/** True for the words that ask a command for its usage: `help`, `--help`, `-h`. */
export function isHelp(arg: string | undefined): boolean {
  return arg === 'help' || arg === '--help' || arg === '-h';
}

/** A refusal the person can act on; printed as one line after `navi <command>: `. */
export class CliRefusal extends Error {}

/**
 * Runs the body of `navi <command>`: a `CliRefusal` it throws is printed as one line on stderr
 * and ends it with exit code 1; anything else is a bug, and goes up with its stack.
 */
export async function exitOnRefusal(
  command: string,
  io: CliIo,
  body: () => Promise<number> | number,
): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (!(err instanceof CliRefusal)) throw err;
    io.stderr.write(`navi ${command}: ${err.message}\n`);
    return 1;
  }
}
