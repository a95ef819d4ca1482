/**
 * The navi-web server: `web_search`, `web_view` and `http_request` on one MCP server. The tools
 * are built once and shared by every session, so the one headless browser `web_view` keeps is
 * shared too, and closed with the server.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import packageJson from '../../../package.json' with { type: 'json' };
import type { Settings } from '../../config/settings.js';
import { registerShippedTool } from '../common/serve.js';
import type { ShippedTool } from '../common/tool.js';
import { httpRequestTool, type ResolverFn } from './http-request.js';
import { webSearchTool } from './web-search.js';
import { webViewTool } from './web-view.js';

export interface NaviWebDeps {
  /** Replaces DNS for every tool (tests point host names at local servers). */
  resolve?: ResolverFn;
}

export interface NaviWeb {
  readonly tools: readonly ShippedTool[];
  /** A new MCP server offering the tools: one per connection (stdio, or each HTTP session). */
  createServer(): McpServer;
  /** Releases what the tools hold (the browser). */
  close(): Promise<void>;
}

export const NAVI_WEB_NAME = 'navi-web';

export function createNaviWebServer(settings: Settings, deps: NaviWebDeps = {}): NaviWeb {
  const toolDeps = { settings, resolve: deps.resolve };
  const webView = webViewTool(toolDeps);
  const tools: ShippedTool[] = [webSearchTool(toolDeps), webView, httpRequestTool(toolDeps)];
  return {
    tools,
    createServer() {
      const server = new McpServer({ name: NAVI_WEB_NAME, version: packageJson.version });
      for (const tool of tools) registerShippedTool(server, tool);
      return server;
    },
    close: () => webView.close(),
  };
}
