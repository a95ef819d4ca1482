/**
 * A stand-in for npm, for tests of the llama.cpp runtime install: a real executable named `npm`
 * on a PATH of its own, which prints npm-like lines and then, by FAKE_NPM_MODE:
 * - `ok`: writes a node-llama-cpp package (and this platform's binaries package) under --prefix;
 * - `fail`: writes part of the package, prints npm's error lines, exits 1;
 * - `empty`: exits 0 having installed nothing;
 * - `hang`: never ends (until it is killed);
 * - `wait`: waits until the file FAKE_NPM_GO exists, then fails like `fail`.
 * Each run appends its arguments to FAKE_NPM_LOG when it is set.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SCRIPT = `#!/bin/sh
prefix=""
previous=""
for arg in "$@"; do
  if [ "$previous" = "--prefix" ]; then prefix="$arg"; fi
  previous="$arg"
done
[ -n "$FAKE_NPM_LOG" ] && echo "$*" >> "$FAKE_NPM_LOG"
echo "npm http fetch GET 200 https://registry.npmjs.org/node-llama-cpp 12ms"
case "$FAKE_NPM_MODE" in
  ok)
    pkg="$prefix/node_modules/node-llama-cpp"
    mkdir -p "$pkg/dist" "$prefix/node_modules/@node-llama-cpp/$FAKE_NPM_PLATFORM"
    echo '{"name":"node-llama-cpp","version":"3.22.1","type":"module","exports":{".":{"import":"./dist/index.js"}}}' > "$pkg/package.json"
    echo 'export const getLlama = () => { throw new Error("fake runtime"); }; export class LlamaChat {}' > "$pkg/dist/index.js"
    echo "added 117 packages in 5s"
    exit 0 ;;
  empty)
    echo "up to date in 1s"
    exit 0 ;;
  hang)
    mkdir -p "$prefix/node_modules/node-llama-cpp"
    while true; do sleep 0.05; done ;;
  wait)
    while [ ! -f "$FAKE_NPM_GO" ]; do sleep 0.05; done ;;
esac
mkdir -p "$prefix/node_modules/node-llama-cpp"
echo "half" > "$prefix/node_modules/node-llama-cpp/package.json"
echo "npm error code ETARGET" >&2
echo "npm error notarget No matching version found for node-llama-cpp@3.22.1." >&2
echo "npm error A complete log of this run can be found in: /tmp/npm.log" >&2
exit 1
`;

/** Writes the fake npm into `dir/bin`; returns that folder (put it first on PATH). */
export function writeFakeNpm(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'npm'), SCRIPT);
  chmodSync(join(bin, 'npm'), 0o755);
  return bin;
}

export type FakeNpmMode = 'ok' | 'fail' | 'empty' | 'hang' | 'wait';

/** The environment that makes `npm` the fake one in `bin`, in `mode`. */
export function fakeNpmEnv(
  bin: string,
  mode: FakeNpmMode,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const platform = `${process.platform === 'darwin' ? 'mac' : process.platform === 'win32' ? 'win' : process.platform}-${process.arch}${process.platform === 'darwin' && process.arch === 'arm64' ? '-metal' : ''}`;
  return {
    ...process.env,
    PATH: `${bin}:/usr/bin:/bin`,
    FAKE_NPM_MODE: mode,
    FAKE_NPM_PLATFORM: platform,
    ...extra,
  };
}
