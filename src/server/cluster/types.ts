/**
 * What the run registry needs from other `navi serve` processes sharing its database: a claim
 * on a session that only one process can hold, the events of runs executed elsewhere, who
 * watches a session elsewhere, and a way to stop or answer a run elsewhere. Without a cluster
 * (SQLite) the registry works alone, exactly as it always has.
 */
import type { ServerEvent } from '../../protocol/events.js';
import type { RunSubscriber } from '../run-subscriber.js';

/** The hold of one process on one session for one run. */
export interface ClusterClaim {
  /**
   * Subscribed to the run before it starts: receives every stamped event and writes them, in
   * batches and in order, where the other processes read them.
   */
  readonly subscriber: RunSubscriber;
  /**
   * The run's terminal event, before anyone sees it: written with everything before it, the
   * session's row removed in the same commit, then the session freed. Once it resolves, every
   * process finds the session free. Never rejects.
   */
  end(terminal: ServerEvent, json: string): Promise<void>;
  /** An event after the run's end (post-turn compression), for the session's watchers elsewhere. */
  after(event: ServerEvent, json: string): void;
  /** Frees the session (after `end`, or for a run that never started). Never rejects. */
  release(): Promise<void>;
}

/** What a process answers for the others about its own runs. */
export interface ClusterControl {
  /** Stops the run `runId` of the session. False when this process does not run it. */
  stop(sessionId: string, runId: string): boolean;
  /** Answers a confirmation of run `runId`. False when no such question is pending. */
  answer(sessionId: string, runId: string, callId: string, approved: boolean): boolean;
  /** The session's claim was lost (the connection holding it dropped, and someone else took it). */
  lost(sessionId: string, runId: string): void;
}

export interface RunCluster {
  /** This process's id among the members. */
  readonly memberId: string;
  /** Sets who answers the others' requests; called once by the registry. */
  serve(control: ClusterControl): void;
  /** Claims the session for a run of this process; undefined when another process runs one. */
  claim(sessionId: string, runId: string): Promise<ClusterClaim | undefined>;
  /**
   * Delivers to `subscriber` the runs other processes execute in the session (from their first
   * event), and tells the others a socket watches it. Returns the function that stops it.
   */
  watch(sessionId: string, subscriber: RunSubscriber): () => void;
  /** Resolves once the others have been told of every watch and unwatch so far. */
  announced(): Promise<void>;
  /** Whether a socket watches the session on another process (as far as this one has heard). */
  watchedElsewhere(sessionId: string): boolean;
  /** Sends an event outside any run to the session's watchers on other processes. */
  note(sessionId: string, event: ServerEvent): void;
  /** Whether another process runs something in the session now. */
  activeElsewhere(sessionId: string): Promise<boolean>;
  /** Resolves once no other process runs anything in the session. */
  idleElsewhere(sessionId: string): Promise<void>;
  /** Stops the session's run on the process that runs it. False when none does. */
  stop(sessionId: string): Promise<boolean>;
  /** Answers a confirmation of the session's run on the process that runs it. */
  answer(sessionId: string, callId: string, approved: boolean): Promise<boolean>;
  /** Leaves the cluster: tells the others, closes its connections (releasing its claims). */
  close(): Promise<void>;
}
