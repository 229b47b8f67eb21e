import type { Worker } from 'bullmq';
import { createExpressWorkers, createShardWorkers, type JobProcessor } from '../../shared/queues/create-worker';
import { chatComplete } from '../providers/openai/chatComplete';
import { chatComplete as anthropicChat } from '../providers/anthropic/chatComplete';
import { messages as anthropicMessages, type HandedIdsRecorder } from '../providers/anthropic/messages';
import { completions as anthropicCompletions } from '../providers/anthropic/completions';
import { chatComplete as geminiChat } from '../providers/gemini/chatComplete';
import { chatComplete as bedrockChat } from '../providers/bedrock/chatComplete';
import { chatComplete as azureChat } from '../providers/azure/chatComplete';
import { platformCredential, platformCredentialNow } from '../credentials';
import { decrypt } from '../../shared/crypto';
import { config } from '../../shared/config/env';
import type { WorkerRuntime } from '../runtime';
import type { ChatJob, UpstreamTarget } from '../../shared/queues/payloads';
import { poolState } from '../routing/pool-state';
import { routeRequest } from '../routing/route-request';
import { ROUTE_RESULT_KEY } from '../../shared/queues/route-meta';
import { ApiError } from '../../shared/errors/ApiError';
import type { CancelSignal } from '../../shared/cancel-source';
import { detailTokens } from './detail-tokens';
import { sameClaudeModel, withoutOtherModelsThinking } from '../providers/anthropic/other-model-thinking';
import { merged } from '../../shared/merged';
import { servedPriceMicros } from '../../shared/limits/usage-cost';
import { servedDelta, withLegacyTierDelta, withTierSent } from './service-tier';
import { audioMicros } from './audio-price';
import { hasImageUrls, inlineImageUrls } from '../providers/inline-images';
import { withoutSignedCallIds } from '../providers/unsigned-call-ids';
import { recordHandedIds } from '../../shared/tenancy/handed-out-ids';
import { logger } from '../../shared/logger';

/** One attempt on one deployment: picks the adapter for the deployment's wire family. */
async function runChat(job: ChatJob, t: UpstreamTarget, signal: CancelSignal, emit: (c: string) => void, record: HandedIdsRecorder | undefined, readsTier: boolean) {
  // no await when the credential is at hand: the request reaches undici in the turn the job began
  const atHand = t.sealedCallerKey ? undefined : platformCredentialNow(t.providerId);
  const apiKey = t.sealedCallerKey ? decrypt(t.sealedCallerKey) : atHand ? atHand.key : await platformCredential(t.providerId);
  const cfg = config();
  const call = {
    baseUrl: t.baseUrl,
    settings: t.settings,
    apiKey,
    callerKey: !!t.sealedCallerKey,
    upstreamModel: t.upstreamModel,
    baseModel: t.baseModel,
    tokenizer: t.tokenizer,
    signal,
    deadline: job.deadline,
    retries: 0, // the pool's router retries (workers/routing)
    firstByteTimeoutMs: cfg.poolFirstByteTimeoutMs,
    readsTier,
  };
  const stream = job.stream ? { emit, includeUsage: job.includeUsage } : undefined;
  // tool-call ids carrying a Gemini thought signature go to any other kind without it (unsigned-call-ids.ts)
  const body = t.kind === 'gemini' ? job.body : withoutSignedCallIds(job.operation, job.body);
  switch (t.kind) {
    case 'openai':
      if (job.operation === 'messages') break; // the API bypasses natively only to messages upstreams
      return chatComplete(call, job.operation, body, job.publicModel, stream);
    case 'anthropic':
      // ids the answer hands the org on the platform's shared workspace, which it may name again (handed-ids.ts)
      if (job.operation === 'messages') return anthropicMessages(call, body, job.publicModel, stream?.emit, job.anthropicBeta, call.callerKey ? undefined : record);
      if (job.operation === 'chat') return anthropicChat(call, body, job.publicModel, stream);
      return anthropicCompletions(call, body, job.publicModel, stream);
    case 'gemini':
      if (job.operation === 'chat') return geminiChat(call, body, job.publicModel, stream);
      if (job.operation === 'completions') return anthropicCompletions(call, body, job.publicModel, stream, geminiChat);
      break;
    case 'bedrock':
      if (job.operation === 'chat') return bedrockChat(call, body, job.publicModel, stream);
      if (job.operation === 'completions') return anthropicCompletions(call, body, job.publicModel, stream, bedrockChat);
      break;
    case 'azure':
      if (job.operation === 'messages') break;
      return azureChat(call, job.operation, body, job.publicModel, stream);
    default:
      break;
  }
  throw new ApiError(502, 'upstream_unsupported', `No ${job.operation} adapter for upstream kind '${t.kind}'.`);
}

/**
 * The job as a fallback model's deployment gets it: a Claude one (Anthropic-native or Bedrock) without
 * the signed thinking of the model asked for, which is tied to that model, unless it serves that very
 * Claude model on another platform or account, where the signatures hold (docs/routing.md "Signed
 * thinking across Claude deployments"); the other kinds drop it anyway (withoutAnthropicThinking).
 */
function onFallback(job: ChatJob, t: UpstreamTarget): ChatJob {
  if (t.kind !== 'anthropic' && t.kind !== 'bedrock') return job;
  if (sameClaudeModel(job.route?.find((s) => !s.fallback)?.deployments ?? [job.target], t)) return job;
  const body = withoutOtherModelsThinking(job.operation, job.body);
  return body === job.body ? job : merged(job, { body });
}

/**
 * The job with its image URLs downloaded (through the SSRF guard) and inlined as data URLs, when a
 * deployment it may be routed to inlines them (`inline_image_urls`: a server the operator runs, which
 * would fetch the URL from inside the operator's network); undefined when none does or there is no
 * URL (other media by URL, which such a deployment refuses, count as one). Done once, before any
 * deployment is picked: a refused URL fails the request before any
 * upstream is called (nothing billed), whichever deployment the draw would have picked, and the bytes
 * serve every attempt. A deployment that does not inline (a vendor's API) still gets the URLs.
 */
function inlinedJob(job: ChatJob, signal: CancelSignal): Promise<ChatJob> | undefined {
  const inlines = job.route?.length ? job.route.some((s) => s.deployments.some((dep) => dep.inlineImageUrls)) : !!job.target.inlineImageUrls;
  if (!inlines || !hasImageUrls(job.operation, job.body)) return undefined;
  return inlineImageUrls(job.operation, job.body, signal, job.deadline).then((body) => merged(job, { body }));
}

/**
 * Where the native bypass's answer records the ids it hands the organization, with the workspace that
 * made them (the deployment's provider: its credential); not recorded, the ids are refused on the
 * org's next request as any other's, and the answer still goes out.
 */
function handedIdsRecorder(rt: WorkerRuntime, orgId: string, workspace: string): HandedIdsRecorder {
  return (ids) => recordHandedIds(rt.redis, orgId, ids, workspace).catch((err) => logger.warn({ err }, 'recording handed-out ids failed'));
}

/**
 * The chat pool: both chat lanes, each with its own concurrency so background work never takes an
 * interactive slot; each lane's worker takes jobs from every shard of its queue (QUEUE_SHARDS_CHAT),
 * and the interactive lane's express slots (CHAT_EXPRESS_CONCURRENCY) from its express queue. The
 * usage event goes into the usage outbox with the result publish.
 */
export function startChatWorkers(rt: WorkerRuntime): Worker[] {
  const cfg = config();
  const lanes = [
    ['chat-interactive', cfg.chatInteractiveConcurrency],
    ['chat-background', cfg.chatBackgroundConcurrency],
  ] as const;
  const state = poolState(rt);
  const processor: JobProcessor<'chat-interactive' | 'chat-background'> = async (job, ctx) => {
    // a job from an older web pod (rolling deploy) carries its asked tier's single difference: read as the per-tier ones
    const d = withLegacyTierDelta(job.data);
    // no await for a job with nothing to inline: its request reaches undici in the turn the job began
    const inlining = inlinedJob(d, ctx.signal);
    const inlined = inlining && (await inlining);
    const routed = await routeRequest(
      state,
      d,
      ctx.signal,
      ctx.emit,
      (dep, emit, step) => {
        const j = withTierSent(inlined && dep.inlineImageUrls ? inlined : d, dep, step);
        // the tier an answer reports is read only on a step that prices one (service-tier.ts servedDelta)
        return runChat(step.fallback ? onFallback(j, dep) : j, dep, ctx.signal, emit, d.operation === 'messages' ? handedIdsRecorder(rt, d.orgId, dep.providerId) : undefined, step.tierPriceDeltas !== undefined);
      },
      ctx.span,
      ctx.route,
    );
    const { outcome } = routed;
    // a fallback with other prices than the model asked for, or a priced service tier served (service-tier.ts): the
    // difference goes on the event, billed at the model and tier that served
    const billed = servedDelta(routed.step, 'servedTier' in outcome ? outcome.servedTier : undefined);
    const repriced =
      servedPriceMicros(outcome.usage, billed) +
      // audio tokens the request asked for, at the audio price (audio-price.ts)
      audioMicros(routed.step, billed, outcome.usage, outcome.response, outcome.streamedUsage) +
      // one web search call on a step whose model is priced per call (api/dispatch/step-prices.ts): OpenAI reports no count
      (routed.step.webSearchCallMicros ?? 0);
    ctx.usage('chat', {
      inputTokens: outcome.usage.inputTokens,
      outputTokens: outcome.usage.outputTokens,
      passthrough: !!d.target.sealedCallerKey,
      deployment: routed.deployment,
      ...(repriced ? { units: { cost_micros: repriced } } : {}),
      ...detailTokens(outcome.response ?? { usage: outcome.streamedUsage }),
    });
    // the route set on the answer itself (this job's own), not on a spread's copy (shared/merged.ts)
    const result = (outcome.response ?? { usage: outcome.usage }) as Record<string, unknown>;
    result[ROUTE_RESULT_KEY] = routed.meta;
    return result;
  };
  const workers: Worker[] = lanes.flatMap(([queue, concurrency]) => createShardWorkers(rt, queue, concurrency, processor));
  // the express slots: only jobs of orgs with few in flight (EXPRESS_MAX_IN_FLIGHT) reach them (shared/queues/express.ts)
  if (cfg.chatExpressConcurrency > 0) workers.push(...createExpressWorkers(rt, 'chat-interactive', cfg.chatExpressConcurrency, processor));
  return workers;
}
