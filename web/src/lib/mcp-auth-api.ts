/** The REST calls behind Connect and Revoke on an MCP server's card (docs/mcp.md#oauth). */
import type { McpAuthorizeView, McpServerInfo } from '@protocol/rest.js';
import { request } from './api.js';

const serverPath = (name: string, action: string) =>
  `/agents/mcp/servers/${encodeURIComponent(name)}/${action}`;

export const mcpAuthApi = {
  /** `redirectBase`: where the authorisation server sends this browser back (its own origin). */
  authorize: (name: string, redirectBase: string) =>
    request<McpAuthorizeView>('POST', serverPath(name, 'authorize'), { redirect_base: redirectBase }),
  // Sent without a body, so without a JSON content type (the server refuses an empty JSON body).
  revoke: (name: string) => request<McpServerInfo>('DELETE', serverPath(name, 'authorization')),
};
