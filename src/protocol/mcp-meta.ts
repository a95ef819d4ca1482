/**
 * The `_meta` keys Navi and the MCP servers it ships agree on, beyond the MCP standard. Navi
 * writes the first and reads the second; a shipped server does the other half.
 */

/** A call's `_meta`: the id of the Navi session that makes it, sent to shipped servers only. */
export const SESSION_META_KEY = 'navi/session_id';

/**
 * A result's `_meta`: the values a secrets server revealed on purpose, as `{ label, value }[]`;
 * Navi shows them this once and masks them from then on.
 */
export const REVEALED_META_KEY = 'navi/revealed';
