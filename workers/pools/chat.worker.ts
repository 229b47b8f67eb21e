import type { Worker } from 'bullmq';
import { createWorker } from '../../shared/queues/create-worker';
import { chatComplete } from '../providers/openai/chatComplete';
import { chatComplete as anthropicChat } from '../providers/anthropic/chatComplete';
import { messages as anthropicMessages } from '../providers/anthropic/messages';
import { completions as anthropicCompletions } from '../providers/anthropic/completions';
import { chatComplete as azureChat } from '../providers/azure/chatComplete';
import { platformCredential } from '../credentials';
import { decrypt } from '../../shared/crypto';
import { config } from '../../shared/config/env';
import type { WorkerRuntime } from '../runtime';
import type { ChatJob } from '../../shared/queues/payloads';
import { ApiError } from '../../shared/errors/ApiError';

/** Picks the adapter for the target's wire family. */
async function runChat(job: ChatJob, signal: AbortSignal, emit: (c: string) => void) {
  const t = job.target;
  const apiKey = t.sealedCallerKey ? decrypt(t.sealedCallerKey) : await platformCredential(t.providerId);
  const call = { baseUrl: t.baseUrl, settings: t.settings, apiKey, callerKey: !!t.sealedCallerKey, upstreamModel: t.upstreamModel, signal, deadline: job.deadline };
  const stream = job.stream ? { emit, includeUsage: job.includeUsage } : undefined;
  switch (t.kind) {
    case 'openai':
      if (job.operation === 'messages') break; // the API bypasses natively only to messages upstreams
      return chatComplete(call, job.operation, job.body, job.publicModel, stream);
    case 'anthropic':
      if (job.operation === 'messages') return anthropicMessages(call, job.body, job.publicModel, stream?.emit, job.anthropicBeta);
      if (job.operation === 'chat') return anthropicChat(call, job.body, job.publicModel, stream);
      return anthropicCompletions(call, job.body, job.publicModel, stream);
    case 'azure':
      if (job.operation === 'messages') break;
      return azureChat(call, job.operation, job.body, job.publicModel, stream);
    default:
      break;
  }
  throw new ApiError(502, 'upstream_unsupported', `No ${job.operation} adapter for upstream kind '${t.kind}'.`);
}

/**
 * The chat pool: both chat lanes, each with its own concurrency so background work never takes an
 * interactive slot. The usage event goes into the usage outbox with the result publish.
 */
export function startChatWorkers(rt: WorkerRuntime): Worker[] {
  const cfg = config();
  const lanes = [
    ['chat-interactive', cfg.chatInteractiveConcurrency],
    ['chat-background', cfg.chatBackgroundConcurrency],
  ] as const;
  return lanes.map(([queue, concurrency]) =>
    createWorker(rt, queue, concurrency, async (job, ctx) => {
      const d = job.data;
      const outcome = await runChat(d, ctx.signal, ctx.emit);
      ctx.usage('chat', {
        inputTokens: outcome.usage.inputTokens,
        outputTokens: outcome.usage.outputTokens,
        passthrough: !!d.target.sealedCallerKey,
      });
      return outcome.response ?? { usage: outcome.usage };
    }),
  );
}
