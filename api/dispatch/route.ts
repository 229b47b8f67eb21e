import type { AppContext } from '../context';
import { modelIdOf, type CatalogModel } from '../../shared/catalog/catalog';
import type { ChatJob, PoolDeployment, RouteStep } from '../../shared/queues/payloads';
import { jsonWithoutMedia } from '../../shared/tokenizer/media';
import { refuseUntranslatable as geminiRefuses } from '../../workers/providers/gemini/refuse';
import { refuseUntranslatable as converseRefuses } from '../../workers/providers/bedrock/to-converse';
import { refuseUntranslatable as messagesRefuses } from '../../workers/providers/anthropic/to-messages';
import { refuseFileUrls } from '../../workers/providers/openai/refuse';
import { pickedLocally } from '../../shared/routing/pool-state';
import type { Response } from 'express';
import { ROUTE_RESULT_KEY, routeHeaders, type RouteMeta } from '../../shared/queues/route-meta';
import { DECISION_KINDS } from '../../shared/catalog/decision-providers';
import { adaptiveOnly, adaptiveThinking, isClaude } from '../../workers/providers/bedrock/reasoning';
import { refuseStructuredOutput, structuredOutputField } from './structured-output';
import { modelAllowed, type KeyControls } from '../../shared/limits/controls';
import { passthroughRefused } from './passthrough';
import { dearest, pricesOf, type CostPrices } from '../../shared/limits/usage-cost';
import { pinnedTier } from '../../shared/catalog/tier-prices';
import { pricesAudio, type AudioAsked } from '../../shared/catalog/audio-prices';
import { pricedStep, type Pricing } from './step-prices';
import { pinnedRoute, type WorkspacePin } from './workspace-pin';

type Operation = ChatJob['operation'];

/** The features of a request a fallback must be able to serve (it is skipped otherwise, never degraded). */
interface Needs {
  tools: boolean;
  vision: boolean;
  jsonSchema: boolean;
  /** Estimated input tokens plus the output asked for. */
  tokens: number;
}

function hasImage(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false;
  return messages.some((m) => {
    const content = (m as { content?: unknown })?.content;
    return Array.isArray(content) && content.some((p) => ['image_url', 'image', 'input_image'].includes((p as { type?: string })?.type ?? ''));
  });
}

/** About four characters a token (media at their estimate each, an input_audio clip by its duration: shared/tokenizer/media.ts): enough to route by context window. */
function needsOf(body: Record<string, unknown>, op: Operation): Needs {
  const input = jsonWithoutMedia(body.messages ?? body.prompt ?? '');
  const maxOut = Number(body.max_completion_tokens ?? body.max_tokens ?? 0) || 0;
  return {
    tools: Array.isArray(body.tools) && body.tools.length > 0,
    vision: hasImage(body.messages),
    jsonSchema: structuredOutputField(body, op) !== undefined,
    tokens: Math.ceil(input.json.length / 4) + input.fixedTokens + maxOut + Math.ceil(JSON.stringify(body.system ?? '').length / 4),
  };
}

const fitsContext = (m: CatalogModel, n: Needs) => m.contextWindow === null || n.tokens <= m.contextWindow;

function canServe(m: CatalogModel, n: Needs): boolean {
  if (!m.capabilities.chat) return false;
  if (n.tools && m.capabilities.tools === false) return false;
  if (n.vision && !m.capabilities.vision) return false;
  if (n.jsonSchema && m.capabilities.json_schema === false) return false;
  return true;
}

/** Which wire families can take the job's operation as it is encoded. */
function kindFits(kind: string, op: Operation, primaryKind: string): boolean {
  if (op === 'messages') return kind === 'anthropic'; // native bypass: the body is in messages form
  if (op === 'completions') return kind === 'openai' || kind === primaryKind; // checked translatable for the primary's kind
  return kind !== 'cohere'; // every chat kind translates the canonical request
}

/** The OpenAI-compatible chat adapter's refusal (a `file_data` by URL); legacy completions are sent as they are. */
const openaiRefuses = (body: Record<string, unknown>, _upstreamModel: string, op: Operation) => {
  if (op === 'chat') refuseFileUrls(body);
};

/**
 * The adapters' own refusals of canonical fields their API cannot express (400 unsupported_parameter),
 * for a deployment of the given upstream model (Bedrock's `top_k` depends on it) and operation.
 */
const REFUSALS: Record<string, (body: Record<string, unknown>, upstreamModel: string, op: Operation) => void> = {
  gemini: geminiRefuses,
  bedrock: converseRefuses,
  anthropic: messagesRefuses,
  openai: openaiRefuses,
  azure: openaiRefuses,
};

/**
 * The refusals of the model's own provider kind for a canonical chat body, as its adapter would make
 * them on one of its deployments (legacy completions translated for that kind are checked here at the
 * edge, before a lane or reservation: api/routes/chat/router.ts): the first refusal when every
 * deployment of that kind refuses the body, nothing when one takes it or the kind refuses nothing.
 */
export function refuseAsModelKind(model: CatalogModel, chat: Record<string, unknown>): void {
  const kind = model.provider.kind;
  if (!Object.hasOwn(REFUSALS, kind)) return;
  const refuses = REFUSALS[kind];
  let first: unknown;
  for (const d of model.deployments.filter((x) => x.provider.kind === kind)) {
    try {
      refuses(chat, modelIdOf(d), 'chat');
      return;
    } catch (err) {
      first ??= err;
    }
  }
  if (first !== undefined) throw first;
}

/** Whether this deployment's kind (and upstream model) can serve the request as asked (its adapter would refuse it otherwise). */
function accepts(d: CatalogModel['deployments'][number], op: Operation, body: Record<string, unknown> | undefined): boolean {
  const refuses = body && op !== 'messages' ? REFUSALS[d.provider.kind] : undefined;
  if (!refuses) return true;
  try {
    refuses(body!, modelIdOf(d), op);
    return true;
  } catch {
    return false;
  }
}

/**
 * A model's deployments that can take the job; with `body`, those whose kind (or upstream model) would
 * refuse the request are left out (a mixed pool must not answer 400 or 200 by the draw).
 */
function stepOf(m: CatalogModel, fallback: boolean, op: Operation, primaryKind: string, onlyProvider?: string, body?: Record<string, unknown>): RouteStep | undefined {
  const deployments = m.deployments
    .filter((d) => kindFits(d.provider.kind, op, primaryKind) && (!onlyProvider || d.provider.id === onlyProvider) && accepts(d, op, body))
    .map((d) => poolDeployment(m, d));
  return deployments.length ? { poolId: m.id, model: m.publicId, fallback, deployments } : undefined;
}

/** A catalog deployment as the worker calls it. */
function poolDeployment(m: CatalogModel, d: CatalogModel['deployments'][number]): PoolDeployment {
  return {
    providerId: d.provider.id,
    kind: d.provider.kind,
    baseUrl: d.provider.baseUrl,
    settings: d.provider.settings,
    upstreamModel: d.upstream,
    ...(d.baseModel ? { baseModel: d.baseModel } : {}),
    tokenizer: m.tokenizer,
    name: d.name,
    weight: d.weight,
    priority: d.priority,
    rpm: d.rpm,
    tpm: d.tpm,
    maxConcurrency: d.maxConcurrency,
    inlineImageUrls: !!d.inlineImageUrls,
  };
}

/**
 * The tasks routed over a pool besides chat, and the provider kinds with an adapter for each
 * (workers/pools/embeddings.worker.ts, images.worker.ts, audio.worker.ts, systemone.worker.ts).
 */
export type PoolTask = 'embeddings' | 'rerank' | 'image_generation' | 'image_edit' | 'transcription' | 'decision';
export const TASK_KINDS: Record<PoolTask, ReadonlySet<string>> = {
  transcription: new Set(['openai', 'azure']),
  // the decision call asks for strict structured output and log-probabilities: OpenAI's wire (openai, azure)
  decision: DECISION_KINDS,
  embeddings: new Set(['openai', 'azure', 'gemini', 'cohere']),
  rerank: new Set(['cohere']),
  image_generation: new Set(['openai', 'azure']),
  image_edit: new Set(['openai']),
};

/**
 * The pool an embeddings, rerank, image, transcription or decision job is served from: the model's deployments whose kind has
 * the task's adapter (all of them when none has: the worker's refusal is the answer). No fallbacks:
 * another model's vectors or relevance scores are not comparable with the ones a caller already
 * holds, and another image, speech or decision model is not the one the caller chose. `kinds`: a
 * narrower set for a request only some kinds can serve (Cohere's own `int8`/`uint8` embeddings).
 */
export function taskRoute(m: CatalogModel, task: PoolTask, kinds: ReadonlySet<string> = TASK_KINDS[task]): RouteStep[] {
  const fit = m.deployments.filter((d) => kinds.has(d.provider.kind));
  return [{ poolId: m.id, model: m.publicId, fallback: false, deployments: (fit.length ? fit : m.deployments).map((d) => poolDeployment(m, d)) }];
}

/**
 * The models a chat job may be served from, in order: the pool asked for, then each fallback that
 * can serve the request's features, each with only the deployments whose kind can express the request. A request longer than the model's context window goes to the
 * first fallback whose window fits it, when there is one. A caller's own upstream key (passthrough)
 * stays with the primary provider's deployments and never reaches a fallback, and a key with an
 * allowed-models list reaches only the fallbacks on it. `pin`: the request names ids handed out in
 * one workspace, and only that workspace's deployments are kept (none: refused).
 */
export async function routeFor(
  ctx: AppContext,
  model: CatalogModel,
  body: Record<string, unknown>,
  op: Operation,
  passthrough: boolean,
  controls?: KeyControls,
  audio?: AudioAsked,
  pin?: WorkspacePin,
): Promise<{ route: RouteStep[]; estimatedTokens: number; heldPrices: CostPrices; heldCallMicros: number }> {
  // the request's needs (a serialisation of its messages) only when something reads them: a fallback
  // to choose, or a deployment that counts tokens (pool-state.ts); a pool of one without limits reads neither
  refuseStructuredOutput(model, body, op);
  let needs: Needs | undefined;
  const needsNow = () => (needs ??= needsOf(body, op));
  const primaryKind = model.provider.kind;
  // Deployments whose kind refuses the request are left out; when every one would, the pool stays whole
  // and the refusal (400 unsupported_parameter) is the answer.
  const onlyProvider = passthrough ? model.provider.id : undefined;
  const primary = stepOf(model, false, op, primaryKind, onlyProvider, body) ?? stepOf(model, false, op, primaryKind, onlyProvider);
  const fallbacks: RouteStep[] = [];
  // each step carries the prices it bills at (step-prices.ts): its model's list prices, and on the platform's
  // credential its model's OpenAI service tier prices (the tier served is billed, asked or not), and for the audio asked
  const tiers = !passthrough && op === 'chat';
  const pricing: Pricing = { asked: model, tiers, tier: tiers ? pinnedTier(body.service_tier) : undefined, audio, held: [pricesOf(model.prices)], searchCalls: !passthrough, heldCallMicros: 0 };
  if (!passthrough) {
    for (const id of model.fallbacks) {
      const f = await ctx.catalog.get(id);
      // a key with an allowed-models list (its own or its member's) is served only by models on it, fallbacks too (docs/keys.md)
      if (!f || !modelAllowed(controls, f.publicId) || !canServe(f, needsNow()) || !fitsContext(f, needsNow())) continue;
      // audio asked: only a fallback that prices it (the model asked for does: api/routes/chat/router.ts)
      if (audio && !pricesAudio(f, audio)) continue;
      const step = stepOf(f, true, op, primaryKind, undefined, body);
      // billed at the model that serves: its prices' difference from the model asked for travels with it
      if (step) fallbacks.push(pricedStep(step, f, pricing));
    }
  }
  const tooLong = fallbacks.length > 0 && !fitsContext(model, needsNow());
  const first = primary && pricedStep(primary, model, pricing);
  const steps = [...(first && !tooLong ? [first] : []), ...fallbacks];
  const whole = steps.length ? steps : [first ?? lastResort(model, primaryKind, onlyProvider)];
  // handed-out ids named: only the workspace that made them holds them (workspace-pin.ts)
  const route = pin ? pinnedRoute(whole, pin) : whole;
  // a step picked in Redis counts the request's tokens in flight there (PoolState.pick)
  // a budget holds the request at the dearest model that may serve it (a fallback is billed at its own prices)
  return { route, estimatedTokens: route.every(pickedLocally) ? 0 : needsNow().tokens, heldPrices: dearest(pricing.held), heldCallMicros: pricing.heldCallMicros };
}

/**
 * The step when none can take the request as asked: the pool whole (its refusal is the answer). A
 * caller's own key stays on the primary provider's deployments even then; when none of them serves
 * chat (a cohere primary in a pool of other kinds), it is refused rather than sent to another provider.
 */
function lastResort(model: CatalogModel, primaryKind: string, onlyProvider: string | undefined): RouteStep {
  const step = stepOf(model, false, 'chat', primaryKind, onlyProvider);
  if (!step && onlyProvider) throw passthroughRefused(model, "is not served by its primary provider, the only one a caller's own provider key (passthrough) is sent to");
  return step!;
}

/** The messages dialect bypasses translation only when every deployment it may reach speaks messages. */
export async function allNativeMessages(ctx: AppContext, model: CatalogModel): Promise<boolean> {
  return (await deploymentsWithFallbacks(ctx, model)).every((d) => d.provider.kind === 'anthropic');
}

/** The deployments of the model and of its fallbacks (a fallback missing from the catalog has none). */
async function deploymentsWithFallbacks(ctx: AppContext, model: CatalogModel): Promise<CatalogModel['deployments']> {
  const fallbacks = await Promise.all(model.fallbacks.map((id) => ctx.catalog.get(id)));
  return [model, ...fallbacks].flatMap((m) => m?.deployments ?? []);
}

/** The `thinking` forms a model's messages requests can take, or undefined when some deployment would drop it. */
export interface ThinkingForms {
  adaptive: boolean;
  enabled: boolean;
}

/**
 * Which `thinking` forms reach every deployment of the model and of its fallbacks: each must be a
 * Claude upstream (Anthropic-native, whose forms are the model's own, or Claude on Bedrock: adaptive
 * from Claude 4.6, `enabled` before 4.7; workers/providers/bedrock/reasoning.ts); undefined when one is
 * not, since the deployment drawn might then drop it.
 */
export async function thinkingForms(ctx: AppContext, model: CatalogModel): Promise<ThinkingForms | undefined> {
  const forms: ThinkingForms = { adaptive: true, enabled: true };
  for (const d of await deploymentsWithFallbacks(ctx, model)) {
    if (d.provider.kind === 'anthropic') continue;
    const id = modelIdOf(d);
    if (d.provider.kind !== 'bedrock' || !isClaude(id)) return undefined;
    forms.adaptive &&= adaptiveThinking(id);
    forms.enabled &&= !adaptiveOnly(id);
  }
  return forms;
}

/**
 * A job's route (which deployment served it, and which fallback model when one did) as the response's
 * headers while they can still be set, and noted on the response: the answer cache keeps no answer a
 * fallback served (api/dispatch/response-cache.ts).
 */
export function applyRoute(res: Response, m: RouteMeta): void {
  if (m.fallbackModel) res.locals.servedByFallback = m.fallbackModel;
  if (!res.headersSent) res.set(routeHeaders(m));
}

/** The fallback model that served this response's answer, if one did (applyRoute). */
export const servedByFallback = (res: Response): string | undefined => res.locals.servedByFallback as string | undefined;

/** A JSON result's route metadata (ROUTE_RESULT_KEY, set by the worker's pool routing) taken off it and applied (applyRoute). */
export function withRouteHeaders(res: Response, result: unknown): unknown {
  if (result && typeof result === 'object' && ROUTE_RESULT_KEY in result) {
    const r = result as Record<string, unknown>;
    applyRoute(res, r[ROUTE_RESULT_KEY] as RouteMeta);
    delete r[ROUTE_RESULT_KEY];
  }
  return result;
}
