/** How Navi's MCP tools answer: an error the host's model can act on, or data as text and structure. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A failed call: what went wrong and what to do instead. */
export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** `data` as the tool's structured content, and as JSON text for hosts that read only text. */
export function dataResult(data: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data, null, 2) }], structuredContent: data };
}
