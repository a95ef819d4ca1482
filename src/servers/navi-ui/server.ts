/**
 * The navi-ui server: one tool, `render_component`. It keeps no state: the component it
 * validates travels on the tool message, which is what the web client draws and keeps.
 */
import { type ShippedToolServer, shippedToolServer } from '../common/run-server.js';
import { renderComponentTool } from './render-component.js';

export const NAVI_UI_NAME = 'navi-ui';

export function createNaviUiServer(): ShippedToolServer {
  return shippedToolServer(NAVI_UI_NAME, [renderComponentTool()], async () => {});
}
