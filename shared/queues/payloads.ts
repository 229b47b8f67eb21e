import type { EmbeddingType } from '../embeddings/encodings';
import type { QueueName } from './names';
import type { ProviderKind, ProviderSettings } from '../db/models/Provider';
import type { QuestionPlan } from '../systemone/types';
import type { TraceCarrier } from '../tracing/trace';
import type { LogContext } from '../metering/request-log';
import type { UsageRecord } from '../metering/usage';
import type { CostPrices } from '../limits/usage-cost';

/** Fields every job carries, whatever its queue. */
export interface JobEnvelope {
  requestId: string;
  /** The pod's reply channel. */
  replyTo: string;
  /** The channel's subscription epoch when the job was added (shared/queues/reply-store.ts); absent in old jobs. */
  replyEpoch?: string;
  /** Absolute deadline (epoch ms); a worker drops a job whose deadline passed while it waited. */
  deadline: number;
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
  /** The model id exactly as the caller sent it; responses report it. */
  publicModel: string;
  /**
   * The catalog id a routing plan's alias named (`-background` kept), when the caller sent an alias:
   * the usage event is recorded, and so priced, as it (shared/metering/usage.ts). Absent: publicModel.
   */
  usageModel?: string;
  lane: string;
  stream: boolean;
  /** W3C trace context of the pod's enqueue span when tracing is on: the worker continues the trace. */
  trace?: TraceCarrier;
  /** A line of a batch (docs/batches.md): its usage is priced at the model's prices times `multiplier`. */
  batch?: BatchPricing;
  /**
   * The usage event travels with the answer to the batch runner, which bills it with the line (a
   * batch line's jobs: its model turns, which also carry `batch`, and its native searches, priced as
   * any search). Absent (an older pod): `batch` alone says so.
   */
  carryUsage?: true;
  /** What the request log row needs from the pod (arrival, admission, route, user); absent in old jobs. */
  log?: LogContext;
  /**
   * The pod reserved nothing on the key's limits under this request id (no limits on the key or its
   * project), so the usage drainer has no reservation to settle and does not look for one. Absent:
   * not known (an older pod), and the drainer looks.
   */
  unreserved?: true;
  /**
   * The pod takes a stream's result carrying the chunks its worker still held (`h`,
   * shared/queues/reply-messages.ts). Absent (an older pod): the worker sends them first, as before,
   * so pods and workers can be rolled in any order.
   */
  replyTail?: true;
}

/** micro-dollars per unit (shared/limits/usage-cost.ts) and the plan's batch multiplier. */
export interface BatchPricing {
  multiplier: number;
  prices: { input_token?: number; output_token?: number; audio_second?: number };
}

/** Where and how the worker calls the upstream. Secrets are not in here, except sealed ones. */
export interface UpstreamTarget {
  providerId: string;
  kind: ProviderKind;
  baseUrl: string;
  /** The provider's non-secret per-kind settings (api_version, region, preset). */
  settings?: ProviderSettings;
  upstreamModel: string;
  /** A Bedrock deployment's base model (shared/catalog/deployments.ts `base_model`), when its upstream does not name the model. */
  baseModel?: string;
  /** The model's tokenizer (an encoding, as the catalog resolved it): what an upstream reporting no usage is estimated with; absent in old jobs (the default one). */
  tokenizer?: string;
  /** The caller's own upstream key (passthrough), sealed with shared/crypto.encrypt. */
  sealedCallerKey?: string;
  /** The worker sends it image URLs as data URLs it downloaded through the SSRF guard (workers/providers/inline-images.ts); absent in old jobs (off). */
  inlineImageUrls?: boolean;
}

/** One deployment of a model pool, as the worker calls it (shared/catalog/deployments.ts). */
export interface PoolDeployment extends UpstreamTarget {
  name: string;
  weight: number;
  /** Lower is tried first. */
  priority: number;
  rpm: number | null;
  tpm: number | null;
  maxConcurrency: number | null;
}

/** A model the worker may serve a chat request from: the pool asked for, then each usable fallback. */
export interface RouteStep {
  /** The model's catalog id: its pool's Redis hash tag. */
  poolId: string;
  /** Its public id (reported in `x-service-fallback-model` when a fallback serves). */
  model: string;
  fallback: boolean;
  deployments: PoolDeployment[];
  /**
   * A fallback whose list prices differ from the model asked for: per unit, its prices minus that
   * model's (micro-dollars, shared/limits/usage-cost.ts priceDelta). When it serves, the usage event
   * states the difference in `units.cost_micros`, so the request is billed at the model that served.
   * Absent (same prices, or a job from an older pod): billed at the model asked for.
   */
  priceDelta?: CostPrices;
  /**
   * A chat request on the platform's credential, on a step whose model prices OpenAI service tiers
   * (`prices.service_tiers`): per priced tier (flex, scale, priority), per unit, its price minus the
   * list price of the model asked for ({} when equal). The worker sends a tier asked only when it is
   * here (`fast` as priority), and an answer the upstream reports served on one of these tiers, asked
   * or not (the project's tier serves a request without one), is billed with its difference in
   * `units.cost_micros` instead of `priceDelta` (workers/pools/service-tier.ts). Absent: a tier
   * asked goes unsent, and the answer is billed as above.
   */
  tierPriceDeltas?: Record<string, CostPrices>;
  /**
   * @deprecated A job enqueued by a web pod older than `tierPriceDeltas` (during a rolling deploy):
   * the difference of the one tier the request asked (its `service_tier`, `fast` as priority), whose
   * tier this step's model prices. The worker reads it as `tierPriceDeltas` of that tier alone
   * (workers/pools/service-tier.ts withLegacyTierDelta): the tier is sent and an answer served on it
   * billed at its price, as the older worker did. No pod writes it any longer.
   */
  tierPriceDelta?: CostPrices;
  /**
   * A chat request asking audio (output, or `input_audio` parts) on the platform's credential: per
   * token of the audio asked (`output_token` for audio output, `input_token` for `input_audio`
   * parts), this step's model's audio price minus its list text price (shared/catalog/audio-prices.ts).
   * The answer's audio tokens (reported, else every token of the side asked) are billed with this
   * difference, less a served tier's over the list price, in `units.cost_micros`
   * (workers/pools/audio-price.ts). Absent on every other request.
   */
  audioPriceDelta?: CostPrices;
  /**
   * A chat request on the platform's credential, on a step whose model has a price per web search call
   * (`prices.web_search_call`, micro-dollars): an answer this step serves is billed one call at it, in
   * `units.cost_micros` (OpenAI bills its Chat Completions search models per search call and reports no
   * count: docs/catalog.md "OpenAI's web search models"). Absent on every other step.
   */
  webSearchCallMicros?: number;
}

/** A job served from a model pool (workers/routing): chat, embeddings, rerank, images, transcription and decisions. */
export interface PoolRouted {
  /** The pool (and, for chat, the fallbacks) to route over; `target` alone is a pool of one. */
  route?: RouteStep[];
  /** Tokens the request is expected to use (input estimate + max output), counted against deployments' tpm. */
  estimatedTokens?: number;
}

/**
 * A canonical chat request (OpenAI chat-completions shape), a legacy completions request, or (native
 * bypass, Anthropic-native upstreams only) a messages request as the caller sent it.
 */
export interface ChatJob extends JobEnvelope, PoolRouted {
  operation: 'chat' | 'completions' | 'messages';
  target: UpstreamTarget;
  body: Record<string, unknown>;
  /** The caller asked for `stream_options.include_usage`; the worker always asks upstream for usage. */
  includeUsage: boolean;
  /** The caller's `anthropic-beta` header, passed on by the messages bypass only. */
  anthropicBeta?: string;
}

/** An image generation or edit; the worker stores the images and answers with their ids. */
export interface ImageJob extends JobEnvelope, PoolRouted {
  operation: 'generate' | 'edit';
  target: UpstreamTarget;
  /** Upstream fields: prompt, n, size, output_format, steps, guidance, negative_prompt, seed, ... */
  params: Record<string, unknown>;
  /** Edit inputs, already checked to belong to the org and to be unexpired. */
  sources: Array<{ id: string; storageKey: string; format: string }>;
  /** An edit's mask for the first source (a PNG with alpha of its size, checked at the edge); sent as OpenAI's `mask` part. */
  mask?: { id: string; storageKey: string; format: string };
  /** The usage unit (`image_<W>x<H>` or `image`) and its price per image, in micro-dollars. */
  priceKey: string;
  unitPrice: number;
  /** false when the model's upstream rejects `response_format` (it answers b64_json anyway). */
  sendResponseFormat: boolean;
}

/** What an image job returns: the stored images, in order (expiry in epoch seconds). */
export interface ImageJobResult {
  /** The pool's route (shared/queues/route-meta.ts ROUTE_RESULT_KEY), taken off by the pod into its headers. */
  __route?: unknown;
  created: number;
  /** `revisedPrompt`: the upstream's `revised_prompt` for that image (dall-e-3), when it sent one. */
  images: Array<{ id: string; storageKey: string; expiresAt: number; revisedPrompt?: string }>;
  /** The first image's real size, read from its bytes (what `size: "auto"` became). */
  size?: string;
  /** OpenAI's top-level answer fields the upstream sent (GPT image models), passed on as given. */
  usage?: Record<string, unknown>;
  quality?: string;
  background?: string;
}

/** An embeddings request, validated at the edge (types, batch size, token limits). */
export interface EmbedJob extends JobEnvelope, PoolRouted {
  operation: 'embed';
  target: UpstreamTarget;
  input: string | string[];
  encodingFormat: 'float' | 'base64';
  dimensions?: number;
  /** Cohere's `input_type` of a `/v2/embed` request: sent to a Cohere upstream (others have no such field). */
  inputType?: 'search_document' | 'search_query' | 'classification' | 'clustering';
  /** Cohere's `embedding_types` of a `/v2/embed` request to a Cohere upstream, when more than float: it computes them itself. */
  embeddingTypes?: EmbeddingType[];
  /** Input tokens counted at the edge with the model's tokenizer profile (billed if the upstream reports none). */
  countedTokens: number;
}

/** A rerank request (Cohere v2 envelope), validated at the edge (pair token limits). */
export interface RerankJob extends JobEnvelope, PoolRouted {
  operation: 'rerank';
  target: UpstreamTarget;
  query: string;
  documents: string[];
  topN?: number;
  returnDocuments: boolean;
  /** Search units computed at the edge (billed if the upstream reports none). */
  searchUnits: number;
  /** The model's `search_unit` price, in micro-dollars: the event's `cost_micros` is units times it. */
  unitPrice: number;
}

/** The embeddings pool runs both operations on its one queue. */
export type EmbeddingsJob = EmbedJob | RerankJob;

/**
 * One transcription. The audio itself stays in the spool file (`spoolId`, inside AUDIO_SPOOL_DIR,
 * shared by web and audio worker processes); the prompt travels sealed. The uploaded filename is
 * never sent: `fileExt` (e.g. `wav`) is the only hint the upstream gets about the format.
 */
export interface AudioJob extends JobEnvelope, PoolRouted {
  target: UpstreamTarget;
  spoolId: string;
  fileExt: string;
  contentType: string;
  language?: string;
  temperature?: number;
  /** shared/crypto.encrypt of the prompt. */
  sealedPrompt?: string;
  /** Word timestamps were asked for (and the model supports them). */
  words: boolean;
  /** The model's `audio_config.max_duration_seconds`. */
  maxDurationSeconds: number;
}

/**
 * A decision-model request (`POST /v1/systemone`): one upstream chat call, already built at the
 * edge (structured output requested), and what the worker needs to read the answers and bill them.
 */
export interface SystemoneJob extends JobEnvelope, PoolRouted {
  target: UpstreamTarget;
  /** The upstream chat-completions body without `model`. */
  body: Record<string, unknown>;
  plan: QuestionPlan[];
  images: number;
  /** metered: settle the org's reservation at input tokens x `inputTokenMicros`; included: no charge. */
  billing: { mode: 'included' | 'metered'; inputTokenMicros: number };
}

/** The provider a search job calls; the key travels sealed (shared/crypto.encrypt). */
export interface SearchProviderTarget {
  name: string;
  kind: string;
  baseUrl: string;
  sealedKey: string;
  keySource: 'platform' | 'own';
}

/**
 * A web search or page fetch on the `search` queue; the worker dispatches on `kind`. Already gated
 * and reserved at the edge (api/dispatch/search.ts), which writes the ledger row on success.
 */
export type SearchJob = JobEnvelope & { provider: SearchProviderTarget } & (
    | { kind: 'search'; query: string; count?: number; country?: string }
    | { kind: 'fetch'; url: string; allowedDomains?: string[]; blockedDomains?: string[] }
  );

/**
 * The compile-time map from queue to job payload. A queue without a payload type does not build.
 * Later pools add their payloads here.
 */
export interface JobDataMap {
  'chat-interactive': ChatJob;
  'chat-background': ChatJob;
  embeddings: EmbeddingsJob;
  'images-interactive': ImageJob;
  'images-background': ImageJob;
  audio: AudioJob;
  systemone: SystemoneJob;
  search: SearchJob;
}

export type JobData<Q extends QueueName> = JobDataMap[Q];

/** What a worker returns. Streamed jobs also keep their chunks so a pod can recover missed ones. */
export interface JobResult {
  result?: unknown;
  chunks?: string[];
  /** A stream kept without its chunks: how many it had (shared/queues/reply-store.ts). */
  chunkCount?: number;
  /** Of such a stream, the last chunks its result message carried (`h`, shared/queues/reply-messages.ts). */
  tail?: { s: number; d: string[] };
  /** A batch line's usage, carried with its answer instead of going to the usage outbox. */
  usage?: UsageRecord;
}
