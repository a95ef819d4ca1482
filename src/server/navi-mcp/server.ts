/**
 * Navi as an MCP server (docs/mcp-server.md): MCP hosts ask the agent to do things with
 * `ask_navi` and read what Navi knows with `search_memory`, `list_sessions` and `get_session`.
 * The same server is offered over stdio (`navi mcp`) and over Streamable HTTP (`/mcp`); the SDK
 * binds one `McpServer` to one transport, so each connection gets its own from this factory.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import packageJson from '../../../package.json' with { type: 'json' };
import type { ServerContext } from '../context.js';
import { registerAskNavi } from './ask-navi.js';
import { registerReadTools } from './read-tools.js';

/** What the tools use: the services and the run registry the runs start in. */
export type NaviMcpDeps = Pick<ServerContext, 'services' | 'runs'>;

export const NAVI_MCP_SERVER_NAME = 'navi';

const INSTRUCTIONS =
  'Navi is a personal AI agent with its own tools, memory and sessions. Use ask_navi to give it a task ' +
  '(pass session_id from an earlier answer to continue that conversation), search_memory for what it ' +
  'remembers about the user, list_sessions and get_session to read its conversations.';

/** A new MCP server with Navi's tools registered: one per connection. */
export function createNaviMcpServer(deps: NaviMcpDeps): McpServer {
  const server = new McpServer(
    { name: NAVI_MCP_SERVER_NAME, version: packageJson.version },
    { instructions: INSTRUCTIONS },
  );
  registerAskNavi(server, deps);
  registerReadTools(server, deps);
  return server;
}
