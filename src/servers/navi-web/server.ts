/**
 * The navi-web server: `web_search`, `web_view` and `http_request` on one MCP server. The tools
 * are built once and shared by every session, so the one headless browser `web_view` keeps is
 * shared too, and closed with the server.
 */
import type { Settings } from '../../config/settings.js';
import { type ShippedToolServer, shippedToolServer } from '../common/run-server.js';
import { httpRequestTool, type ResolverFn } from './http-request.js';
import { webSearchTool } from './web-search.js';
import { webViewTool } from './web-view.js';

export interface NaviWebDeps {
  /** Replaces DNS for every tool (tests point host names at local servers). */
  resolve?: ResolverFn;
}

export const NAVI_WEB_NAME = 'navi-web';

export function createNaviWebServer(settings: Settings, deps: NaviWebDeps = {}): ShippedToolServer {
  const toolDeps = { settings, resolve: deps.resolve };
  const webView = webViewTool(toolDeps);
  return shippedToolServer(NAVI_WEB_NAME, [webSearchTool(toolDeps), webView, httpRequestTool(toolDeps)], () =>
    webView.close(),
  );
}
