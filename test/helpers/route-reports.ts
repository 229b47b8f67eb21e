import crypto from 'crypto';
import { createRedis, type RedisClient } from '../../shared/redis/connection';
import { config } from '../../shared/config/env';
import { keys } from '../../shared/redis/keys';
import type { ReplyMessage } from '../../shared/queues/reply-messages';
import type { RouteMeta } from '../../shared/queues/route-meta';
import { waitFor } from './wait';

/** The reply channels of the pod with this POD_ID (a web process spawned with it). */
export const replyChannelsOf = (podId: string): string[] => Array.from({ length: config().usageOutboxStreams }, (_, i) => keys.replyChannel(podId, i));

export interface RouteReports {
  /** Each report as the request id and the route it names, in arrival order. */
  seen: Array<{ requestId: string; route: RouteMeta }>;
  /**
   * Resolves once every message published on the channels before this call has arrived (a marker
   * each channel's pod ignores is published after them and awaited): a negative check needs no sleep.
   */
  caughtUp(redis: RedisClient): Promise<boolean>;
  close(): void;
}

/**
 * Listens on a pod's reply channels for the route reports of long routed jobs (`m` messages,
 * shared/queues/route-report.ts).
 */
export async function routeReports(channels: readonly string[]): Promise<RouteReports> {
  const sub = createRedis('subscriber');
  const listening = new Set(channels);
  const seen: RouteReports['seen'] = [];
  const markers = new Set<string>();
  sub.on('smessage', (channel: string, raw: string) => {
    if (!listening.has(channel)) return;
    const m = JSON.parse(raw) as ReplyMessage | { i: string; t: 'marker' };
    if (m.t === 'm') seen.push({ requestId: m.i, route: m.d });
    else if (m.t === 'marker') markers.add(m.i);
  });
  await Promise.all(channels.map((ch) => sub.ssubscribe(ch)));
  return {
    seen,
    async caughtUp(redis) {
      const ids = channels.map((ch) => {
        const i = `marker-${crypto.randomBytes(4).toString('hex')}`;
        void redis.spublish(ch, JSON.stringify({ i, t: 'marker' }));
        return i;
      });
      return waitFor(() => ids.every((i) => markers.has(i)), 5000, 10);
    },
    close: () => sub.disconnect(),
  };
}
