import type { AppContext } from '../../context';
import { keys } from '../../../shared/redis/keys';
import { logger } from '../../../shared/logger';
import { cancelJob } from '../../../shared/queues/cancel';
import type { QueueName } from '../../../shared/queues/names';

/**
 * Cancels of background responses across pods. A background response runs on the pod that took its
 * create, while its cancel may come to any pod: that pod publishes the response's id on one sharded
 * channel, and the pod running it aborts its run as a cancel made there does (the upstream turn,
 * search or summary pass in flight aborted, not billed unless its worker had already answered). A
 * pod subscribes with its first background response, before that response is stored (so no cancel of
 * it can come first); a message lost while the subscriber reconnects leaves the run's own checks
 * (a hosted search loop's before each turn, a lane wait's between tries) to stop it.
 */
const listening = new WeakMap<AppContext, Promise<void>>();

/** Subscribes the pod (once); `abortRun` aborts the run of a response id if it runs here. A failed subscription is logged, and tried again with the next response. */
export function listenForCancels(ctx: AppContext, abortRun: (responseId: string) => void): Promise<void> {
  let subscribed = listening.get(ctx);
  if (subscribed) return subscribed;
  const channel = keys.backgroundCancelChannel();
  const onMessage = (ch: string, responseId: string) => {
    if (ch === channel) abortRun(responseId);
  };
  ctx.sub.on('smessage', onMessage);
  subscribed = ctx.sub.ssubscribe(channel).then(
    () => undefined,
    (err: unknown) => {
      ctx.sub.off('smessage', onMessage);
      listening.delete(ctx);
      logger.warn({ err }, 'background cancels not subscribed');
    },
  );
  listening.set(ctx, subscribed);
  return subscribed;
}

/** A cancel made on this pod, for the pod that runs the response (if it is another). */
export async function publishCancel(ctx: AppContext, responseId: string): Promise<void> {
  await ctx.redis.spublish(keys.backgroundCancelChannel(), responseId).catch((err: unknown) => logger.warn({ err, responseId }, 'background cancel not published'));
}

/** Cancels the job a background response's lease names (`<queue> <job id>`: keys.backgroundJob's value), if it names one. */
export async function cancelLeasedJob(ctx: AppContext, lease: string | null | undefined): Promise<void> {
  const [queue, jobId] = lease?.split(' ') ?? [];
  if (queue && jobId) await cancelJob(ctx.redis, ctx.queues, queue as QueueName, jobId);
}
