/**
 * One tool of a shipped MCP server, independent of the transport: the server's assembly
 * (`server.ts` of each server) registers these with the SDK's `McpServer.registerTool`, and unit
 * tests call `handler` directly without any MCP in between.
 */
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

/** What a call carries besides its arguments. */
export interface ToolRequest {
  /**
   * The request's `_meta` as the client sent it (Navi sends `navi/session_id` to the servers it
   * ships). Client-written: a handler may record it, never trust it for a decision.
   */
  meta: Readonly<Record<string, unknown>>;
}

export interface ShippedTool<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  description: string;
  /** Arguments as a zod object shape: the SDK turns it into the JSON Schema clients see. */
  inputSchema: Shape;
  annotations: ToolAnnotations;
  /**
   * Runs one call. `signal` fires when the client cancels or the server shuts down; `request`
   * is absent when a test calls the handler directly.
   */
  handler(
    args: z.infer<z.ZodObject<Shape>>,
    signal: AbortSignal,
    request?: ToolRequest,
  ): Promise<CallToolResult>;
}

/** A failed call as the model should read it: what went wrong and what to do. */
export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

export function toolText(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}
