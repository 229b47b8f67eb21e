import type { RedisClient } from '../redis/connection';
import { keys } from '../redis/keys';
import { logger } from '../logger';

/**
 * Operator kill switches. Engaging one makes the feature's routes answer 503 `<code>` while staying
 * registered; releasing it restores service without a restart.
 */
export const FEATURES = {
  transcription: 'audio_transcription_disabled',
  systemone: 'systemone_disabled',
  embeddings: 'embeddings_disabled',
  web_search: 'web_search_disabled',
  image_generation: 'image_generation_disabled',
  batches: 'batches_disabled',
} as const;

export type Feature = keyof typeof FEATURES;

export function isFeature(name: string): name is Feature {
  return Object.prototype.hasOwnProperty.call(FEATURES, name);
}

/** Writes a switch (RedisClient hash, then a broadcast so every pod updates at once). */
export async function setSwitch(redis: RedisClient, feature: Feature, engaged: boolean): Promise<void> {
  if (engaged) await redis.hset(keys.switches(), feature, 'engaged');
  else await redis.hdel(keys.switches(), feature);
  await redis.publish(keys.switchesChannel(), feature);
}

export async function readSwitches(redis: RedisClient): Promise<Record<Feature, boolean>> {
  const raw = await redis.hgetall(keys.switches());
  return Object.fromEntries(Object.keys(FEATURES).map((f) => [f, raw[f] === 'engaged'])) as Record<Feature, boolean>;
}

/**
 * A pod's view of the switches: loaded at start, refreshed on every broadcast and, as a fallback
 * for a missed broadcast, every `pollMs` (default 500 ms), so a change reaches every pod within a second.
 */
export class SwitchBoard {
  private state: Record<Feature, boolean> = Object.fromEntries(Object.keys(FEATURES).map((f) => [f, false])) as Record<Feature, boolean>;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly redis: RedisClient, private readonly sub: RedisClient, private readonly pollMs = 500) {}

  async start(): Promise<void> {
    await this.refresh();
    this.sub.on('message', (channel: string) => {
      if (channel === keys.switchesChannel()) void this.refresh();
    });
    await this.sub.subscribe(keys.switchesChannel());
    this.timer = setInterval(() => void this.refresh(), this.pollMs);
    this.timer.unref();
  }

  async refresh(): Promise<void> {
    try {
      this.state = await readSwitches(this.redis);
    } catch (err) {
      logger.warn({ err }, 'could not read kill switches; keeping the last known state');
    }
  }

  engaged(feature: Feature): boolean {
    return this.state[feature];
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
