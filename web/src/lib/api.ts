/**
 * REST calls (docs/protocol.md#rest). Every failure becomes an `ApiError` carrying the server's
 * `{error}` text (or a plain description of a network failure), ready to show to a person.
 */

import type {
  ConnectionTestRequest,
  ConnectionTestResult,
  LlamacppRuntimeStatus,
  LlmModelList,
  LlmSettingsUpdate,
  LlmSettingsView,
  LlmStatus,
  LocalModelsView,
  ModelDownload,
} from '@protocol/llm.js';
import type {
  AuthStatus,
  ErrorBody,
  MessagePage,
  ModelChoice,
  PairReply,
  ProfileDocument,
  ProfileSummary,
  RecallList,
  RecallSummary,
  SearchResults,
  SessionDetail,
  SessionImportResult,
  SessionMessage,
  SessionSummary,
  UploadedFile,
} from '@protocol/rest.js';
import type {
  AuditList,
  NewSecret,
  RevealReply,
  SecretList,
  SecretPatch,
  SecretRecord,
  SecretStatus,
  VaultState,
} from '@protocol/vault.js';
import { authRefusal } from './auth.js';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** The server's error code (`SETTING_LOCKED`, `DOWNLOAD_ACTIVE`…), when it sent one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Called when the server answers 401, so the app can ask for the access token. */
let onUnauthorized: () => void = () => {};
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

function errorText(status: number, body: unknown, fallback: string): string {
  if (body && typeof body === 'object' && typeof (body as ErrorBody).error === 'string') {
    return (body as ErrorBody).error;
  }
  if (status === 413) return 'The file is larger than the server accepts.';
  return fallback;
}

/**
 * The error of a call the server refused. A 401 also records why (`authRefusal`) and lets the
 * app ask for the access token.
 */
function refusal(status: number, body: unknown, fallback: string): ApiError {
  const raw = (body as Partial<ErrorBody> | null | undefined)?.code;
  const code = typeof raw === 'string' ? raw : undefined;
  if (status === 401) {
    authRefusal.value = code ?? 'UNAUTHORIZED';
    onUnauthorized();
  }
  return new ApiError(errorText(status, body, fallback), status, code);
}

/** One REST call; exported for the pages that keep their own calls in a lib file of their own. */
export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError('The Navi server cannot be reached. Check that it is running.', 0);
  }
  if (response.status === 204) return undefined as T;
  let parsed: unknown;
  try {
    parsed = await response.json();
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    throw refusal(response.status, parsed, `${method} ${path} failed (${response.status})`);
  }
  return parsed as T;
}

export const api = {
  listSessions: () => request<SessionSummary[]>('GET', '/sessions'),
  /** The session and the newest page of its messages (docs/protocol.md#paged-history). */
  getSession: (id: string) => request<SessionDetail>('GET', `/sessions/${encodeURIComponent(id)}`),
  /** The `limit` messages just before the message `before` (a page's `next_before`). */
  getMessagePage: (id: string, before: string, limit: number) =>
    request<MessagePage>(
      'GET',
      `/sessions/${encodeURIComponent(id)}/messages?before=${encodeURIComponent(before)}&limit=${limit}`,
    ),
  getContext: (id: string) =>
    request<{ messages: SessionMessage[] }>('GET', `/sessions/${encodeURIComponent(id)}/context`),
  createSession: (profileId?: string) =>
    request<{ session_id: string; profile_id: string; created_at: string }>(
      'POST',
      '/sessions',
      profileId ? { profile_id: profileId } : {},
    ),
  renameSession: (id: string, title: string) =>
    request<unknown>('PATCH', `/sessions/${encodeURIComponent(id)}`, { title }),
  pinSession: (id: string, pinned: boolean) =>
    request<unknown>('PATCH', `/sessions/${encodeURIComponent(id)}/pin`, { pinned }),
  deleteSession: (id: string) => request<void>('DELETE', `/sessions/${encodeURIComponent(id)}`),
  listProfiles: () => request<ProfileSummary[]>('GET', '/agents/profiles'),
  getProfile: (id: string) => request<ProfileDocument>('GET', `/agents/profiles/${encodeURIComponent(id)}`),
  saveProfile: (id: string, profile: unknown) =>
    request<ProfileDocument>('PUT', `/agents/profiles/${encodeURIComponent(id)}`, { profile }),
  setSessionProfile: (id: string, profileId: string) =>
    request<SessionSummary>('PATCH', `/sessions/${encodeURIComponent(id)}`, { profile_id: profileId }),
  stopRun: (id: string) => request<{ stopped: boolean }>('POST', `/sessions/${encodeURIComponent(id)}/stop`),
  listRecalls: (id: string) => request<RecallList>('GET', `/sessions/${encodeURIComponent(id)}/recalls`),
  // Sent without a body, so without a JSON content type (the server refuses an empty JSON body).
  cancelRecall: (id: string, recallId: string) =>
    request<{ recall: RecallSummary }>(
      'DELETE',
      `/sessions/${encodeURIComponent(id)}/recalls/${encodeURIComponent(recallId)}`,
    ),
  skipRecall: (id: string, recallId: string) =>
    request<{ recall: RecallSummary }>(
      'POST',
      `/sessions/${encodeURIComponent(id)}/recalls/${encodeURIComponent(recallId)}/skip`,
    ),
  login: (token: string) => request<unknown>('POST', '/auth/login', { token }),
  authStatus: () => request<AuthStatus>('GET', '/auth/status'),
  pair: (code: string) => request<PairReply>('POST', '/auth/pair', { code }),
  vaultState: () => request<VaultState>('GET', '/vault'),
  /** `query` is the query string built by `filterQuery` (lib/vault.ts). */
  listSecrets: (query: string) => request<SecretList>('GET', `/vault/secrets${query ? `?${query}` : ''}`),
  createSecret: (secret: NewSecret) => request<SecretRecord>('POST', '/vault/secrets', secret),
  updateSecret: (id: string, patch: SecretPatch) =>
    request<SecretRecord>('PATCH', `/vault/secrets/${encodeURIComponent(id)}`, patch),
  setSecretStatus: (id: string, status: SecretStatus) =>
    request<SecretRecord>('POST', `/vault/secrets/${encodeURIComponent(id)}/status`, { status }),
  // Sent without a body, so without a JSON content type (the server refuses an empty JSON body).
  archiveSecret: (id: string) =>
    request<SecretRecord>('POST', `/vault/secrets/${encodeURIComponent(id)}/archive`),
  revealSecret: (id: string, field: string) =>
    request<RevealReply>('POST', `/vault/secrets/${encodeURIComponent(id)}/reveal`, {
      field,
      reason: 'shown on the Vault page',
    }),
  vaultAudit: (limit = 200) => request<AuditList>('GET', `/vault/audit?limit=${limit}`),
  /** The session's own model, or with null its profile's again. */
  setSessionModel: (id: string, model: ModelChoice | null) =>
    request<SessionSummary>('PATCH', `/sessions/${encodeURIComponent(id)}`, { model }),
  llmStatus: () => request<LlmStatus>('GET', '/llm/status'),
  llmModels: () => request<LlmModelList>('GET', '/llm/models'),
  llmSettings: () => request<LlmSettingsView>('GET', '/llm/settings'),
  saveLlmSettings: (update: LlmSettingsUpdate) => request<LlmSettingsView>('PUT', '/llm/settings', update),
  testConnection: (test: ConnectionTestRequest) => request<ConnectionTestResult>('POST', '/llm/test', test),
  localModels: () => request<LocalModelsView>('GET', '/llm/local'),
  startDownload: (source: string, sha256?: string) =>
    request<ModelDownload>('POST', '/llm/downloads', sha256 ? { source, sha256 } : { source }),
  getDownload: (id: string) => request<ModelDownload>('GET', `/llm/downloads/${encodeURIComponent(id)}`),
  // Sent without a body, so without a JSON content type (the server refuses an empty JSON body).
  cancelDownload: (id: string) =>
    request<ModelDownload>('DELETE', `/llm/downloads/${encodeURIComponent(id)}`),
  removeLocalModel: (name: string) => request<void>('DELETE', `/llm/local/${encodeURIComponent(name)}`),
  runtimeStatus: () => request<LlamacppRuntimeStatus>('GET', '/llm/runtime'),
  // Sent without a body, so without a JSON content type (the server refuses an empty JSON body).
  installRuntime: () => request<LlamacppRuntimeStatus>('POST', '/llm/runtime'),
  search: (query: string, limit = 20) =>
    request<SearchResults>('GET', `/search?q=${encodeURIComponent(query)}&limit=${limit}`),
  /** A JSON export (`SessionExport`) back in as a new chat; `warnings` says what did not come along. */
  importSession: (body: unknown) => request<SessionImportResult>('POST', '/sessions/import', body),
};

/**
 * Uploads one file with XMLHttpRequest, because fetch cannot report upload progress.
 * `onProgress` receives a fraction in [0, 1]. Aborting the signal cancels the upload.
 */
export function uploadFile(
  sessionId: string,
  file: File,
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<UploadedFile> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/sessions/${encodeURIComponent(sessionId)}/files`);
    xhr.responseType = 'json';
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    });
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(xhr.response as UploadedFile);
      } else {
        reject(refusal(xhr.status, xhr.response, `Upload failed (${xhr.status})`));
      }
    });
    xhr.addEventListener('error', () =>
      reject(new ApiError('The upload was interrupted: network error.', 0)),
    );
    xhr.addEventListener('abort', () => reject(new ApiError('Upload cancelled.', 0)));
    signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

/** A readable message for anything thrown. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
