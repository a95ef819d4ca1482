/**
 * Names of MCP tools as the LLM sees them: `mcp__<server>__<tool>`, restricted to the
 * characters and length every LLM API accepts (`^[a-zA-Z0-9_-]{1,64}$`).
 */
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME_LENGTH = 64;

/** Server part: `-` and anything outside `[A-Za-z0-9_]` become `_` (`navi-web` → `navi_web`). */
export function serverKey(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, '_');
}

/**
 * Full tool name for `tool` of the server `key`, unique within `taken`. Names too long for
 * the LLM APIs are cut and end with a short hash of the full name so they stay distinct.
 */
export function mcpToolName(key: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  let base = `mcp__${key}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (base.length > MAX_TOOL_NAME_LENGTH) {
    const hash = createHash('sha1').update(base).digest('hex').slice(0, 8);
    base = `${base.slice(0, MAX_TOOL_NAME_LENGTH - 9)}_${hash}`;
  }
  let name = base;
  for (let n = 2; taken.has(name); n++) {
    const suffix = `_${n}`;
    name = `${base.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length)}${suffix}`;
  }
  return name;
}

/** The `navi-ui` server wraps its results in the `{output, metadata: {ui_component}}` envelope. */
export function isNaviUiServer(key: string): boolean {
  return key === 'navi_ui';
}
