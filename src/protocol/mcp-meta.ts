/**
 * The `_meta` keys Navi and the MCP servers it ships agree on, beyond the MCP standard. Navi
 * writes the call's key and reads the results' keys; a shipped server does the other half.
 */

/** A call's `_meta`: the id of the Navi session that makes it, sent to shipped servers only. */
export const SESSION_META_KEY = 'navi/session_id';

/**
 * A result's `_meta`: the values a secrets server revealed on purpose, as `{ label, value }[]`;
 * Navi shows them this once and masks them from then on.
 */
export const REVEALED_META_KEY = 'navi/revealed';

/**
 * A result content block's `_meta`: the name under which Navi saves the block's file (an `image`
 * block, or an embedded `resource` with a `blob`) among the calling session's files, such as
 * `bracket.stl` or `bracket-front.png`; Navi makes it a safe file name before saving.
 */
export const FILE_NAME_META_KEY = 'navi/file_name';
