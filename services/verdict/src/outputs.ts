/**
 * Decrypted model outputs for scoring: an observation carries only its artifact ref; the fold
 * needs the output text. Reads are cached per artifact ref, 16 at a time.
 */
import pLimit from 'p-limit';
import { getArtifact, type Keyring } from '@shadowplane/artifacts';
import { isShadowplaneError, type ObsMessage } from '@shadowplane/contracts';
import type { Logger } from '@shadowplane/telemetry';

type ArtifactStore = Parameters<typeof getArtifact>[0];

/** The output texts of artifact refs read so far; null = gone for good (the store said not_found). */
export class OutputCache {
  private readonly cache = new Map<string, string | null>();
  private readonly limit = pLimit(16);

  /** `keyring` null → outputs unavailable: every observation's output is null (unscored). */
  constructor(
    private readonly artifacts: ArtifactStore,
    private readonly keyring: Keyring | null,
    private readonly log: Logger,
  ) {}

  /**
   * The messages with each observation's `output_text` filled from its artifact (null when
   * unavailable). A missing or expired artifact is cached as gone; other read failures are retried
   * on the next fill.
   */
  async fill(messages: Iterable<ObsMessage>): Promise<ObsMessage[]> {
    const list = [...messages];
    const keyring = this.keyring;
    if (keyring) {
      const missing = [
        ...new Set(
          list.flatMap((m) =>
            m.schema === 'shadow.observation/v1' &&
            m.output_text === undefined &&
            m.artifact_ref &&
            !this.cache.has(m.artifact_ref)
              ? [m.artifact_ref]
              : [],
          ),
        ),
      ];
      await Promise.all(
        missing.map((ref) =>
          this.limit(async () => {
            try {
              this.cache.set(ref, (await getArtifact(this.artifacts, keyring, ref)).output_text);
            } catch (e) {
              this.log.warn({ err: e }, 'artifact unavailable; output unscored');
              // missing or expired is permanent; other failures are retried on the next fold
              if (isShadowplaneError(e) && e.code === 'not_found') this.cache.set(ref, null);
            }
          }),
        ),
      );
    }
    return list.map((m) =>
      m.schema !== 'shadow.observation/v1' || m.output_text !== undefined || !m.artifact_ref
        ? m
        : { ...m, output_text: keyring ? (this.cache.get(m.artifact_ref) ?? null) : null },
    );
  }

  /** Drops a cached output so the next fill reads the artifact afresh. */
  forget(ref: string): void {
    this.cache.delete(ref);
  }

  /** True when the output of `ref` is gone for good (no keyring, or the store said not_found). */
  gone(ref: string): boolean {
    return !this.keyring || this.cache.get(ref) === null;
  }
}
