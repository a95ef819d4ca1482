/**
 * The images of the message being written: prepared for sending as they are added (see
 * images.ts), kept within what one message may carry, and checked against what the session's
 * model can see. When that model is known to read text only (`GET /llm/status`, or the server
 * refusing the message with IMAGES_UNSUPPORTED), the composer says so before anything is sent
 * and offers to attach the images as files instead.
 */
import { reactive } from 'vue';
import type { ChatEntry } from './entries.js';
import {
  describeBytes,
  ImageProblem,
  MAX_MESSAGE_IMAGE_CHARS,
  type PreparedImage,
  prepareImage,
  textOnlyNote,
  type VisionStatus,
} from './images.js';

export interface DraftImage extends PreparedImage {
  id: number;
}

export interface ImageDraftsState {
  items: DraftImage[];
  /** Images still being read or shrunk: the message waits for them. */
  preparing: number;
  /** A problem with an image just added (too big, unreadable), until dismissed or the next send. */
  note: string | null;
  /** Set when the session's model is known not to see images: what to tell the person. */
  textOnly: string | null;
}

export interface ImageDraftsDeps {
  /** What the server says about the default model (`GET /llm/status`). */
  status(): Promise<VisionStatus>;
  /** Attaches files as uploads (the way for images the model cannot see, or that cannot be read). */
  attachAsFiles(files: File[]): void;
  /** Prepares one image; the browser's canvas by default. */
  prepare?(file: File): Promise<PreparedImage>;
}

export class ImageDrafts {
  readonly state: ImageDraftsState = reactive({ items: [], preparing: 0, note: null, textOnly: null });
  /** See `sessionModelKey`: null while the session uses the default model. */
  private modelKey: string | null = null;
  private nextId = 1;
  /** The images of the last message sent, until the server has taken or refused it. */
  private lastSent: DraftImage[] = [];
  private checks = 0;

  constructor(private readonly deps: ImageDraftsDeps) {}

  /** Base64 characters of the images in the draft. */
  get chars(): number {
    return this.state.items.reduce((sum, image) => sum + image.dataUri.length, 0);
  }

  /** The images block sending: some are still being prepared, or the model cannot see them. */
  get blocksSending(): boolean {
    return this.state.preparing > 0 || (this.state.textOnly !== null && this.state.items.length > 0);
  }

  /** Adds an image; images prepared side by side keep the order they were added in. */
  async add(file: File): Promise<void> {
    // Taken before preparing: a small image added second is ready first, and must not go first.
    const id = this.nextId++;
    this.state.preparing += 1;
    try {
      const prepared = await (this.deps.prepare ?? prepareImage)(file);
      if (this.chars + prepared.dataUri.length > MAX_MESSAGE_IMAGE_CHARS) {
        this.state.note = `“${prepared.name}” does not fit in this message beside the other images (together they may have about ${describeBytes((MAX_MESSAGE_IMAGE_CHARS / 4) * 3)}). Send it with the next message, or attach it as a file.`;
        return;
      }
      const later = this.state.items.findIndex((image) => image.id > id);
      const image = { ...prepared, id };
      if (later < 0) this.state.items.push(image);
      else this.state.items.splice(later, 0, image);
      if (this.state.items.length === 1) void this.checkVision();
    } catch (err) {
      if (err instanceof ImageProblem && err.unreadable) {
        this.deps.attachAsFiles([file]);
        this.state.note = `${err.message} It is attached as a file instead.`;
      } else {
        this.state.note = err instanceof Error ? err.message : String(err);
      }
    } finally {
      this.state.preparing -= 1;
    }
  }

  remove(image: DraftImage): void {
    const index = this.state.items.indexOf(image);
    if (index >= 0) this.state.items.splice(index, 1);
  }

  /** "Attach as files instead": every image of the draft becomes an upload. */
  attachAllAsFiles(): void {
    const files = this.state.items.map((image) => image.file);
    this.state.items.splice(0);
    this.deps.attachAsFiles(files);
  }

  /** The session's model changed (model picker, profile): what was known about images no longer holds. */
  setModel(key: string | null): void {
    if (key === this.modelKey) return;
    this.modelKey = key;
    this.state.textOnly = null;
    if (this.state.items.length > 0) void this.checkVision();
  }

  /**
   * Learns whether the default model sees images. Another model is not known here: the server
   * checks it when the message arrives, and a refusal comes back through `refused`.
   */
  async checkVision(): Promise<void> {
    if (this.modelKey !== null) return;
    const check = ++this.checks;
    try {
      const status = await this.deps.status();
      if (check === this.checks && this.modelKey === null) this.state.textOnly = textOnlyNote(status);
    } catch {
      // Not known: the server checks again when the message is sent.
    }
  }

  /** Takes the images for sending (as `data:` URIs), keeping them until the server takes the message. */
  take(): string[] {
    this.lastSent = this.state.items.splice(0);
    this.state.note = null;
    return this.lastSent.map((image) => image.dataUri);
  }

  /** The server took the last message (its run started): its images are its own now. */
  accepted(): void {
    this.lastSent = [];
  }

  /**
   * The server refused the images of the message this draft sent last (IMAGES_UNSUPPORTED):
   * they come back, with its words. False when this draft has no message waiting for an answer
   * (the refusal is of something else, such as an edited message).
   */
  refused(message: string): boolean {
    if (this.lastSent.length === 0) return false;
    if (this.state.items.length === 0) this.state.items.push(...this.lastSent);
    this.lastSent = [];
    this.state.textOnly = message;
    return true;
  }
}

/**
 * Takes back the bubble of a message the server refused before a run began (its images were
 * for a text-only model): the newest entry, when it is a user message with images. Nothing was
 * stored, so after a reload it would be gone too.
 */
export function withdrawRefusedMessage(entries: ChatEntry[]): void {
  const last = entries[entries.length - 1];
  if (last?.kind === 'user' && last.images.length > 0) entries.pop();
}
