import type { Worker } from 'bullmq';
import type { RedisClient } from '../shared/redis/connection';
import { keys } from '../shared/redis/keys';
import { logger } from '../shared/logger';
import type { ConcurrencyGovernor } from './concurrency-governor';
import type { QueueName } from '../shared/queues/names';
import { loadQueueSettings } from '../shared/queues/scheduler-settings';
import { shardConcurrency, shardCount, shardPosition } from '../shared/queues/shards';

/**
 * Keeps this process's BullMQ workers in line with the `scheduler-endpoints` rows, without a restart:
 * `concurrency` (null or no row: the env default the worker started with; a sharded queue's total is
 * split over its shards' workers) and `enabled` (false pauses
 * the worker locally, so its jobs wait; true resumes it if this follower paused it). Reloads on every cache-epoch broadcast
 * (the management API bumps the epoch after each write) and, for a missed broadcast, every `pollMs`.
 */
export class SchedulerSettingsFollower {
  private readonly defaults = new Map<Worker, number>();
  /** Workers this follower paused: it resumes only those, never one paused by someone else (a drain, a test). */
  private readonly pausedHere = new Set<Worker>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly onMessage = (channel: string) => {
    if (channel === keys.cacheChannel()) void this.refresh();
  };

  constructor(private readonly workers: Worker[], private readonly sub: RedisClient, private readonly pollMs = 5000, private readonly governor?: ConcurrencyGovernor) {
    for (const w of workers) this.defaults.set(w, w.concurrency);
  }

  async start(): Promise<void> {
    this.sub.on('smessage', this.onMessage);
    await this.sub.ssubscribe(keys.cacheChannel());
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.pollMs);
    this.timer.unref();
  }

  /** Reloads and applies the settings; overlapping calls coalesce into one more pass. */
  refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.apply().catch((err) => logger.warn({ err }, 'could not load scheduler settings; keeping the current ones'));
      } while (this.again);
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async apply(): Promise<void> {
    // a shard's worker (`chat-interactive-1`) follows its queue's row, with its share of the concurrency
    const position = (w: Worker) => shardPosition(w.name) ?? { queue: w.name as QueueName, index: 0 };
    const settings = await loadQueueSettings([...new Set(this.workers.map((w) => position(w).queue))]);
    for (const w of this.workers) {
      const { queue } = position(w);
      const s = settings.get(queue)!;
      // an express worker keeps its few slots (CHAT_EXPRESS_CONCURRENCY); pause and resume apply to it too
      const concurrency = s.concurrency === null || position(w).express ? this.defaults.get(w)! : shardConcurrency(s.concurrency, shardCount(queue));
      if (this.governor?.governs(w)) {
        if (this.governor.baseOf(w) !== concurrency) {
          this.governor.setBase(w, concurrency);
          logger.info({ queue: w.name, concurrency }, 'worker concurrency changed');
        }
      } else if (w.concurrency !== concurrency) {
        w.concurrency = concurrency;
        logger.info({ queue: w.name, concurrency }, 'worker concurrency changed');
      }
      if (!s.enabled && !w.isPaused()) {
        this.pausedHere.add(w);
        await w.pause(true);
        logger.info({ queue: w.name }, 'worker paused by scheduler settings');
      } else if (s.enabled && this.pausedHere.has(w)) {
        this.pausedHere.delete(w);
        await w.resume();
        logger.info({ queue: w.name }, 'worker resumed by scheduler settings');
      }
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.sub.off('smessage', this.onMessage);
  }
}
