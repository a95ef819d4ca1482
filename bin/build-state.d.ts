/** Types of build-state.js, for the TypeScript that imports it (the build). */
export const programFolder: string;
export const STAMP_FILE: string;
export function isBuiltSource(file: string): boolean;
export function listSources(root?: string): string[];
export function scanSources(root?: string): { count: number; newest: { path: string; mtimeMs: number } };
export function buildState(root?: string): { current: boolean; reason: string };
export function compiledPath(file: string, root?: string): string;
export function importEntry(file: string, root?: string): Promise<Record<string, unknown>>;
