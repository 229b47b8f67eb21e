import Joi from 'joi';

/**
 * The fields of the server tools the gateway runs, checked the way Anthropic's and OpenAI's APIs
 * check them: a malformed declaration is a 400 before any lease is taken, not silently ignored.
 */

const text = Joi.string().min(1).max(255).allow(null);

/** `user_location` of Anthropic's `web_search_*` and OpenAI's hosted `web_search*` tools. */
export const userLocationSchema = Joi.object({
  type: Joi.string().valid('approximate').required(),
  city: text,
  region: text,
  country: Joi.string()
    .pattern(/^[A-Za-z]{2}$/)
    .allow(null)
    .messages({ 'string.pattern.base': "'user_location.country' must be a two-letter ISO 3166-1 country code." }),
  timezone: text,
})
  .unknown(false)
  .allow(null);

const domains = Joi.array().items(Joi.string().min(1).max(253)).allow(null);

/** Anthropic's `web_search_*` and `web_fetch_*` declarations (name, type and the rest are the tool schema's). */
const anthropicServerTool = {
  max_uses: Joi.number().integer().min(1).allow(null),
  allowed_domains: domains,
  blocked_domains: domains,
};

export const anthropicSearchTool = Joi.object({ ...anthropicServerTool, user_location: userLocationSchema })
  .unknown(true)
  .oxor('allowed_domains', 'blocked_domains')
  .messages({ 'object.oxor': "Use either 'allowed_domains' or 'blocked_domains' in a tool, not both." });

/** A `url_sources` source left open: `{type: "all"}` (SDK 1.16 WebFetchURLSourceAll). */
const everySource = Joi.object({ type: Joi.valid('all').required() });
const NARROWED =
  "'url_sources' narrowing where fetchable URLs may come from is not supported: the gateway's web fetch takes any URL of the user's input or of a tool result; omit it, or give every source the type 'all'.";

/**
 * Anthropic's `web_fetch_*` declaration. Its `url_sources` (SDK 1.16 WebFetchURLSources: which of
 * the user's input, client tools' and server tools' results may give a fetchable URL) can only say
 * what the gateway's fetch does (fetchable.ts: any of them); a narrower one is refused 400 rather
 * than ignored, which would fetch a URL the caller ruled out (one a client tool's result carried).
 */
export const anthropicFetchTool = Joi.object({
  ...anthropicServerTool,
  max_content_tokens: Joi.number().integer().min(1).allow(null),
  citations: Joi.object({ enabled: Joi.boolean() }).unknown(true).allow(null),
  url_sources: Joi.object({ user_input: everySource, client_tool_results: everySource, server_tool_results: everySource })
    .allow(null)
    .messages({ 'any.only': NARROWED, 'object.unknown': NARROWED, 'object.base': NARROWED, 'any.required': NARROWED }),
})
  .unknown(true)
  .oxor('allowed_domains', 'blocked_domains')
  .messages({ 'object.oxor': "Use either 'allowed_domains' or 'blocked_domains' in a tool, not both." });

/**
 * OpenAI's hosted `web_search*` tool on the responses API. Its location's `type` is required on a
 * `web_search_preview*` tool (ApproximateLocation) and optional on `web_search` and its dated
 * variants (WebSearchApproximateLocation, openai-node's WebSearchTool.UserLocation: `type?`).
 */
export const openaiSearchTool = Joi.object({
  type: Joi.string().required(),
  user_location: Joi.when('type', {
    is: Joi.string().pattern(/^web_search_preview/),
    then: userLocationSchema,
    otherwise: userLocationSchema.fork(['type'], (t) => t.optional()),
  }),
  filters: Joi.object({ allowed_domains: domains }).unknown(true).allow(null),
  search_context_size: Joi.string().valid('low', 'medium', 'high'),
}).unknown(true);
