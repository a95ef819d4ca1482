/**
 * What `navi data`, `navi backup`, `navi restore` and `navi service` share: where they write,
 * and the failure they print as one line instead of a stack.
 */

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** A refusal the person can act on; printed as one line after `navi <command>: `. */
export class CliRefusal extends Error {}
