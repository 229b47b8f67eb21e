import type { SseWriter } from '../../sse';
import { config } from '../../../shared/config/env';

const PING = JSON.stringify({ type: 'ping' });

/**
 * Anthropic's keepalive on a messages stream: its streaming document, "Event streams may also include
 * any number of `ping` events", with no place given; a stream that has written nothing for
 * MESSAGES_PING_INTERVAL_MS (an upstream reasoning, a slow first token, a compaction pass) writes
 * `event: ping`, so a proxy's idle timeout does not cut it. The official SDKs skip ping events
 * wherever they come (core/streaming.js). Stops when the stream ends or its client leaves.
 */
export function pingWhenQuiet(sse: SseWriter): void {
  sse.keepAlive(config().messagesPingIntervalMs, PING, 'ping');
}
