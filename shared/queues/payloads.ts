import type { QueueName } from './names';
import type { ProviderKind } from '../db/models/Provider';

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
 * One transcription. The audio itself stays in the spool file (`spoolId`, inside AUDIO_SPOOL_DIR,
 * shared by web and audio worker processes); the prompt travels sealed. The uploaded filename is
 * never sent: `fileExt` (e.g. `wav`) is the only hint the upstream gets about the format.
 */
export interface AudioJob extends JobEnvelope {
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
 * The compile-time map from queue to job payload. A queue without a payload type does not build.
 * Later pools add their payloads here.
 */
export interface JobDataMap {
  'chat-interactive': ChatJob;
  'chat-background': ChatJob;
  embeddings: JobEnvelope & Record<string, unknown>;
  'images-interactive': JobEnvelope & Record<string, unknown>;
  'images-background': JobEnvelope & Record<string, unknown>;
  audio: AudioJob;
  systemone: JobEnvelope & Record<string, unknown>;
  search: JobEnvelope & Record<string, unknown>;
}

export type JobData<Q extends QueueName> = JobDataMap[Q];

/** What a worker returns. Streamed jobs also keep their chunks so a pod can recover missed ones. */
export interface JobResult {
  result?: unknown;
  chunks?: string[];
}
