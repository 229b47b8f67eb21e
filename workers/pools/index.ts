import type { Worker } from 'bullmq';
import type { PoolName } from '../../shared/queues/names';
import type { WorkerRuntime } from '../runtime';
import { startChatWorkers } from './chat.worker';
import { startImagesWorkers } from './images.worker';
import { startEmbeddingsWorkers } from './embeddings.worker';
import { startAudioWorkers } from './audio.worker';
import { startSystemoneWorkers } from './systemone.worker';
import { startSearchWorkers } from './search.worker';

/**
 * Pool name → starter. Pools without a starter yet are listed as undefined so a process asked to run
 * them fails at start with a clear message. Later issues fill them in.
 */
export const POOL_STARTERS: Record<PoolName, ((rt: WorkerRuntime) => Worker[]) | undefined> = {
  chat: startChatWorkers,
  embeddings: startEmbeddingsWorkers,
  images: startImagesWorkers,
  audio: startAudioWorkers,
  systemone: startSystemoneWorkers,
  search: startSearchWorkers,
};

export function implementedPools(): PoolName[] {
  return (Object.keys(POOL_STARTERS) as PoolName[]).filter((p) => POOL_STARTERS[p]);
}
