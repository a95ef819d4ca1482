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

/** A refusal the person can act on; printed as one line after `navi <command>: `. */
export class CliRefusal extends Error {}
