import type { Request } from 'express';
import type { AppContext } from '../context';
import type { CatalogModel } from '../../shared/catalog/catalog';
import { countTokensAtMost } from '../../shared/tokenizer/pool';
import { imageTokensOf, jsonWithoutMedia } from '../../shared/tokenizer/media';
import { hasBudget, hasLimits, NO_HOLD, reserveLimits, without, type LimitHold } from '../../shared/limits/limits';
import { pricesOf, type CostPrices } from '../../shared/limits/usage-cost';
import type { KeyControls } from '../../shared/limits/controls';
import { setRateHeaders } from './rate-headers';
import type { ChatJob } from '../../shared/queues/payloads';

/** Tokens a chat upstream adds around each message; counted generously, the worst case must not fall short. */
const MESSAGE_OVERHEAD_TOKENS = 4;
/** The output cap of a request that names none, on a model that publishes none (docs/keys.md). */
export const DEFAULT_OUTPUT_CAP = 4096;

/**
 * Whether a field's value is an output cap the upstream obeys: a positive number, or on legacy
 * completions also 0 (OpenAI's documented minimum: a prompt scored with `echo`, nothing generated),
 * and on the messages dialect's native bypass (Anthropic's prompt-cache pre-warming,
 * api/routes/messages/native-only.ts), which is held and sent as 0, never replaced by the model's cap.
 */
const namesCap = (v: unknown, operation: ChatJob['operation']): v is number => typeof v === 'number' && (v > 0 || (v === 0 && (operation === 'completions' || operation === 'messages')));

/**
 * The output caps a request names that its upstream obeys. Chat: `max_completion_tokens` and
 * `max_tokens`, which upstreams differ on (Anthropic, Gemini and Bedrock read max_completion_tokens;
 * Azure before 2024-09-01 and the presets whose field is max_tokens keep max_tokens). A chat request
 * naming both is refused before this, as OpenAI refuses it (api/routes/chat/schema.ts,
 * BOTH_MAX_TOKENS); a canonical body naming both anyway is held at the larger. Legacy completions: `max_tokens` only, the
 * one field of OpenAI's CreateCompletionRequest and the one every completions adapter reads (a
 * `max_completion_tokens` there is forwarded as an unknown field and caps nothing).
 */
function askedCaps(body: Record<string, unknown>, operation: ChatJob['operation']): number[] {
  const fields = operation === 'completions' ? [body.max_tokens] : [body.max_completion_tokens, body.max_tokens];
  return fields.filter((v): v is number => namesCap(v, operation));
}

/** The most output a canonical chat request can produce: its own cap (askedCaps), else the model's, else the default. */
export function outputCap(body: Record<string, unknown>, model: CatalogModel, operation: ChatJob['operation'] = 'chat'): number {
  const asked = askedCaps(body, operation);
  const cap = model.maxOutputTokens ?? DEFAULT_OUTPUT_CAP;
  return asked.length ? Math.min(Math.max(...asked), cap) : cap;
}

/**
 * The output a budget holds for each completion: the cap sent (outputCap), except legacy completions'
 * `max_tokens: 0`, which is sent as 0 but held at the model's cap: OpenAI generates nothing for it, an
 * OpenAI-compatible server that reads a falsy cap as "none" writes as long as it likes, and a budget
 * must cover what the upstream can write, not what it was asked to (docs/keys.md#budgets).
 */
function heldOutput(body: Record<string, unknown>, model: CatalogModel, operation: ChatJob['operation']): number {
  if (operation === 'completions' && body.max_tokens === 0) return model.maxOutputTokens ?? DEFAULT_OUTPUT_CAP;
  return outputCap(body, model, operation);
}

/**
 * How many completions a request can have generated, each up to the output cap and each billed: `n`
 * (chat, legacy completions) or `best_of` when larger (generated server-side, billed), times the
 * prompts of a legacy completions batch (`prompt` as an array of strings or of token arrays).
 */
export function generations(body: Record<string, unknown>): number {
  const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 1 ? v : 1);
  const prompts = Array.isArray(body.prompt) && body.prompt.length > 1 && typeof body.prompt[0] !== 'number' ? body.prompt.length : 1;
  return Math.max(count(body.n), count(body.best_of)) * prompts;
}

/**
 * Input tokens of a canonical chat or completions body, counted on the whole JSON of its messages (an
 * over-count), media at an estimate each (an input_audio clip by its duration); and what its budgets hold for it (`priced`): a request
 * holding a document by URL at the model's context window at least, since the upstream fetches the
 * document and only that bounds what it reads (a 300-page PDF bills far above the fixed estimate).
 * Rates count the estimate: they settle at what the upstream reports.
 */
async function inputTokens(body: Record<string, unknown>, model: CatalogModel): Promise<{ counted: number; priced: number }> {
  const messages = Array.isArray(body.messages) ? body.messages : [body.prompt ?? ''];
  // `system`: an Anthropic body passed through natively keeps its system prompt outside `messages`
  const extra = [body.system, body.tools, body.functions].filter((v) => v !== undefined && v !== null).map((v) => JSON.stringify(v));
  // images and binary documents at an estimate each, input_audio clips by their duration, not their base64 text (shared/tokenizer/media.ts)
  const { json, fixedTokens, unsized } = jsonWithoutMedia(messages, imageTokensOf(model));
  // not counted in time on a busy pod: its bytes, so a limit or budget is never passed on an estimate
  const n = await countTokensAtMost(model.tokenizer, [json, ...extra]);
  const counted = n + fixedTokens + MESSAGE_OVERHEAD_TOKENS * messages.length;
  return { counted, priced: unsized && model.contextWindow ? Math.max(counted, model.contextWindow) : counted };
}

/** How a request's hold counts (limitsFor, chatLimits). */
export interface HoldOptions {
  /** false: not a request of its own for `rpm` (a later turn of one client request). */
  countsAsRequest?: boolean;
  /** false: the caller's own provider key pays the upstream (passthrough): counted for rates, priced at nothing. */
  priced?: boolean;
  /**
   * The unit prices the worst case is held at when a dearer model than this one may serve it (a
   * fallback, billed at its own prices: docs/routing.md "Billing"); the model's prices otherwise. The
   * settlement stays at the model's prices plus the event's `cost_micros`, where a fallback states
   * its difference.
   */
  heldPrices?: CostPrices;
  /** A fixed cost the worst case holds besides the tokens: the dearest web search call a step of the route bills (api/dispatch/step-prices.ts). */
  heldCallMicros?: number;
}

/**
 * The reservation step of a request (runJob's `reserve`): its key's and its member's rate limits and
 * its key's, project's and member's budgets, at the worst case: `measure`'s input tokens and output cap at the model's
 * prices, plus a fixed cost (images). Nothing is measured for a key without limits.
 */
export function limitsFor(
  ctx: AppContext,
  req: Request,
  model: CatalogModel,
  measure: (m: { /** a priced budget (the key's, its project's or its member's) holds this request */ budgeted: boolean }) => Promise<{
    input: number;
    output: number;
    /** input the budgets hold when more than `input` (a document the upstream fetches) */
    pricedInput?: number;
    /** per image, at its recorded price */
    fixedMicros?: number;
  }>,
  { countsAsRequest = true, priced = true, heldPrices, heldCallMicros = 0 }: HoldOptions = {},
): (requestId: string) => Promise<LimitHold> {
  return async (requestId) => {
    const auth = req.auth!;
    const projectBudget = auth.projectId ? await ctx.directory.projectBudget(auth.projectId) : null;
    const controls = auth.controls && !countsAsRequest ? without(auth.controls, { rpm: null }) : auth.controls;
    if (!controls || !hasLimits(controls, projectBudget)) return NO_HOLD;
    const { input, output, pricedInput = input, fixedMicros = 0 } = await measure({ budgeted: priced && hasBudget(controls, projectBudget) });
    const prices = priced ? pricesOf(model.prices) : {};
    const held = priced ? heldPrices ?? prices : {};
    return reserveLimits(ctx.redis, {
      orgId: auth.orgId,
      keyId: auth.keyId,
      projectId: auth.projectId,
      controls,
      projectBudget,
      requestId,
      inputTokens: input,
      worstCaseMicros: pricedInput * (held.input_token ?? 0) + output * (held.output_token ?? 0) + fixedMicros + (priced ? heldCallMicros : 0),
      prices,
      onRate: (w) => setRateHeaders(req, w),
    });
  };
}

/**
 * A request answered without a call (an answer cache hit): one request for its key's `rpm` (429
 * `rate_limit_exceeded` when the minute is full), and nothing else: no tokens for `tpm`, no cost for
 * the budgets.
 */
export async function countRequestOnly(ctx: AppContext, req: Request): Promise<void> {
  const auth = req.auth!;
  if (!auth.controls?.rpm && !auth.controls?.member?.rpm) return;
  const hold = await reserveLimits(ctx.redis, {
    orgId: auth.orgId,
    keyId: auth.keyId,
    projectId: auth.projectId,
    controls: without(auth.controls!, { tpm: null, budget: null }),
    projectBudget: null,
    requestId: `${req.id}:request-only`,
    inputTokens: 0,
    worstCaseMicros: 0,
    prices: {},
    onRate: (w) => setRateHeaders(req, w),
  });
  await hold.settle(0);
}

/**
 * A chat-style request's limits: counted input, and the request's output cap or the model's for each
 * completion it asks for; a passthrough request (`priced` false) costs its budgets nothing.
 */
export function chatLimits(ctx: AppContext, req: Request, model: CatalogModel, body: Record<string, unknown>, operation: ChatJob['operation'], options: HoldOptions = {}): (requestId: string) => Promise<LimitHold> {
  return limitsFor(
    ctx,
    req,
    model,
    async ({ budgeted }) => {
      if (budgeted) sendHeldCap(body, model, operation);
      const input = await inputTokens(body, model);
      return { input: input.counted, pricedInput: input.priced, output: heldOutput(body, model, operation) * generations(body) };
    },
    options,
  );
}

/**
 * A budget's hold is the worst case only when the upstream is told the output cap it assumes
 * (outputCap): a request that names none, or one above the model's `max_output_tokens`, is held at
 * the model's cap (DEFAULT_OUTPUT_CAP when it publishes none), while the upstream wrote as long as the
 * request let it: a model publishing no cap as long as it liked, and a fallback or a pool deployment
 * serving a bigger model past the model's own cap, settling above the hold and past the budget. So
 * the request is sent with the cap it is held at: a cap it names above it is lowered to it, and one
 * that names none gets it (`max_completion_tokens`; `max_tokens` on legacy completions, which has no
 * other, and on a native messages body, which always names it), before its job is added. docs/keys.md.
 */
function sendHeldCap(body: Record<string, unknown>, model: CatalogModel, operation: ChatJob['operation']): void {
  const cap = outputCap(body, model, operation);
  const fields = operation === 'chat' ? ['max_completion_tokens', 'max_tokens'] : ['max_tokens'];
  const named = fields.filter((f) => namesCap(body[f], operation));
  if (!named.length) body[fields[0]] = cap;
  for (const f of named) if ((body[f] as number) > cap) body[f] = cap;
}

/** A transcription's worst case: the model's longest accepted duration at its audio second price (the gateway never decodes the upload). */
export function audioLimits(ctx: AppContext, req: Request, model: CatalogModel, maxDurationSeconds: number): (requestId: string) => Promise<LimitHold> {
  return limitsFor(ctx, req, model, async () => ({ input: 0, output: 0, fixedMicros: maxDurationSeconds * (model.prices.audio_second ?? 0) }));
}

/** Who a web search is charged to, for its budgets (SearchCaller carries it). */
export interface BudgetPayer {
  orgId: string;
  apiKeyId: string | null;
  projectId: string | null;
  controls?: KeyControls | null;
}

/**
 * A web search's charge reserved on its key's and project's budgets, at the price the search will be
 * charged (known before it runs; 0 for allowance and own-key searches, which reserve nothing). Only
 * budgets: a search inside a request is not a request of its own for the key's rate limits. The
 * reservation has an id of its own, since the search job's usage event (which carries no price)
 * must not settle it: the caller settles it at the ledger's charge (`hold.settle`).
 */
export async function searchBudget(ctx: AppContext, payer: BudgetPayer, requestId: string, priceMicros: number): Promise<LimitHold> {
  if (priceMicros <= 0 || !payer.apiKeyId || !payer.controls) return NO_HOLD;
  const controls = without(payer.controls, { rpm: null, tpm: null });
  const projectBudget = payer.projectId ? await ctx.directory.projectBudget(payer.projectId) : null;
  if (!hasLimits(controls, projectBudget)) return NO_HOLD;
  return reserveLimits(ctx.redis, {
    orgId: payer.orgId,
    keyId: payer.apiKeyId,
    projectId: payer.projectId,
    controls,
    projectBudget,
    requestId: `${requestId}:search-charge`,
    inputTokens: 0,
    worstCaseMicros: priceMicros,
    prices: {},
  });
}
