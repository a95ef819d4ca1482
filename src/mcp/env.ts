/**
 * The environment of a stdio MCP server: only what its config names plus PATH and HOME, so
 * Navi's own secrets (NAVI_API_TOKEN, OPENAI_API_KEY…) never reach a third-party process.
 */
const INHERITED = ['PATH', 'HOME'] as const;
const FALLBACK_PATH = '/usr/local/bin:/usr/bin:/bin';

export function serverEnvironment(
  configured: Record<string, string>,
  base: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = base[name];
    // Values starting with "()" are exported shell functions: never pass those on.
    if (value !== undefined && !value.startsWith('()')) env[name] = value;
  }
  env.PATH ??= FALLBACK_PATH;
  return { ...env, ...configured };
}
