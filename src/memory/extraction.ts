/**
 * Background fact extraction (docs/memory.md#extraction). When a session has been idle for
 * MEMORY_EXTRACTION_IDLE_MINUTES and holds messages not yet mined, the LLM reads its display
 * history with the facts already known and answers with facts as JSON; those are upserted, then
 * the summary injected into every run is rewritten from all facts.
 *
 * A failed extraction is recorded (attempts, last error) and retried by later passes, up to
 * `maxAttempts`; after that the session waits until it gets new messages. Only one pass runs at
 * a time: a call during a pass shares that pass. With several processes on one database (a store
 * with `exclusively`), one process at a time mines a session and the others skip it.
 */
import type { Logger } from 'pino';
import type { ChatMessage, LlmBackend } from '../llm/types.js';
import type { SessionRecord, SessionStore, StoredMessage } from '../store/types.js';
import { parseFacts } from './parse-facts.js';
import type { FactInput, MemoryFact, MemoryStore, SessionMemoryState } from './types.js';

export const MEMORY_HEADING = '## What I remember about the user';

export interface MemoryExtractorDeps {
  memory: MemoryStore;
  sessions: SessionStore;
  /** A function when the backend is chosen at run time; it may throw when none is usable. */
  backend: LlmBackend | (() => LlmBackend);
  /** Defaults to the backend's default model. */
  model?: string;
  idleMinutes: number;
  logger: Logger;
  now?: () => Date;
  /** Failed attempts before a session waits for new messages (default 5). */
  maxAttempts?: number;
  /** Transcript characters per extraction call (default 12 000). */
  chunkChars?: number;
  /** Calls per session at most; longer sessions keep their first chunk and the latest ones (default 6). */
  maxChunks?: number;
}

export interface ExtractionReport {
  /** Sessions whose extraction succeeded in this pass. */
  processed: string[];
  failed: { sessionId: string; error: string }[];
  /** Facts created or changed. */
  factsSaved: number;
  summaryUpdated: boolean;
}

/** Facts shown to the model so it reuses keys instead of inventing near-duplicates. */
const KNOWN_FACTS_SHOWN = 150;
const SUMMARY_FACTS = 400;
const SUMMARY_INPUT_CHARS = 16_000;
const MESSAGE_CHARS = 2_000;
const TEMPERATURE = 0.1;

const EXTRACTION_INSTRUCTIONS = `You maintain a long-term memory about one user of a personal assistant.
Read the conversation and list durable facts about the user that will still matter in later conversations:
identity, preferences, family and contacts, work and projects, their computers and home setup, habits, goals.
Leave out small talk, one-off requests, facts about the world, and anything the assistant said about itself.
When a fact updates one of the known facts, reuse its category and key with the new value.
Answer with JSON only, in this shape:
{"facts": [{"category": "preference", "key": "favourite_editor", "value": "Uses Neovim with LazyVim"}]}
Categories are short lower-case words (personal, preference, work, project, environment, contact, health, other).
Keys are short snake_case names. Values are one self-contained sentence.
If there is nothing worth remembering, answer {"facts": []}.`;

const SUMMARY_INSTRUCTIONS = `Write a compact profile of the user from the facts below, for an assistant to read
before each conversation. Group related facts, prefer the most recent when two disagree, keep names, numbers and
versions exactly, invent nothing. Plain sentences or short bullet points, at most 200 words, no preamble.`;

export class MemoryExtractor {
  private running: Promise<ExtractionReport> | undefined;
  private readonly now: () => Date;

  constructor(private readonly deps: MemoryExtractorDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Whether a pass is under way. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /**
   * Mines every stale session, then refreshes the summary if facts changed. Never rejects for a
   * session's failure (it is recorded); a call while a pass runs returns that pass's promise.
   */
  processStaleSessions(signal?: AbortSignal): Promise<ExtractionReport> {
    if (!this.running) {
      this.running = this.pass(signal).finally(() => {
        this.running = undefined;
      });
    }
    return this.running;
  }

  /** The block for the system prompt, or null while nothing is remembered. */
  async memoryBlock(): Promise<string | null> {
    return memoryBlock(this.deps.memory);
  }

  /** Sessions idle long enough whose messages were not all mined yet, least recently active first. */
  async staleSessions(): Promise<SessionRecord[]> {
    const states = new Map((await this.deps.memory.listSessionStates()).map((s) => [s.session_id, s]));
    return (await this.deps.sessions.list())
      .filter((s) => this.isStale(s, states.get(s.id)))
      .sort((a, b) => Date.parse(a.last_active) - Date.parse(b.last_active));
  }

  /** Idle long enough, with messages not all mined yet. */
  private isStale(session: SessionRecord, state: SessionMemoryState | undefined): boolean {
    const cutoff = this.now().getTime() - this.deps.idleMinutes * 60_000;
    return (
      Date.parse(session.last_active) <= cutoff && needsExtraction(session, state, this.deps.maxAttempts ?? 5)
    );
  }

  private async pass(signal?: AbortSignal): Promise<ExtractionReport> {
    const report: ExtractionReport = { processed: [], failed: [], factsSaved: 0, summaryUpdated: false };
    const { memory } = this.deps;
    for (const session of await this.staleSessions()) {
      if (signal?.aborted) break;
      if (!memory.exclusively) {
        await this.mineSession(session.id, report, signal);
        continue;
      }
      // Several processes share the database: one mines the session, the others skip it. The
      // one that claims it looks again, as another may have mined it since the list was read.
      await memory.exclusively(session.id, async () => {
        if (await this.stillStale(session.id)) await this.mineSession(session.id, report, signal);
      });
    }
    if (!signal?.aborted) report.summaryUpdated = await this.refreshSummary(signal);
    return report;
  }

  private async stillStale(sessionId: string): Promise<boolean> {
    const session = await this.deps.sessions.get(sessionId);
    return session !== undefined && this.isStale(session, await this.deps.memory.getSessionState(sessionId));
  }

  private async mineSession(
    sessionId: string,
    report: ExtractionReport,
    signal?: AbortSignal,
  ): Promise<void> {
    const startedAt = this.now().toISOString();
    const previous = await this.deps.memory.getSessionState(sessionId);
    try {
      report.factsSaved += await this.extractSession(sessionId, signal);
      await this.deps.memory.setSessionState({
        session_id: sessionId,
        extracted_at: startedAt,
        status: 'done',
        attempts: 0,
        last_error: null,
        attempted_at: startedAt,
      });
      report.processed.push(sessionId);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      this.deps.logger.warn(
        { session_id: sessionId, err: error },
        'memory extraction failed; it will be retried',
      );
      await this.deps.memory.setSessionState({
        session_id: sessionId,
        extracted_at: previous?.extracted_at ?? null,
        status: 'failed',
        attempts: (previous?.status === 'failed' ? previous.attempts : 0) + 1,
        last_error: error.slice(0, 2000),
        attempted_at: startedAt,
      });
      report.failed.push({ sessionId, error });
    }
  }

  /** Returns how many facts were created or changed. Throws when the LLM fails or answers no JSON. */
  private async extractSession(sessionId: string, signal?: AbortSignal): Promise<number> {
    const lines = transcriptLines(await this.deps.sessions.getMessages(sessionId));
    if (!lines.some((l) => l.startsWith('User:'))) return 0;
    let saved = 0;
    for (const chunk of chunkLines(lines, this.deps.chunkChars ?? 12_000, this.deps.maxChunks ?? 6)) {
      const known = await this.deps.memory.recent(KNOWN_FACTS_SHOWN);
      const knownText = known.length ? known.map(factLine).join('\n') : '(none yet)';
      const answer = await this.complete(
        [
          { role: 'system', content: EXTRACTION_INSTRUCTIONS },
          { role: 'user', content: `Known facts:\n${knownText}\n\nConversation:\n${chunk}` },
        ],
        signal,
      );
      const parsed = parseFacts(answer);
      if (!parsed.found) throw new Error(`the model answered without JSON: ${answer.slice(0, 200)}`);
      if (parsed.dropped > 0)
        this.deps.logger.debug({ session_id: sessionId, dropped: parsed.dropped }, 'unusable facts dropped');
      const changed: FactInput[] = [];
      for (const fact of parsed.facts) {
        const before = await this.deps.memory.getByKey(fact.category, fact.key);
        if (before?.value !== fact.value) changed.push({ ...fact, source_session_id: sessionId });
      }
      // One transaction per answer: all of its facts are saved, or none.
      await this.deps.memory.upsertMany(changed);
      saved += changed.length;
    }
    return saved;
  }

  /** Rewrites the summary when facts changed since it was written. False when nothing changed or it failed. */
  private async refreshSummary(signal?: AbortSignal): Promise<boolean> {
    const { memory, logger } = this.deps;
    const current = await memory.getSummary();
    if (!current.stale) return false;
    const revision = await memory.factsRevision();
    const facts = await memory.recent(SUMMARY_FACTS);
    if (facts.length === 0) {
      await memory.setSummary('', { basedOnRevision: revision });
      return true;
    }
    let input = '';
    for (const line of facts.map(factLine)) {
      if (input.length + line.length + 1 > SUMMARY_INPUT_CHARS) break;
      input += `${line}\n`;
    }
    try {
      const text = (
        await this.complete(
          [
            { role: 'system', content: SUMMARY_INSTRUCTIONS },
            { role: 'user', content: `Facts (most recently updated first):\n${input}` },
          ],
          signal,
        )
      ).trim();
      if (!text) throw new Error('the model returned an empty summary');
      await memory.setSummary(text, { basedOnRevision: revision });
      return true;
    } catch (err) {
      // The old summary stays; the revision gap makes the next pass try again.
      logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'memory summary not regenerated',
      );
      return false;
    }
  }

  private async complete(messages: ChatMessage[], signal?: AbortSignal): Promise<string> {
    const backend = typeof this.deps.backend === 'function' ? this.deps.backend() : this.deps.backend;
    const result = await backend.complete({
      messages,
      model: this.deps.model ?? backend.defaultModel,
      think: false,
      temperature: TEMPERATURE,
      ...(signal ? { signal } : {}),
    });
    if (result.reason === 'error' || result.reason === 'aborted')
      throw new Error(`the LLM call ended: ${result.reason}`);
    return result.content;
  }
}

/** `## What I remember about the user` + summary, or null when the summary is empty. */
export async function memoryBlock(memory: MemoryStore): Promise<string | null> {
  const { text } = await memory.getSummary();
  return text.trim() ? `${MEMORY_HEADING}\n\n${text.trim()}` : null;
}

function needsExtraction(
  session: SessionRecord,
  state: SessionMemoryState | undefined,
  maxAttempts: number,
): boolean {
  if (!state) return true;
  const lastActive = Date.parse(session.last_active);
  if (state.status === 'done')
    return state.extracted_at === null || lastActive > Date.parse(state.extracted_at);
  if (state.attempts < maxAttempts) return true;
  return state.attempted_at !== null && lastActive > Date.parse(state.attempted_at);
}

function factLine(f: MemoryFact): string {
  return `- ${f.category}/${f.key}: ${f.value}`;
}

function transcriptLines(messages: StoredMessage[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.kind === 'summary' || (m.role !== 'user' && m.role !== 'assistant')) continue;
    const text = (m.content ?? '').trim();
    if (!text) continue;
    const cut = text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)}…` : text;
    out.push(`${m.role === 'user' ? 'User' : 'Assistant'}: ${cut}`);
  }
  return out;
}

/** Groups lines into chunks of at most `maxChars`; beyond `maxChunks`, keeps the first and the latest. */
function chunkLines(lines: string[], maxChars: number, maxChunks: number): string[] {
  const chunks: string[] = [];
  let current = '';
  for (const line of lines) {
    if (current && current.length + line.length + 1 > maxChars) {
      chunks.push(current);
      current = '';
    }
    current += `${line}\n`;
  }
  if (current) chunks.push(current);
  if (chunks.length <= maxChunks) return chunks;
  return [chunks[0]!, ...chunks.slice(chunks.length - (maxChunks - 1))];
}
