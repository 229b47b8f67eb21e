/** Gemini's LogprobsResultCandidate (@google/genai): a token and its log probability. */
type Token = { token?: unknown; logProbability?: unknown };
/** Gemini's LogprobsResult: the chosen token of each step and, per step, the top tokens (most likely first). */
export type GeminiLogprobs = { chosenCandidates?: Token[]; topCandidates?: Array<{ candidates?: Token[] }> };

/** What the request asked for: token log probabilities (`logprobs: true`) and how many top tokens a step (`top_logprobs`). */
export type LogprobsAsk = { top: number } | undefined;

export function logprobsAsk(body: Record<string, unknown>): LogprobsAsk {
  if (body.logprobs !== true) return undefined;
  return { top: typeof body.top_logprobs === 'number' ? body.top_logprobs : 0 };
}

/** A token as OpenAI's ChatCompletionTokenLogprob.TopLogprob: `bytes` the token's UTF-8 bytes. */
function entry(t: Token) {
  const token = typeof t?.token === 'string' ? t.token : '';
  return { token, logprob: typeof t?.logProbability === 'number' ? t.logProbability : 0, bytes: [...Buffer.from(token, 'utf8')] };
}

/**
 * A candidate's logprobsResult → an OpenAI choice's `logprobs` (`{content, refusal}`): each chosen
 * token with at most `top` of its step's top tokens (none when `top_logprobs` was not asked for,
 * as OpenAI answers); null when log probabilities were not asked for.
 */
export function chatLogprobs(r: GeminiLogprobs | undefined, ask: LogprobsAsk) {
  if (!ask) return null;
  const steps = Array.isArray(r?.topCandidates) ? r.topCandidates : [];
  const content = (Array.isArray(r?.chosenCandidates) ? r.chosenCandidates : []).map((t, i) => {
    const tops = Array.isArray(steps[i]?.candidates) ? steps[i].candidates! : [];
    return { ...entry(t), top_logprobs: tops.slice(0, ask.top).map(entry) };
  });
  return { content, refusal: null };
}
