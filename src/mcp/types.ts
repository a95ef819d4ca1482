/**
 * Shapes shared by the MCP manager, its tools, the server routes and `navi doctor`
 * (docs/mcp.md#http-endpoints-and-navi-doctor). A server's status is the wire shape of
 * `src/protocol/rest.ts`, snake_case because it travels as JSON to the client.
 */
import type { ToolGroup } from '../tools/types.js';

interface ServerConfigBase {
  /** Name as written in the config file. */
  name: string;
  /** Sanitised name used in tool names: `mcp__<key>__<tool>`. */
  key: string;
  /** Absolute path of the config file. */
  file: string;
  enabled: boolean;
  description?: string;
  group?: ToolGroup;
  /** Per-call time limit for this server's tools; TOOL_TIMEOUT_MS when absent. */
  timeoutMs?: number;
  /** Largest single JSON-RPC message accepted from the server. */
  maxMessageBytes: number;
  /** `agent` marks configs written by `create_mcp_server`: they need the user's approval. */
  createdBy: 'agent' | 'user';
  /** Shipped with Navi (mcp_servers.shipped/), not a file of the user's folder. */
  shipped: boolean;
  /** The launch line the user approved (agent-written configs only). */
  approvedCommand?: string;
  /** The server's own tool names (no `mcp__` prefix) that ask the person before every call. */
  confirmTools?: string[];
}

export interface StdioServerConfig extends ServerConfigBase {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Absolute working directory, when the config names one. */
  cwd?: string;
}

export interface HttpServerConfig extends ServerConfigBase {
  transport: 'http';
  url: string;
  headers: Record<string, string>;
  /** How Navi identifies itself when the server asks for OAuth (docs/mcp.md#oauth). */
  oauth?: McpOAuthConfig;
}

/** The `oauth` block of an HTTP server's config; every field is optional. */
export interface McpOAuthConfig {
  /** A client id registered with the authorisation server by hand (no dynamic registration). */
  clientId?: string;
  /** Its secret, or a vault reference `{{secret:<id>.<field>}}` to it. */
  clientSecret?: string;
  /** Scopes to ask for when the server names none (space-separated). */
  scope?: string;
  /** An https URL where Navi's client-ID metadata document is published. */
  clientMetadataUrl?: string;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** A config file that could not be used, with the reason. */
export interface McpConfigError {
  file: string;
  error: string;
}

// One definition for the manager and the wire: what `GET /agents/mcp` sends is the status itself.
export type {
  McpAuthInfo,
  McpPromptInfo,
  McpResourceInfo,
  McpServerInfo as McpServerStatus,
  McpServerState,
} from '../protocol/rest.js';

export interface McpReloadReport {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
  errors: McpConfigError[];
}

/** Timings of connection supervision; tests shorten them. */
export interface McpTimingOptions {
  /** Limit for the initialize handshake and each tools/list page. */
  connectTimeoutMs: number;
  pingIntervalMs: number;
  pingTimeoutMs: number;
  /** First restart delay; doubles on each failure up to `backoffMaxMs`. */
  backoffInitialMs: number;
  backoffMaxMs: number;
  /** A connection that stayed up this long resets the back-off. */
  stableAfterMs: number;
}

export const DEFAULT_TIMING: McpTimingOptions = {
  connectTimeoutMs: 30_000,
  pingIntervalMs: 30_000,
  pingTimeoutMs: 10_000,
  backoffInitialMs: 1_000,
  backoffMaxMs: 60_000,
  stableAfterMs: 60_000,
};

/** 16 MiB: room for a few large images, small enough to hold in memory without harm. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
