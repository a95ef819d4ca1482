/**
 * The one table of stable error codes. REST error bodies (`{error, code}`), `error` events on
 * the WebSocket and LLM failures all take their `code` from it, so a client branches on one
 * vocabulary wherever the error came from. `status` is what a REST answer uses; `message` is a
 * sentence for people (the server usually adds the detail that says what to do).
 */

export const errorTable = {
  BAD_REQUEST: { status: 400, message: 'The request is not valid' },
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON' },
  INVALID_TITLE: { status: 400, message: 'A title must be 1 to 200 characters long' },
  UNKNOWN_PROFILE: { status: 400, message: 'There is no agent profile with that id' },
  INVALID_IMAGE: { status: 400, message: 'An image is not valid base64 or is too large' },
  FILE_NOT_IN_SESSION: { status: 400, message: 'Only files uploaded to this session can be attached' },
  INVALID_FILE_NAME: { status: 400, message: 'The file name is not acceptable' },
  MISSING_FILE: { status: 400, message: 'The upload needs a multipart field named "file"' },
  MALFORMED_UPLOAD: {
    status: 400,
    message:
      'The upload is not complete multipart/form-data (it ended before its closing boundary, or a part is malformed); send the whole file again',
  },
  PAIRING_CODE_INVALID: {
    status: 400,
    message:
      'That pairing code is not valid; run npx navi pair on the machine Navi runs on and open the link it prints',
  },
  UNAUTHORIZED: { status: 401, message: 'A valid API token is required' },
  TOKEN_WRONG: {
    status: 401,
    message:
      'That API token is not the one this server uses; check NAVI_API_TOKEN where Navi runs and sign in again',
  },
  REMOTE_FORBIDDEN: {
    status: 403,
    message: 'Only local clients are served while NAVI_API_TOKEN is not set',
  },
  FOREIGN_HOST: {
    status: 403,
    message:
      'Without NAVI_API_TOKEN only requests addressed to localhost or NAVI_HOST are served; set NAVI_API_TOKEN to serve other host names',
  },
  FOREIGN_ORIGIN: { status: 403, message: 'Requests from this browser origin are not allowed' },
  CONSENT_REQUIRED: {
    status: 403,
    message:
      'Only your own client may approve what the agent does, or change which model Navi uses and what it downloads: this one is not paired. Run npx navi pair on the machine Navi runs on and open the link it prints in this browser (or send the API token)',
  },
  NOT_FOUND: { status: 404, message: 'Not found' },
  SESSION_NOT_FOUND: { status: 404, message: 'There is no session with that id' },
  FILE_NOT_FOUND: { status: 404, message: 'There is no such file in this session' },
  CONFIRMATION_NOT_FOUND: {
    status: 404,
    message: 'No tool call of this session is waiting for that confirmation',
  },
  FACT_NOT_FOUND: { status: 404, message: 'There is no memory fact with that id' },
  MESSAGE_NOT_FOUND: { status: 404, message: 'This session has no message with that id' },
  PROFILE_NOT_FOUND: { status: 404, message: 'There is no agent profile with that id' },
  RECALL_NOT_FOUND: { status: 404, message: 'This session has no recall with that id' },
  RECALL_FINISHED: {
    status: 409,
    message: 'That recall has already finished or been cancelled; it has nothing left to cancel or skip',
  },
  INVALID_FACT: { status: 400, message: 'The memory fact is not valid' },
  // OAuth of MCP servers reached over HTTP (docs/mcp.md#oauth); the server adds the reason.
  MCP_NOT_HTTP: {
    status: 400,
    message:
      'Only an MCP server reached over HTTP (a config with a url) signs in with OAuth; this one runs as a command on this machine',
  },
  MCP_AUTH_FAILED: { status: 400, message: 'Navi could not be authorised at the MCP server' },
  MCP_ALREADY_AUTHORIZED: { status: 409, message: 'The MCP server is already authorised' },
  MCP_AUTH_SERVER_FAILED: {
    status: 502,
    message: 'The MCP server or its authorisation server did not answer as OAuth needs',
  },
  MCP_TOKENS_UNAVAILABLE: {
    status: 503,
    message: 'Navi has nowhere to keep OAuth tokens now (the vault is off or locked)',
  },
  // The secrets vault (REST /vault/...). The server adds the vault's own sentence, which says
  // what was wrong and what to do.
  VAULT_INVALID: { status: 400, message: 'The vault refused the request' },
  VAULT_NOT_FOUND: { status: 404, message: 'The vault has no such secret or field' },
  VAULT_CONFLICT: { status: 409, message: 'The vault cannot make that change now' },
  VAULT_LOCKED: { status: 423, message: 'The vault is locked' },
  // 503, not 500: the request was fine and nothing happened; the disk under the audit log or the
  // vault file needs the person's attention, and the same request works once it is fixed.
  VAULT_AUDIT_FAILED: {
    status: 503,
    message:
      'The vault audit log cannot be written, so nothing was revealed or changed; check that GNEXUS_AUDIT_LOG names a file Navi can write, on a disk with free space',
  },
  VAULT_UNAVAILABLE: { status: 503, message: 'The vault file cannot be read or written' },
  FACT_CONFLICT: { status: 409, message: 'Another fact already uses that category and key' },
  NOTHING_TO_REGENERATE: {
    status: 409,
    message: 'This session has no message of yours to run again',
  },
  MESSAGE_NOT_EDITABLE: {
    status: 409,
    message:
      'Only a message you typed can be edited, and only while it is still in the conversation the model reads (not yet summarised)',
  },
  INVALID_QUERY: { status: 400, message: 'The search needs 1 to 500 characters of text in q' },
  INVALID_PAGE: {
    status: 400,
    message: 'The page asked for is not valid (limit: a whole number from 1 to 1000; before: a message id)',
  },
  INVALID_IMPORT: { status: 400, message: 'The file is not a Navi session export' },
  INVALID_PROFILE: { status: 400, message: 'The profile is not valid' },
  RUN_ACTIVE: { status: 409, message: 'The session is already answering; wait for it or stop it' },
  FORM_ALREADY_SUBMITTED: { status: 409, message: 'That form was already submitted' },
  PAIRING_CODE_USED: {
    status: 409,
    message: 'That pairing code has already been used; run npx navi pair for a new one',
  },
  PAIRING_CODE_EXPIRED: {
    status: 410,
    message: 'That pairing code has expired; run npx navi pair for a new one',
  },
  BODY_TOO_LARGE: { status: 413, message: 'The request body is too large' },
  FILE_TOO_LARGE: { status: 413, message: 'The file is larger than the upload limit' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'This content type is not accepted here' },
  PAIRING_RATE_LIMITED: {
    status: 429,
    message: 'Too many wrong pairing codes; wait a minute, then use a fresh code from npx navi pair',
  },
  INTERNAL: { status: 500, message: 'Something went wrong inside the server; it has been logged' },
  RUN_FAILED: { status: 502, message: 'The agent run failed' },
  // Why a run ended on the LLM's side: the code of its `error` event. `POST /messages` answers
  // such a run with RUN_FAILED and the backend's explanation.
  LLM_UNAVAILABLE: { status: 502, message: 'No LLM backend is available for this profile' },
  LLM_UNREACHABLE: { status: 502, message: 'The LLM server cannot be reached' },
  LLM_TIMEOUT: { status: 504, message: 'The LLM server did not answer in time' },
  LLM_HTTP_ERROR: { status: 502, message: 'The LLM server answered with an error' },
  LLM_AUTH: { status: 502, message: 'The LLM server refused the API key' },
  LLM_MODEL_NOT_FOUND: { status: 502, message: 'The LLM server does not have the model' },
  CONTEXT_OVERFLOW: { status: 502, message: "The conversation does not fit the model's context window" },
  LLM_MALFORMED: { status: 502, message: 'The LLM server sent an answer that could not be read' },
  LLM_UNSUPPORTED: { status: 502, message: 'The model cannot do what the run needs (e.g. call tools)' },
  IMAGES_UNSUPPORTED: {
    status: 400,
    message:
      "The session's model reads text only, so it cannot see images; send the message without them, or choose a vision model",
  },
  // Models and backends (REST /llm/...).
  UNKNOWN_BACKEND: {
    status: 400,
    message: 'There is no LLM backend with that id (ollama, openai, llamacpp)',
  },
  UNKNOWN_MODEL: { status: 400, message: 'That backend has no model of that name' },
  INVALID_SETTING: { status: 400, message: 'A setting has a value it does not accept' },
  SETTING_LOCKED: {
    status: 409,
    message:
      'That setting is fixed by the environment or .env, which win over what the client saves; change it there',
  },
  MODEL_NOT_FOUND: { status: 404, message: 'There is no downloaded model of that name' },
  AGENT_MODEL_NOT_FOUND: {
    status: 404,
    message: 'There is no Navi model of that name; GET /v1/models lists them (navi:<profile id>)',
  },
  DOWNLOAD_NOT_FOUND: { status: 404, message: 'There is no model download with that id' },
  DOWNLOAD_ACTIVE: { status: 409, message: 'That model is already being downloaded' },
  RUNTIME_INSTALLING: { status: 409, message: 'The llama.cpp runtime is already being installed' },
  // 503: with several processes on one database, a stop or a confirmation answer goes to the
  // process running the session's answer, which is alive (its connections are open) but silent.
  RUN_PROCESS_NO_REPLY: {
    status: 503,
    message:
      "The Navi process running this session's answer did not reply in time, so whether it stopped or took the answer is not known; try again in a moment (asking twice does no harm), and if it keeps happening, check that process's log or restart it",
  },
  SHUTTING_DOWN: { status: 503, message: 'The server is shutting down' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof errorTable;
