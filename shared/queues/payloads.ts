import type { QueueName } from './names';
import type { ProviderKind } from '../db/models/Provider';
import type { QuestionPlan } from '../systemone/types';

/** Fields every job carries, whatever its queue. */
export interface JobEnvelope {
  requestId: string;
  /** The pod's reply channel. */
  replyTo: string;
  /** Absolute deadline (epoch ms); a worker drops a job whose deadline passed while it waited. */
  deadline: number;
  orgId: string;
  projectId: string | null;
  apiKeyId: string | null;
  /** The model id exactly as the caller sent it; responses report it. */
  publicModel: string;
  lane: string;
  stream: boolean;
}

/** Where and how the worker calls the upstream. Secrets are not in here, except sealed ones. */
export interface UpstreamTarget {
  providerId: string;
  kind: ProviderKind;
  baseUrl: string;
  upstreamModel: string;
  /** The caller's own upstream key (passthrough), sealed with shared/crypto.encrypt. */
  sealedCallerKey?: string;
}

/**
 * A canonical chat request (OpenAI chat-completions shape), a legacy completions request, or (native
 * bypass, Anthropic-native upstreams only) a messages request as the caller sent it.
 */
export interface ChatJob extends JobEnvelope {
  operation: 'chat' | 'completions' | 'messages';
  target: UpstreamTarget;
  body: Record<string, unknown>;
  /** The caller asked for `stream_options.include_usage`; the worker always asks upstream for usage. */
  includeUsage: boolean;
}

/**
 * A decision-model request (`POST /v1/systemone`): one upstream chat call, already built at the
 * edge (structured output requested), and what the worker needs to read the answers and bill them.
 */
export interface SystemoneJob extends JobEnvelope {
  target: UpstreamTarget;
  /** The upstream chat-completions body without `model`. */
  body: Record<string, unknown>;
  plan: QuestionPlan[];
  images: number;
  /** metered: settle the org's reservation at input tokens x `inputTokenMicros`; included: no charge. */
  billing: { mode: 'included' | 'metered'; inputTokenMicros: number };
}

/**
 * The compile-time map from queue to job payload. A queue without a payload type does not build.
 * Later pools add their payloads here.
 */
export interface JobDataMap {
  'chat-interactive': ChatJob;
  'chat-background': ChatJob;
  embeddings: JobEnvelope & Record<string, unknown>;
  'images-interactive': JobEnvelope & Record<string, unknown>;
  'images-background': JobEnvelope & Record<string, unknown>;
  audio: JobEnvelope & Record<string, unknown>;
  systemone: SystemoneJob;
  search: JobEnvelope & Record<string, unknown>;
}

export type JobData<Q extends QueueName> = JobDataMap[Q];

/** What a worker returns. Streamed jobs also keep their chunks so a pod can recover missed ones. */
export interface JobResult {
  result?: unknown;
  chunks?: string[];
}
