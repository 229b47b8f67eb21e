import { keys } from '../redis/keys';
import { UsageDrainer, type UsageDrainerOptions } from './usage-drainer';

/**
 * One UsageDrainer per usage outbox stream (USAGE_OUTBOX_STREAMS): each stream is in its own slot and
 * has its own consumer group, so each needs its own blocking reader. Started and stopped together.
 */
export class UsageDrainers {
  readonly drainers: UsageDrainer[];

  constructor(opts: Omit<UsageDrainerOptions, 'stream' | 'deadLetters'> = {}) {
    this.drainers = keys.usageStreams().map((s) => new UsageDrainer({ ...opts, ...s }));
  }

  async start(): Promise<void> {
    await Promise.all(this.drainers.map((d) => d.start()));
  }

  async stop(graceMs?: number): Promise<void> {
    await Promise.all(this.drainers.map((d) => d.stop(graceMs)));
  }
}
