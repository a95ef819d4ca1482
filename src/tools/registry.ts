/**
 * The live set of tools. Built-in tools are registered once at start-up; user tools are
 * replaced as a whole on every reload; MCP tools are added and removed per server. Reloading
 * one source never touches the others.
 */
import type { ToolDefinition, ToolSource } from './types.js';
import { ArgumentValidator } from './validation.js';

export interface RegisteredTool {
  tool: ToolDefinition;
  source: ToolSource;
  /** MCP server name, for `source: 'mcp'`. */
  server?: string;
  /** File the tool was loaded from, for `source: 'user'`. */
  file?: string;
  /** A user tool listed in `enabled.json`: allowed in every profile unless the profile denies it. */
  enabledEverywhere?: boolean;
}

export interface ToolLoadError {
  /** File (user tools, context providers) or server (MCP) that failed. */
  origin: string;
  source: ToolSource | 'context_provider';
  error: string;
}

export class ToolRegistry {
  /**
   * The one validator of every tool in this registry: the loader checks a user tool's schema
   * with it and the executor validates calls with it, so each schema is compiled once.
   */
  readonly validator = new ArgumentValidator();
  private readonly tools = new Map<string, RegisteredTool>();
  private loadErrors: ToolLoadError[] = [];

  /** Adds a tool; throws if the name is taken (a user tool may not shadow a built-in). */
  register(entry: RegisteredTool): void {
    const existing = this.tools.get(entry.tool.name);
    if (existing) {
      throw new Error(`tool name "${entry.tool.name}" is already used by a ${existing.source} tool`);
    }
    this.tools.set(entry.tool.name, entry);
  }

  unregister(name: string): boolean {
    return this.tools.delete(name);
  }

  /** Removes every tool the predicate selects; returns their names. */
  removeWhere(predicate: (entry: RegisteredTool) => boolean): string[] {
    const removed: string[] = [];
    for (const [name, entry] of this.tools) {
      if (predicate(entry)) {
        this.tools.delete(name);
        removed.push(name);
      }
    }
    return removed;
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  list(): RegisteredTool[] {
    return [...this.tools.values()];
  }

  /** Load errors of the last load of each origin kind, for `list_tools`, `/agents/tools`, doctor. */
  errors(): readonly ToolLoadError[] {
    return this.loadErrors;
  }

  /** Replaces the recorded errors of one source kind (user tools, providers, MCP). */
  setErrors(source: ToolLoadError['source'], errors: ToolLoadError[]): void {
    this.loadErrors = [...this.loadErrors.filter((e) => e.source !== source), ...errors];
  }
}
