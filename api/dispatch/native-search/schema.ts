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

export const anthropicFetchTool = Joi.object({
  ...anthropicServerTool,
  max_content_tokens: Joi.number().integer().min(1).allow(null),
  citations: Joi.object({ enabled: Joi.boolean() }).unknown(true).allow(null),
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
