import type { ProviderSettings } from '../../shared/db/models/Provider';
import type { CancelSignal } from '../../shared/cancel-source';
/** What an adapter needs to make one upstream call. */
export interface UpstreamCall {
  baseUrl: string;
  /** The platform credential or the caller's own key; undefined when the upstream needs none. */
  apiKey?: string;
  /** The key is the caller's own (passthrough): an upstream 401/403 is then the caller's to fix. */
  callerKey?: boolean;
  upstreamModel: string;
  /** The model the upstream serves when its id does not name it (a Bedrock application inference profile's base model). */
  baseModel?: string;
  /** The model's tokenizer, for an estimate of usage the upstream did not report (openai/usage-estimate.ts); the default one when absent. */
  tokenizer?: string;
  /** The provider's non-secret per-kind settings (api_version, region, preset). */
  settings?: ProviderSettings;
  signal: CancelSignal;
  /** Absolute deadline (epoch ms). */
  deadline: number;
  /** Same-upstream retries inside fetchUpstream (default 2); a model pool's router does its own (0). */
  retries?: number;
  /** See FetchPolicy.firstByteTimeoutMs. */
  firstByteTimeoutMs?: number;
  /** Chat: the answer's `service_tier` is read (ChatOutcome.servedTier), on a step whose model prices OpenAI service tiers. */
  readsTier?: boolean;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** A streamed call hands each chunk (already in the caller's shape) to `emit`. */
export type Emit = (chunk: string) => void;
